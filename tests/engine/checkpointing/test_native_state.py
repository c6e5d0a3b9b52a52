"""Native keyed state in operator snapshot files: encoding, older formats, corruption."""

from __future__ import annotations

import pickle
from dataclasses import replace
from pathlib import Path

import pytest

from lockgate.engine.checkpointing.messages import StateHandle
from lockgate.engine.checkpointing.native_state import NativeKeyedState
from lockgate.engine.checkpointing.snapshots import (
    OperatorSnapshot,
    decode_snapshot,
    encode_snapshot,
)
from lockgate.engine.errors import CorruptCheckpoint

SST = StateHandle("/chk/counts/shared/counts-0-run-1-000008.sst", 1234, "crc:1", is_shared=True)


def native_snapshot() -> OperatorSnapshot:
    native = NativeKeyedState(
        "rocksdb",
        {"format": "lockgate-rocksdb-checkpoint", "version": 1},
        files={"000008.sst": SST},
        inline={"CURRENT": b"MANIFEST-000005\n"},
    )
    return OperatorSnapshot("counts", lists={"splits": [1]}, kinds={"n": "value"}, native=native)


def test_a_snapshot_with_native_keyed_state_survives_encoding_and_decoding() -> None:
    snapshot = native_snapshot()
    assert decode_snapshot(encode_snapshot(snapshot)) == snapshot


def test_the_folder_a_restore_downloaded_the_files_into_is_never_stored() -> None:
    snapshot = native_snapshot()
    assert snapshot.native is not None
    downloaded = replace(snapshot, native=replace(snapshot.native, folder=Path("/tmp/restore")))

    assert decode_snapshot(encode_snapshot(downloaded)) == snapshot


def test_a_snapshot_with_native_keyed_state_is_never_empty() -> None:
    assert not OperatorSnapshot("counts", native=NativeKeyedState("rocksdb", {})).is_empty


def test_a_snapshot_file_of_format_3_reads_as_one_without_native_state() -> None:
    groups = {3: pickle.dumps({"n": {"a": 1}})}
    fields = ("lockgate-operator-snapshot/3", "counts", groups, {}, {}, {}, {}, {}, False)

    decoded = decode_snapshot(pickle.dumps(fields))

    assert decoded == OperatorSnapshot("counts", keyed={3: {"n": {"a": 1}}})


def test_native_state_in_an_unknown_format_is_corrupt() -> None:
    fields = list(pickle.loads(encode_snapshot(native_snapshot())))
    fields[-2] = ("lockgate-native-keyed-state/99", "rocksdb", {}, {}, {})

    with pytest.raises(CorruptCheckpoint, match="native keyed state"):
        decode_snapshot(pickle.dumps(tuple(fields)), location="chk-2/counts")
