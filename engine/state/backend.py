"""State backends' protocols: what every backend gives an operator subtask (Flink's StateBackend).

``KeyedStateBackend`` is what an operator and its user functions see of their keyed state,
whichever backend holds it; ``KeyedSnapshot`` is what its ``snapshot`` returns. A
``StateBackend`` builds one keyed state backend per operator subtask and attempt. The
backends live beside this module, each in its folder: ``memory/`` keeps state in dicts on
the heap, ``rocksdb/`` (extra ``rocksdb``) on disk; ``backends.py`` is the one module that
names both. A keyed state backend that can also capture its state as its own files, for
incremental checkpoints, implements ``NativeSnapshots`` (``native_snapshot``) too.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeVar, overload

from lockgate.engine.state.descriptors import (
    AggregatingStateDescriptor,
    ListStateDescriptor,
    MapStateDescriptor,
    ReducingStateDescriptor,
    StateDescriptor,
    ValueStateDescriptor,
)
from lockgate.engine.state.handles import (
    AggregatingState,
    ListState,
    MapState,
    ReducingState,
    ValueState,
)
from lockgate.engine.state.local_state import run_folder_prefix, safe_name
from lockgate.engine.time.clock import Clock

__all__ = [
    "KeyGroups",
    "KeyedSnapshot",
    "KeyedStateBackend",
    "KeyedStateBackendSpec",
    "KeyedStateRestore",
    "KeyedStateStatistics",
    "StateBackend",
]

V = TypeVar("V")
UK = TypeVar("UK")
UV = TypeVar("UV")
IN = TypeVar("IN")
ACC = TypeVar("ACC")
OUT = TypeVar("OUT")

KeyGroups = dict[int, dict[str, dict[Any, Any]]]


KeyedStateRestore = Literal["none", "key_groups", "files"]
"""How a keyed state backend got its state: not restored, from plain key groups (every value
written into it), or from a native snapshot's files opened as they are (RocksDB)."""


@dataclass(frozen=True, slots=True)
class KeyedStateStatistics:
    """A point-in-time view of one keyed state backend (``KeyedStateStore`` or RocksDB's).

    Attributes:
        states: tables held, declared or restored.
        entries: (state, key) pairs that hold a value (RocksDB: its estimate of entries).
        snapshots: snapshots taken; also the store's current epoch.
        copies_on_write: containers copied because a snapshot could still see them.
        restore: how the state was restored (see ``KeyedStateRestore``).
        versions_held: snapshots not released yet, whose asynchronous part may still read
            the state as it was (memory backend; 0 for RocksDB).
        frozen_layers: layers of earlier versions under the live writes, over all states;
            0 once every snapshot was released and the layers were folded (memory backend).
    """

    states: int
    entries: int
    snapshots: int
    copies_on_write: int
    restore: KeyedStateRestore = "none"
    versions_held: int = 0
    frozen_layers: int = 0


class KeyedSnapshot(Protocol):
    """A consistent view of a subtask's keyed state, taken on the event loop at a barrier.

    It never changes after ``snapshot`` returned, so ``by_key_group`` may run in a worker
    thread while the operator goes on writing to its state.
    """

    @property
    def entries(self) -> int:
        """How many entries the snapshot holds (an estimate for RocksDB)."""

    @property
    def state_names(self) -> frozenset[str]:
        """The names of the states that hold at least one key."""

    @property
    def kinds(self) -> dict[str, str]:
        """State name -> kind, of every declared or restored state."""

    def by_key_group(self, max_parallelism: int) -> KeyGroups:
        """Return key group -> state name -> key -> plain value."""


class KeyedStateBackend(Protocol):
    """The keyed state of one operator subtask, scoped to ``current_key``.

    Both backends give the same results for the same calls: the conformance tests in
    ``tests/engine/state/test_backend_conformance.py`` hold every implementation to it.
    ``close`` releases what the backend holds (a RocksDB folder); it is called once, when
    the operator closes, also after a failure.
    """

    current_key: Any

    @property
    def has_states(self) -> bool:
        """Whether any state was declared or restored (an operator without keyed state)."""

    def table(self, descriptor: StateDescriptor) -> MutableMapping[Any, Any]:
        """Return key -> value of a value state, declaring it on first use."""

    def value_state(self, descriptor: ValueStateDescriptor[V]) -> ValueState[V]:
        """Return the ``ValueState`` declared by ``descriptor``."""

    @overload
    def get_state(self, descriptor: ValueStateDescriptor[V]) -> ValueState[V]: ...
    @overload
    def get_state(self, descriptor: ListStateDescriptor[V]) -> ListState[V]: ...
    @overload
    def get_state(self, descriptor: MapStateDescriptor[UK, UV]) -> MapState[UK, UV]: ...
    @overload
    def get_state(self, descriptor: ReducingStateDescriptor[V]) -> ReducingState[V]: ...
    @overload
    def get_state(
        self, descriptor: AggregatingStateDescriptor[IN, ACC, OUT]
    ) -> AggregatingState[IN, OUT]: ...
    def get_state(self, descriptor: StateDescriptor) -> Any:
        """Return a handle on the state ``descriptor`` declares, scoped to ``current_key``."""

    def key_count(self) -> int:
        """How many distinct keys hold state in any state."""

    def declared_states(self) -> Mapping[str, StateDescriptor]:
        """Every state declared so far (``table`` or ``get_state``), by name."""

    def snapshot(self) -> KeyedSnapshot:
        """Take a consistent view of every state: the synchronous part of a checkpoint."""

    def restore(
        self,
        groups: Mapping[int, Mapping[str, Mapping[Any, Any]]],
        kinds: Mapping[str, str] | None = None,
    ) -> None:
        """Load key group -> state name -> key -> plain value, and the states' kinds."""

    def statistics(self) -> KeyedStateStatistics:
        """Return how many states and entries the backend holds, and its snapshot count."""

    def close(self) -> None:
        """Release everything the backend holds; its state is gone."""


@dataclass(frozen=True, slots=True)
class KeyedStateBackendSpec:
    """Which operator subtask, in which attempt of which job, a keyed state backend serves.

    Every attempt gets new backends: state comes back from the checkpoint, never from the
    backend of a failed attempt.
    """

    job_name: str
    run_id: str
    attempt: int
    uid: str
    subtask_index: int
    max_parallelism: int
    clock: Clock

    @property
    def owner(self) -> str:
        """The operator instance, as error messages name it."""
        return f"operator '{self.uid}'"

    @property
    def folder_name(self) -> str:
        """A folder name unique to this operator subtask and attempt of this run.

        It begins with ``run_folder_prefix(job_name, run_id)``.
        """
        parts = (f"a{self.attempt}", self.uid, str(self.subtask_index))
        prefix = run_folder_prefix(self.job_name, self.run_id)
        return prefix + "-".join(safe_name(part) for part in parts)


class StateBackend(Protocol):
    """Builds the keyed state backend of each operator subtask (Flink's ``StateBackend``).

    Called once per operator subtask and attempt, when the attempt is deployed; the backend
    it returns belongs to the operator, which closes it.
    """

    @property
    def name(self) -> str:
        """The backend's name, as ``StreamEnvironment.set_state_backend`` takes it."""

    def create_keyed_state_backend(self, spec: KeyedStateBackendSpec) -> KeyedStateBackend:
        """Return a new, empty keyed state backend for the subtask ``spec`` names."""
