"""The canonical savepoint state file: versioned, backend-independent, and never runs code."""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import msgpack
import pytest

from lockgate.engine.checkpointing.channel_state import ChannelId
from lockgate.engine.checkpointing.snapshots import OperatorSnapshot, encode_snapshot
from lockgate.engine.errors import SavepointEncodingError, SavepointFormatError
from lockgate.engine.functions.two_inputs import SecondInput
from lockgate.engine.io.sources import SourceSplit
from lockgate.engine.savepoints.format import (
    ENGINE_TYPES,
    FORMAT_VERSION,
    MAGIC,
    decode_savepoint_state,
    encode_savepoint_state,
    is_savepoint_state,
)
from lockgate.engine.savepoints.values import ValueCodec
from tests.engine.savepoints.test_values import Point, TouchesMarker

SNAPSHOT = OperatorSnapshot(
    "sums",
    keyed={
        0: {"total": {"a": 1, ("b", 2): 2}, "seen": {"a": {1, 2}}},
        5: {"total": {7: 3, None: (4,)}},
    },
    lists={"buffer": [1, (2, 3)]},
    unions={"offsets": [{"partition": 0}]},
    broadcast={"rules": {("r", 1): [True]}},
    kinds={"total": "value", "seen": "value"},
)


def encode(snapshot: OperatorSnapshot) -> bytes:
    return encode_savepoint_state(snapshot, ValueCodec())


def decode(data: bytes, codec: ValueCodec | None = None) -> OperatorSnapshot:
    return decode_savepoint_state(data, codec or ValueCodec(), location="chk-7/sums-0")


class CountingCodec(ValueCodec):
    """Counts encode calls: each one holds the GIL for as long as it runs."""

    calls = 0

    def encode(self, value: Any) -> bytes:
        self.calls += 1
        return super().encode(value)


def test_a_snapshot_round_trips_every_kind_of_state() -> None:
    assert decode(encode(SNAPSHOT)) == SNAPSHOT


def test_an_empty_snapshot_round_trips() -> None:
    assert decode(encode(OperatorSnapshot("empty"))) == OperatorSnapshot("empty")


def test_source_splits_round_trip_without_registering_them() -> None:
    snapshot = OperatorSnapshot("numbers", lists={"__splits__": [SourceSplit("0", 600)]})

    assert decode(encode(snapshot)) == snapshot


def test_a_join_windows_right_records_round_trip_without_registering_them() -> None:
    window = {("a",): {(0.0, 10.0): [("a", 1.0), SecondInput(("a", 2.0))]}}
    snapshot = OperatorSnapshot("paid", keyed={3: {"window-contents": window}})

    assert decode(encode(snapshot)) == snapshot


def test_the_file_starts_with_the_magic_and_the_format_version() -> None:
    data = encode(SNAPSHOT)

    assert data[: len(MAGIC) + 1] == MAGIC + bytes([FORMAT_VERSION])


def test_canonical_files_are_told_apart_from_pickled_checkpoint_files() -> None:
    assert is_savepoint_state(encode(SNAPSHOT))
    assert not is_savepoint_state(encode_snapshot(SNAPSHOT))


def test_the_body_is_plain_messagepack_that_any_reader_can_parse() -> None:
    unpacker = msgpack.Unpacker(strict_map_key=False)
    unpacker.feed(encode(SNAPSHOT)[len(MAGIC) + 1 :])

    header, *records = list(unpacker)

    assert header == {"uid": "sums", "kinds": SNAPSHOT.kinds, "records": len(records)}
    assert ["keyed", 5, "total", [[7, 3], [None, msgpack.ExtType(2, b"\x91\x04")]]] in records


def test_keyed_state_is_encoded_one_key_group_and_state_per_codec_call() -> None:
    codec = CountingCodec(ENGINE_TYPES)
    keyed = {group: {"a": {"k": 1}, "b": {"k": 2}} for group in range(4)}

    encode_savepoint_state(OperatorSnapshot("sums", keyed, lists={"l": [1]}), codec)

    assert codec.calls == 1 + 4 * 2 + 1  # the header, 4 key groups x 2 states, the list


def test_a_value_without_a_codec_fails_naming_the_uid_state_key_group_and_type() -> None:
    snapshot = OperatorSnapshot("sums", keyed={3: {"total": {"a": Point(1, ())}}})

    expected = r"operator 'sums', state 'total' \(key group 3\): .*Point"
    with pytest.raises(SavepointEncodingError, match=expected):
        encode(snapshot)


def test_a_value_without_a_codec_in_list_state_names_the_state() -> None:
    snapshot = OperatorSnapshot("sink", lists={"__sink__": [object()]})

    with pytest.raises(SavepointEncodingError, match="operator 'sink', list state '__sink__'"):
        encode(snapshot)


def test_a_file_of_a_newer_format_version_is_refused_clearly() -> None:
    data = bytearray(encode(SNAPSHOT))
    data[len(MAGIC)] = FORMAT_VERSION + 1

    expected = r"chk-7/sums-0: .*format version 2, written by a newer lockgate"
    with pytest.raises(SavepointFormatError, match=expected):
        decode(bytes(data))


def test_a_pickled_checkpoint_file_is_not_decoded_as_savepoint_state() -> None:
    with pytest.raises(SavepointFormatError, match="it is not savepoint state"):
        decode(encode_snapshot(SNAPSHOT))


@pytest.mark.parametrize("cut", [1, 12], ids=["inside a record", "a whole record"])
def test_a_truncated_file_is_refused(cut: int) -> None:
    snapshot = OperatorSnapshot("sums", keyed={0: {"total": {"a": "x" * 10}}})

    with pytest.raises(SavepointFormatError, match=r"truncated|announces 1 records; it holds 0"):
        decode(encode(snapshot)[:-cut])


def tampered(marker: Path) -> bytes:
    """An honest file in which one value was replaced by a pickle that touches ``marker``."""
    honest = encode(OperatorSnapshot("sums", keyed={0: {"total": {"a": "harmless"}}}))
    payload = msgpack.packb(["builtins.str", pickle.dumps(TouchesMarker(marker))])
    malicious = msgpack.packb(msgpack.ExtType(6, payload))
    data = honest.replace(msgpack.packb("harmless"), malicious)
    assert data != honest
    return data


def test_a_pickled_value_in_a_savepoint_is_refused_and_never_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"

    expected = r"pickled value .*not read, because unpickling runs code.*allow_pickle=True"
    with pytest.raises(SavepointFormatError, match=expected):
        decode(tampered(marker))

    assert not marker.exists()


def test_the_same_pickled_value_runs_when_pickle_is_allowed(tmp_path: Path) -> None:
    marker = tmp_path / "ran"

    snapshot = decode(tampered(marker), ValueCodec(allow_pickle=True))

    assert marker.exists()
    assert snapshot.keyed == {0: {"total": {"a": None}}}  # what Path.touch returned


def test_a_savepoint_never_holds_in_flight_records() -> None:
    snapshot = OperatorSnapshot("sums", input_channels={ChannelId(0, 0, 0): [1]})

    with pytest.raises(ValueError, match="'sums': a savepoint holds no in-flight records"):
        encode_savepoint_state(snapshot, ValueCodec())
