"""StateRegistry: the states of one RocksDB database, by id: name, kind, TTL and declaration.

State ids are private to one database and its RocksDB checkpoints: snapshots of key groups
hold state names, and a RocksDB checkpoint's description maps its ids to names.
"""

from __future__ import annotations

from collections.abc import Mapping

from lockgate.engine.state.descriptors import StateDescriptor
from lockgate.engine.state.rocksdb.database import StateDatabase
from lockgate.engine.state.rocksdb.keys import KeyCodec, state_id_bytes
from lockgate.engine.state.rocksdb.loader import StateLoader
from lockgate.engine.state.rocksdb.snapshot import StateFormat
from lockgate.engine.state.state_kinds import StateKinds

__all__ = ["StateRegistry"]

_RESHAPED_KINDS = ("list", "map")  # stored otherwise than as one pickled value per key


class StateRegistry:
    """Every state a store's database holds entries of: its id and ``StateFormat``.

    Invariant: a name has one id at a time, and ids are never reused (entries of a reshaped
    state may still sit under its old id). A state restored before any declaration named its
    kind holds one pickled value per key; declared as a list or a map, its entries move into
    that kind's layout under a new id. A name declared twice must be declared alike.
    """

    __slots__ = ("_codec", "_database", "_last_id", "declared", "formats", "ids", "kinds")

    def __init__(self, database: StateDatabase, codec: KeyCodec, owner: str | None) -> None:
        self._database = database
        self._codec = codec
        self.kinds = StateKinds(owner)
        self.declared: dict[str, StateDescriptor] = {}
        self.ids: dict[str, bytes] = {}
        self.formats: dict[bytes, StateFormat] = {}  # by state id
        self._last_id = 0

    def declare(self, descriptor: StateDescriptor) -> str:
        """Declare the state ``descriptor`` describes (again, alike) and return its kind.

        Raises:
            ValueError: the name was declared before with another descriptor.
            IncompatibleState: the state was restored as another kind.
        """
        name = descriptor.name
        known = self.declared.get(name)
        if known is not None:
            if known != descriptor:
                raise ValueError(
                    f"state '{name}' was declared twice, differently: {known} and "
                    f"{descriptor}; give each state its own name"
                )
            return self.kinds.kind(name) or ""
        kind = self.kinds.declare(descriptor)
        state_id = self.state_id(name)
        if self.formats[state_id].kind is None and kind in _RESHAPED_KINDS:
            state_id = self._reshape(state_id, kind)
        ttl = None if descriptor.ttl is None else descriptor.ttl.ttl
        self.formats[state_id] = StateFormat(name, kind, ttl)
        self.declared[name] = descriptor
        return kind

    def state_id(self, name: str) -> bytes:
        """Return the id of state ``name``, giving it one (and its known kind) if it has none."""
        state_id = self.ids.get(name)
        if state_id is None:
            state_id = self._new_id(name)
            self.formats[state_id] = StateFormat(name, self.kinds.kind(name))
        return state_id

    def adopt(self, formats: Mapping[bytes, StateFormat], last_id: int) -> None:
        """Take the states of a RocksDB checkpoint's files, which became the database."""
        self.formats = dict(formats)
        self.ids = {state.name: state_id for state_id, state in formats.items()}
        self._last_id = last_id

    def _new_id(self, name: str) -> bytes:
        self._last_id += 1
        state_id = self.ids[name] = state_id_bytes(self._last_id)
        return state_id

    def _reshape(self, state_id: bytes, kind: str) -> bytes:
        """Move a state restored as whole values into the layout of ``kind``, under a new id."""
        name = self.formats.pop(state_id).name
        new_id = self._new_id(name)
        if self._database.is_open:
            loader = StateLoader(self._database.db, self._codec)
            for group in range(self._codec.max_parallelism):
                prefix = group.to_bytes(2, "big")
                loader.convert(prefix + state_id, prefix + new_id, kind)
        return new_id

    def __repr__(self) -> str:
        return f"<StateRegistry {sorted(state.name for state in self.formats.values())}>"
