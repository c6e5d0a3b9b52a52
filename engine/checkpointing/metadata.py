"""CheckpointMetadata: the file whose presence makes a checkpoint exist.

It records, for every operator uid, the parallelism it ran at and one state handle per
subtask. A handle's location is absolute, or (in savepoints, whose files sit beside their
metadata) a bare file name that ``resolved`` makes absolute under the metadata's folder.
It is JSON (never pickle, so reading it runs no code), wrapped in an envelope with
a format name, a format version and the SHA-256 checksum of the content::

    {"format": "lockgate-checkpoint-metadata", "version": 1,
     "checksum": "sha256:...", "content": {...}}
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import orjson

from lockgate.engine.checkpointing.checksum import checksum_of
from lockgate.engine.checkpointing.messages import StateHandle
from lockgate.engine.errors import CorruptCheckpoint, UnsupportedCheckpointVersion

__all__ = ["METADATA_VERSION", "CheckpointMetadata", "OperatorStateHandles"]

METADATA_VERSION = 2
"""The metadata format version this lockgate writes; it reads this one and those before.

Version 2 added the ``shared`` files of incremental snapshots to state handles.
"""

_READABLE_VERSIONS = (1, 2)

_FORMAT = "lockgate-checkpoint-metadata"

_LARGEST_INTEGER = 2**63 - 1  # what every JSON reader holds exactly; orjson, too


@dataclass(frozen=True, slots=True)
class OperatorStateHandles:
    """Where each subtask of one operator wrote its state: one slot per subtask.

    ``handles[i]`` belongs to subtask ``i``; it is ``None`` when that subtask had no state
    for the operator. ``len(handles) == parallelism`` always holds.
    """

    parallelism: int
    handles: tuple[StateHandle | None, ...]

    def __post_init__(self) -> None:
        if len(self.handles) != self.parallelism:
            raise ValueError(
                f"an operator of parallelism {self.parallelism} needs {self.parallelism} "
                f"state handle slots; got {len(self.handles)}"
            )

    @property
    def state_size(self) -> int:
        """Bytes written by all subtasks together."""
        return sum(handle.size for handle in self.handles if handle is not None)


@dataclass(frozen=True, slots=True)
class CheckpointMetadata:
    """What a completed checkpoint holds: job, id, time, and every operator's state handles.

    ``from_bytes(to_bytes())`` returns an equal object; ``from_bytes`` accepts nothing that
    does not carry a known format version and a matching checksum.
    """

    job_name: str
    checkpoint_id: int
    timestamp: float
    max_parallelism: int
    operators: dict[str, OperatorStateHandles] = field(default_factory=dict)
    is_savepoint: bool = False
    version: int = METADATA_VERSION

    @property
    def state_size(self) -> int:
        """Bytes of state written for the checkpoint by all operators."""
        return sum(operator.state_size for operator in self.operators.values())

    def with_relative_handles(self) -> CheckpointMetadata:
        """Return a copy whose handles name their files relative to the metadata's folder.

        For snapshots whose files all sit beside their metadata (savepoints): the folder can
        then be moved or copied and restored from its new place.
        """
        return replace(self, operators=_map_handles(self.operators, _file_name))

    def resolved(self, folder: str) -> CheckpointMetadata:
        """Return a copy whose relative handle locations are made absolute under ``folder``."""
        base = folder.rstrip("/")
        return replace(
            self,
            operators=_map_handles(
                self.operators, lambda location: _resolve_location(base, location)
            ),
        )

    def to_bytes(self) -> bytes:
        """Encode as JSON in the envelope described in the module docstring."""
        content = orjson.dumps(_content(self), option=orjson.OPT_SORT_KEYS)
        envelope = {
            "format": _FORMAT,
            "version": self.version,
            "checksum": checksum_of(content),
            "content": orjson.Fragment(content),
        }
        return orjson.dumps(envelope)

    @classmethod
    def from_bytes(cls, data: bytes, *, location: str = "<bytes>") -> CheckpointMetadata:
        """Decode bytes written by ``to_bytes``.

        Raises:
            CorruptCheckpoint: naming ``location``, when the bytes are not metadata, their
                checksum does not match, or their content has not the shape ``to_bytes``
                writes (every field of its type: ids non-negative integers, flags booleans,
                names strings, the timestamp a finite number).
            UnsupportedCheckpointVersion: when the format version is not one this lockgate
                reads.
        """
        envelope = _envelope(data, location)
        content = orjson.dumps(envelope["content"], option=orjson.OPT_SORT_KEYS)
        if checksum_of(content) != envelope["checksum"]:
            raise CorruptCheckpoint(location, "the checksum of its content does not match")
        try:
            return _metadata(envelope["content"], version=envelope["version"])
        except ValueError as error:
            raise CorruptCheckpoint(location, f"its content is malformed: {error}") from error


def _content(metadata: CheckpointMetadata) -> dict[str, Any]:
    return {
        "job_name": metadata.job_name,
        "checkpoint_id": metadata.checkpoint_id,
        "timestamp": metadata.timestamp,
        "max_parallelism": metadata.max_parallelism,
        "is_savepoint": metadata.is_savepoint,
        "operators": {
            uid: {
                "parallelism": operator.parallelism,
                "handles": [_handle_json(h) for h in operator.handles],
            }
            for uid, operator in metadata.operators.items()
        },
    }


def _map_handles(
    operators: dict[str, OperatorStateHandles], change: Callable[[str], str]
) -> dict[str, OperatorStateHandles]:
    return {
        uid: OperatorStateHandles(
            operator.parallelism,
            tuple(
                None
                if h is None
                else StateHandle(
                    change(h.location),
                    h.size,
                    h.checksum,
                    tuple(replace(s, location=change(s.location)) for s in h.shared),
                    h.is_shared,
                )
                for h in operator.handles
            ),
        )
        for uid, operator in operators.items()
    }


def _file_name(location: str) -> str:
    return location.rstrip("/").rsplit("/", 1)[-1]


def _is_relative(location: str) -> bool:
    return not location.startswith("/") and "://" not in location


def _resolve_location(folder: str, location: str) -> str:
    return f"{folder}/{location}" if _is_relative(location) else location


def _handle_json(handle: StateHandle | None) -> dict[str, Any] | None:
    if handle is None:
        return None
    value: dict[str, Any] = {
        "location": handle.location,
        "size": handle.size,
        "checksum": handle.checksum,
    }
    if handle.shared:
        value["shared"] = [_handle_json(shared) for shared in handle.shared]
    if handle.is_shared:
        value["is_shared"] = True
    return value


def _envelope(data: bytes, location: str) -> dict[str, Any]:
    try:
        envelope = orjson.loads(data)
    except orjson.JSONDecodeError as error:
        raise CorruptCheckpoint(location, f"it is not valid JSON ({error})") from error
    if not isinstance(envelope, dict) or envelope.get("format") != _FORMAT:
        raise CorruptCheckpoint(location, "it is not lockgate checkpoint metadata")
    if envelope.get("version") not in _READABLE_VERSIONS:
        raise UnsupportedCheckpointVersion(
            f"checkpoint metadata {location} has format version {envelope.get('version')!r}; "
            f"this lockgate reads versions up to {METADATA_VERSION}; restore it with the lockgate "
            "version that wrote it"
        )
    if not isinstance(envelope.get("checksum"), str) or "content" not in envelope:
        raise CorruptCheckpoint(location, "it lacks its checksum or content")
    return envelope


def _metadata(content: Any, *, version: int) -> CheckpointMetadata:
    fields = _Fields(_object(content, "content"), "")
    return CheckpointMetadata(
        job_name=_text(fields["job_name"], "job_name"),
        checkpoint_id=_integer(fields["checkpoint_id"], "checkpoint_id"),
        timestamp=_finite(fields["timestamp"], "timestamp"),
        max_parallelism=_integer(fields["max_parallelism"], "max_parallelism", minimum=1),
        operators={
            uid: _operator(value, f"operators[{uid!r}]")
            for uid, value in _object(fields["operators"], "operators").items()
        },
        is_savepoint=_flag(fields["is_savepoint"], "is_savepoint"),
        version=version,
    )


def _operator(value: Any, name: str) -> OperatorStateHandles:
    fields = _Fields(_object(value, name), name)
    handles = _array(fields["handles"], f"{name}.handles")
    return OperatorStateHandles(
        parallelism=_integer(fields["parallelism"], f"{name}.parallelism", minimum=1),
        handles=tuple(
            None if h is None else _handle(h, f"{name}.handles[{i}]") for i, h in enumerate(handles)
        ),
    )


def _handle(value: Any, name: str) -> StateHandle:
    fields = _Fields(_object(value, name), name)
    shared = _array(fields.get("shared", []), f"{name}.shared")
    return StateHandle(
        _text(fields["location"], f"{name}.location"),
        _integer(fields["size"], f"{name}.size"),
        _text(fields["checksum"], f"{name}.checksum"),
        tuple(_handle(item, f"{name}.shared[{i}]") for i, item in enumerate(shared)),
        _flag(fields.get("is_shared", False), f"{name}.is_shared"),
    )


@dataclass(frozen=True, slots=True)
class _Fields:
    """The members of one JSON object of the metadata, named ``name`` in messages."""

    members: dict[str, Any]
    name: str

    def __getitem__(self, key: str) -> Any:
        if key not in self.members:
            raise ValueError(f"{self.name or 'it'} lacks the field {key!r}")
        return self.members[key]

    def get(self, key: str, default: Any) -> Any:
        return self.members.get(key, default)


# The readers below return a decoded JSON value if it has the shape the field needs, else
# raise ValueError naming the field: metadata that passes its checksum is still untrusted.


def _object(value: Any, name: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ValueError(f"{name} must be an object; got {_shown(value)}")
    return value


def _array(value: Any, name: str) -> list[Any]:
    if not isinstance(value, list):
        raise ValueError(f"{name} must be a list; got {_shown(value)}")
    return value


def _text(value: Any, name: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{name} must be a string; got {_shown(value)}")
    return value


def _flag(value: Any, name: str) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be true or false; got {_shown(value)}")
    return value


def _integer(value: Any, name: str, *, minimum: int = 0) -> int:
    # bool is an int in Python, and JSON integers past 64 bits decode as floats: both refused.
    if type(value) is not int or not minimum <= value <= _LARGEST_INTEGER:
        raise ValueError(
            f"{name} must be an integer from {minimum} to {_LARGEST_INTEGER}; got {_shown(value)}"
        )
    return value


def _finite(value: Any, name: str) -> float:
    if type(value) not in (int, float) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number; got {_shown(value)}")
    return float(value)


def _shown(value: Any) -> str:
    return f"{value!r:.60}"
