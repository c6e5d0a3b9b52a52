import pickle

import pytest

from lockgate.engine.checkpointing.channel_state import ChannelId
from lockgate.engine.checkpointing.snapshots import (
    SINK_STATE,
    SPLITS_STATE,
    OperatorSnapshot,
    decode_snapshot,
    encode_snapshot,
    encode_snapshot_measured,
)
from lockgate.engine.errors import CorruptCheckpoint
from lockgate.engine.io.sources import SourceSplit


def full_snapshot() -> OperatorSnapshot:
    return OperatorSnapshot(
        "sums",
        keyed={3: {"count": {"a": 1, ("b", 2): 2}}},
        lists={SPLITS_STATE: [SourceSplit("part-0", 17)], SINK_STATE: ["txn-4"]},
        unions={"offsets": [1, 2]},
        broadcast={"rules": {"max": 10}},
    )


def test_a_snapshot_survives_encoding_and_decoding() -> None:
    snapshot = full_snapshot()
    assert decode_snapshot(encode_snapshot(snapshot)) == snapshot


def test_a_snapshot_without_values_is_empty() -> None:
    assert OperatorSnapshot("sums").is_empty
    assert OperatorSnapshot("sums", keyed={3: {"count": {}}}, lists={SPLITS_STATE: []}).is_empty


def test_a_snapshot_with_any_value_is_not_empty() -> None:
    assert not full_snapshot().is_empty
    assert not OperatorSnapshot("sums", broadcast={"rules": {"max": 1}}).is_empty


def test_a_delta_without_changes_is_not_empty_it_stands_for_its_base() -> None:
    assert not OperatorSnapshot("sums", is_delta=True).is_empty


def test_decoding_garbage_names_the_location() -> None:
    with pytest.raises(CorruptCheckpoint, match="chk-1/sums-0"):
        decode_snapshot(b"not a pickle", location="chk-1/sums-0")


def test_decoding_another_pickled_object_is_rejected() -> None:
    with pytest.raises(CorruptCheckpoint, match="does not hold an operator snapshot"):
        decode_snapshot(pickle.dumps({"uid": "sums"}))


IN_FLIGHT = OperatorSnapshot(
    "tail",
    lists={"buffer": [1]},
    input_channels={ChannelId(0, 1, 0): [("a", 1), ("a", 2)], ChannelId(0, 0, 0): []},
    output_channels={ChannelId(2, 0, 1): ["x"]},
)


def test_channel_state_survives_encoding_and_decoding() -> None:
    decoded = decode_snapshot(encode_snapshot(IN_FLIGHT))

    assert decoded == IN_FLIGHT
    assert list(decoded.input_channels) == [(0, 1, 0), (0, 0, 0)]
    assert isinstance(next(iter(decoded.output_channels)), ChannelId)


def test_encoding_measures_the_bytes_of_the_channel_state() -> None:
    data, in_flight = encode_snapshot_measured(IN_FLIGHT)
    channels = (IN_FLIGHT.input_channels, IN_FLIGHT.output_channels)

    assert in_flight == len(pickle.dumps(channels, protocol=5))
    assert in_flight < len(data)


def test_a_snapshot_without_channel_state_measures_zero_in_flight_bytes() -> None:
    assert encode_snapshot_measured(full_snapshot())[1] == 0


def test_a_snapshot_holding_only_in_flight_records_is_not_empty() -> None:
    only_channels = OperatorSnapshot("map", output_channels={ChannelId(0, 0, 0): [1]})

    assert only_channels.has_channel_state
    assert not only_channels.is_empty


def test_channels_without_records_are_no_channel_state() -> None:
    idle = OperatorSnapshot("map", input_channels={ChannelId(0, 0, 0): []})

    assert not idle.has_channel_state
    assert idle.is_empty


def test_a_snapshot_written_before_channel_state_existed_still_decodes() -> None:
    snapshot = full_snapshot()
    groups = {group: pickle.dumps(states, protocol=5) for group, states in snapshot.keyed.items()}
    fields = (snapshot.uid, groups, snapshot.lists, snapshot.unions, snapshot.broadcast)
    version_3 = ("lockgate-operator-snapshot/3", *fields, {}, {}, False)

    assert decode_snapshot(pickle.dumps(version_3)) == snapshot


def test_damaged_channel_state_names_the_location() -> None:
    decoded = pickle.loads(encode_snapshot(IN_FLIGHT))
    damaged = pickle.dumps((*decoded[:-1], b"garbage"))

    with pytest.raises(CorruptCheckpoint, match="tail-0 is corrupt: a part cannot be unpickled"):
        decode_snapshot(damaged, location="chk-2/tail-0")
