from dataclasses import replace

import orjson
import pytest

from lockgate.engine.checkpointing.messages import StateHandle
from lockgate.engine.checkpointing.metadata import (
    METADATA_VERSION,
    CheckpointMetadata,
    OperatorStateHandles,
)
from lockgate.engine.errors import (
    CheckpointStorageError,
    CorruptCheckpoint,
    UnsupportedCheckpointVersion,
)

HANDLE = StateHandle("/base/job/chk-3/sums-0", 120, "sha256:ab12")


def metadata() -> CheckpointMetadata:
    operators = {
        "sums": OperatorStateHandles(2, (HANDLE, None)),
        "naïve-uid": OperatorStateHandles(1, (None,)),
    }
    return CheckpointMetadata("orders", 3, 1712.25, 128, operators)


def test_metadata_survives_a_round_trip() -> None:
    assert CheckpointMetadata.from_bytes(metadata().to_bytes()) == metadata()


def test_savepoint_metadata_survives_a_round_trip() -> None:
    savepoint = replace(metadata(), is_savepoint=True)
    assert CheckpointMetadata.from_bytes(savepoint.to_bytes()).is_savepoint


def test_metadata_is_json_with_a_format_version_and_a_checksum() -> None:
    envelope = orjson.loads(metadata().to_bytes())
    assert envelope["version"] == METADATA_VERSION
    assert envelope["checksum"].startswith("sha256:")
    assert envelope["content"]["operators"]["sums"]["handles"][1] is None


def test_flipping_any_byte_is_detected() -> None:
    data = metadata().to_bytes()
    for position in range(len(data)):
        damaged = data[:position] + bytes([data[position] ^ 0x01]) + data[position + 1 :]
        with pytest.raises(CheckpointStorageError):
            CheckpointMetadata.from_bytes(damaged)


def test_changed_content_fails_the_checksum_and_names_the_location() -> None:
    envelope = orjson.loads(metadata().to_bytes())
    envelope["content"]["checkpoint_id"] = 4
    with pytest.raises(CorruptCheckpoint, match=r"/chk-3/_metadata.*checksum"):
        CheckpointMetadata.from_bytes(orjson.dumps(envelope), location="/chk-3/_metadata")


def test_a_file_that_is_not_json_is_corrupt() -> None:
    with pytest.raises(CorruptCheckpoint, match="not valid JSON"):
        CheckpointMetadata.from_bytes(b"\x80\x05garbage")


def test_json_that_is_not_checkpoint_metadata_is_corrupt() -> None:
    with pytest.raises(CorruptCheckpoint, match="not lockgate checkpoint metadata"):
        CheckpointMetadata.from_bytes(b'{"hello": "world"}')


def test_an_unknown_format_version_is_refused_with_both_versions_named() -> None:
    with pytest.raises(UnsupportedCheckpointVersion, match=r"version 99.*reads versions up to 2"):
        CheckpointMetadata.from_bytes(replace(metadata(), version=99).to_bytes())


def test_an_operator_needs_one_handle_slot_per_subtask() -> None:
    with pytest.raises(ValueError, match="needs 2 state handle slots; got 1"):
        OperatorStateHandles(2, (None,))


def test_the_state_size_adds_every_handle() -> None:
    assert metadata().state_size == 120
