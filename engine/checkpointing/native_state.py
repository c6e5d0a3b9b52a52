"""NativeKeyedState: keyed state a checkpoint holds as a state backend's own files."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lockgate.engine.checkpointing.messages import StateHandle
from lockgate.engine.errors import CorruptCheckpoint

__all__ = ["NativeKeyedState"]

_FORMAT = "lockgate-native-keyed-state/1"


@dataclass(frozen=True)
class NativeKeyedState:
    """The keyed state of one subtask as the files of the state backend ``backend``.

    ``files`` maps the name of each immutable file (RocksDB's SST files) to the handle of
    its copy in the job's shared folder, which an earlier checkpoint may have uploaded;
    ``inline`` holds the other, small files whole (RocksDB's MANIFEST, CURRENT, OPTIONS).
    ``description`` is the backend's own account of the files (for RocksDB: state id ->
    name, kind and TTL, the key groups, clock times), which ``native_key_groups`` reads back
    with the files as plain key groups. A restore never opens the files in storage: it reads
    them as key groups, or, for a backend that opens them as they are, downloads every file
    (verified) into a local ``folder``, the only field never stored (``None`` until then).
    """

    backend: str
    description: dict[str, Any]
    files: dict[str, StateHandle] = field(default_factory=dict)
    inline: dict[str, bytes] = field(default_factory=dict)
    folder: Path | None = None

    def to_plain(self) -> tuple[Any, ...]:
        """Return built-in values only (no class of lockgate), for a pickled snapshot file."""
        files = {name: (h.location, h.size, h.checksum) for name, h in self.files.items()}
        return (_FORMAT, self.backend, self.description, files, self.inline)

    @classmethod
    def from_plain(cls, value: Any, *, location: str) -> NativeKeyedState:
        """Return the state ``to_plain`` gave ``value`` for.

        Raises:
            CorruptCheckpoint: naming ``location`` when ``value`` is not such a state.
        """
        if not (isinstance(value, tuple) and len(value) == 5 and value[0] == _FORMAT):
            raise CorruptCheckpoint(location, "its native keyed state is not in a known format")
        _, backend, description, files, inline = value
        handles = {
            name: StateHandle(file_location, size, checksum, is_shared=True)
            for name, (file_location, size, checksum) in files.items()
        }
        return cls(backend, description, handles, inline)
