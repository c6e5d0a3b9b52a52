import pickle

import pytest

from lockgate.engine.checkpointing.errors import CorruptCheckpoint
from lockgate.engine.checkpointing.snapshots import (
    SINK_STATE,
    SPLITS_STATE,
    OperatorSnapshot,
    decode_snapshot,
    encode_snapshot,
)
from lockgate.engine.sources import SourceSplit


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


def test_decoding_garbage_names_the_location() -> None:
    with pytest.raises(CorruptCheckpoint, match="chk-1/sums-0"):
        decode_snapshot(b"not a pickle", location="chk-1/sums-0")


def test_decoding_another_pickled_object_is_rejected() -> None:
    with pytest.raises(CorruptCheckpoint, match="does not hold an operator snapshot"):
        decode_snapshot(pickle.dumps({"uid": "sums"}))
