"""MemoryStateBackend: keyed state in dicts on the heap (the default)."""

from __future__ import annotations

from lockgate.engine.state.backend import KeyedStateBackend, KeyedStateBackendSpec
from lockgate.engine.state.memory.store import KeyedStateStore

__all__ = ["MemoryStateBackend"]


class MemoryStateBackend:
    """Keeps keyed state in dicts on the heap: ``KeyedStateStore`` (the default).

    Snapshots are consistent copies made cheap by copy-on-write; state must fit in memory.
    """

    name = "memory"

    def create_keyed_state_backend(self, spec: KeyedStateBackendSpec) -> KeyedStateBackend:
        """Return a new ``KeyedStateStore`` reading the job's clock."""
        return KeyedStateStore(spec.clock, owner=spec.owner)

    def __repr__(self) -> str:
        return "MemoryStateBackend()"
