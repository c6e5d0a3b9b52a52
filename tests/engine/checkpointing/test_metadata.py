from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson
import pytest

from lockgate.engine.checkpointing.checksum import checksum_of
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


def resealed(content_json: bytes) -> bytes:
    """Metadata whose content is ``content_json``, with the checksum anyone can compute."""
    content = orjson.dumps(orjson.loads(content_json), option=orjson.OPT_SORT_KEYS)
    return orjson.dumps(
        {
            "format": "lockgate-checkpoint-metadata",
            "version": METADATA_VERSION,
            "checksum": checksum_of(content),
            "content": orjson.Fragment(content),
        }
    )


def rewrite_content(metadata_file: Path, change: Callable[[dict[str, Any]], object]) -> None:
    """Change the content of the metadata at ``metadata_file`` and seal it again."""
    content = orjson.loads(metadata_file.read_bytes())["content"]
    change(content)
    metadata_file.write_bytes(resealed(orjson.dumps(content)))


def operators_as_a_list(content: dict[str, Any]) -> None:
    content["operators"] = list(content["operators"].values())


def whole(path: tuple[str | int, ...], value: object) -> bytes:
    root = orjson.loads(metadata().to_bytes())["content"]
    target = root
    *parents, last = path
    for key in parents:
        target = target[key]
    target[last] = value
    return resealed(orjson.dumps(root))


HUGE_ID = (
    b'{"job_name": "orders", "checkpoint_id": 1'
    + b"0" * 308
    + (b', "timestamp": 1.0, "max_parallelism": 128, "is_savepoint": false, "operators": {}}')
)


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (whole(("operators",), [{"parallelism": 1, "handles": [None]}]), "operators must be an"),
        (whole(("checkpoint_id",), -1), "checkpoint_id must be an integer from 0"),
        (whole(("checkpoint_id",), "3"), "checkpoint_id must be an integer"),
        (whole(("checkpoint_id",), True), "checkpoint_id must be an integer"),
        (resealed(HUGE_ID), r"checkpoint_id must be an integer from 0 to \d+; got 1e\+308"),
        (whole(("max_parallelism",), 0), "max_parallelism must be an integer from 1"),
        (whole(("is_savepoint",), "false"), "is_savepoint must be true or false"),
        (whole(("job_name",), 7), "job_name must be a string"),
        (whole(("timestamp",), None), "timestamp must be a finite number"),
        (whole(("operators", "sums", "parallelism"), 2.0), r"operators\['sums'\].parallelism"),
        (whole(("operators", "sums", "handles", 0, "size"), -5), r"handles\[0\].size must be"),
        (whole(("operators", "sums", "handles", 0, "location"), ["a"]), r"location must be a"),
        (whole(("operators", "sums", "handles", 0, "is_shared"), 1), r"is_shared must be true"),
        (whole(("operators", "sums", "handles"), {"0": None}), r"handles must be a list"),
    ],
    ids=[
        "operators-a-list",
        "negative-id",
        "id-a-string",
        "id-a-boolean",
        "id-of-309-digits",
        "no-key-groups",
        "flag-a-string",
        "name-a-number",
        "timestamp-nan-written-as-null",
        "parallelism-a-float",
        "negative-size",
        "location-a-list",
        "is-shared-a-number",
        "handles-an-object",
    ],
)
def test_checksum_valid_content_of_the_wrong_shape_is_corrupt_naming_the_field(
    data: bytes, problem: str
) -> None:
    with pytest.raises(CorruptCheckpoint, match=rf"/chk-3/_metadata is corrupt: .*{problem}"):
        CheckpointMetadata.from_bytes(data, location="/chk-3/_metadata")


def test_a_missing_field_is_named() -> None:
    content = orjson.loads(metadata().to_bytes())["content"]
    del content["operators"]["sums"]["handles"][0]["checksum"]

    with pytest.raises(CorruptCheckpoint, match=r"handles\[0\] lacks the field 'checksum'"):
        CheckpointMetadata.from_bytes(resealed(orjson.dumps(content)))
