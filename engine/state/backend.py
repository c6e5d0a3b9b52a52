"""State backends: where an operator subtask keeps its keyed state (Flink's StateBackend).

``KeyedStateBackend`` is what an operator and its user functions see of their keyed state,
whichever backend holds it; ``KeyedSnapshot`` is what its ``snapshot`` returns. A
``StateBackend`` builds one keyed state backend per operator subtask and attempt:
``MemoryStateBackend`` keeps state in dicts on the heap (``KeyedStateStore``),
``RocksDBStateBackend`` (extra ``rocksdb``) keeps it on disk (``RocksDBKeyedStateStore``).
A keyed state backend that can also capture its state as its own files, for incremental
checkpoints, implements ``NativeSnapshots`` (``native_snapshot``) too.
"""

from __future__ import annotations

import importlib
import os
import tempfile
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar, overload

from lockgate.engine.state.aggregating_state import AggregatingState
from lockgate.engine.state.descriptors import (
    AggregatingStateDescriptor,
    ListStateDescriptor,
    MapStateDescriptor,
    ReducingStateDescriptor,
    StateDescriptor,
    ValueStateDescriptor,
)
from lockgate.engine.state.keyed import KeyedStateStatistics, KeyedStateStore
from lockgate.engine.state.list_state import ListState
from lockgate.engine.state.map_state import MapState
from lockgate.engine.state.reducing_state import ReducingState
from lockgate.engine.state.rocksdb_options import CompactionStyle, RocksDBOptions
from lockgate.engine.state.value_state import ValueState
from lockgate.engine.time.clock import Clock

__all__ = [
    "KeyedSnapshot",
    "KeyedStateBackend",
    "KeyedStateBackendSpec",
    "MemoryStateBackend",
    "RocksDBStateBackend",
    "StateBackend",
    "state_backend_for",
]

V = TypeVar("V")
UK = TypeVar("UK")
UV = TypeVar("UV")
IN = TypeVar("IN")
ACC = TypeVar("ACC")
OUT = TypeVar("OUT")

KeyGroups = dict[int, dict[str, dict[Any, Any]]]


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
        """A folder name unique to this operator subtask and attempt of this run."""
        parts = (self.job_name, self.run_id, f"a{self.attempt}", self.uid, str(self.subtask_index))
        return "lockgate-" + "-".join(_safe(part) for part in parts)


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


class RocksDBStateBackend:
    """Keeps keyed state on disk in RocksDB (extra ``rocksdb``): state larger than memory.

    Each operator subtask and attempt gets a database folder of its own under ``path`` (the
    system's temporary folder by default), deleted when the operator closes, with the
    RocksDB checkpoints of incremental checkpoints beside it until they are uploaded.
    Databases are opened only by operators that keep keyed state. They compact with
    ``compaction_style`` (``"level"``, the default, or ``"universal"``: Flink's
    ``state.backend.rocksdb.compaction.style``) once ``level0_compaction_trigger`` level-0
    files pile up (RocksDB's default 4); ``options`` holds both, validated when the backend
    is made (see ``RocksDBOptions``). A restore that keeps a subtask's key-group range opens
    the files of its incremental (RocksDB) checkpoint as the subtask's database, downloaded
    into a folder under ``path`` first (``native_restore_folder``).
    """

    name = "rocksdb"

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        compaction_style: CompactionStyle = "level",
        level0_compaction_trigger: int = 4,
    ) -> None:
        """Keep databases under ``path``, tuned as the keyword options say.

        Raises:
            ValueError: an unknown or ``"fifo"`` compaction style, or a trigger below 1.
        """
        self.path = Path(tempfile.gettempdir() if path is None else path)
        self.options = RocksDBOptions(compaction_style, level0_compaction_trigger)

    def create_keyed_state_backend(self, spec: KeyedStateBackendSpec) -> KeyedStateBackend:
        """Return a new ``RocksDBKeyedStateStore`` in a folder of its own under ``path``."""
        from lockgate.engine.state.rocksdb_store import RocksDBKeyedStateStore

        return RocksDBKeyedStateStore(
            self.path / spec.folder_name,
            spec.clock,
            max_parallelism=spec.max_parallelism,
            owner=spec.owner,
            options=self.options,
        )

    def native_restore_folder(self, backend: str) -> Path | None:
        """Return a new folder under ``path`` for a RocksDB checkpoint's files; else ``None``.

        A subtask's store then moves the folder to its own (a rename: one file system).
        """
        if backend != self.name:
            return None
        self.path.mkdir(parents=True, exist_ok=True)
        return Path(tempfile.mkdtemp(prefix="lockgate-restore-", dir=self.path))

    def __repr__(self) -> str:
        return (
            f"RocksDBStateBackend(path={str(self.path)!r}, "
            f"compaction_style={self.options.compaction_style!r}, "
            f"level0_compaction_trigger={self.options.level0_compaction_trigger})"
        )


def state_backend_for(
    name: str,
    *,
    path: str | os.PathLike[str] | None = None,
    compaction_style: CompactionStyle | None = None,
    level0_compaction_trigger: int | None = None,
) -> StateBackend:
    """Return the state backend called ``name``: ``"memory"`` or ``"rocksdb"`` (under ``path``).

    The RocksDB options are ``RocksDBStateBackend``'s; ``None`` leaves RocksDB's default.

    Raises:
        ValueError: an unknown name, an invalid RocksDB option, or a ``path`` or a RocksDB
            option for the memory backend.
        ImportError: ``"rocksdb"`` without its extra installed.
    """
    if name == "memory":
        _check_nothing_for_rocksdb(
            path=path,
            compaction_style=compaction_style,
            level0_compaction_trigger=level0_compaction_trigger,
        )
        return MemoryStateBackend()
    if name == "rocksdb":
        backend = _rocksdb_backend(path, compaction_style, level0_compaction_trigger)
        _check_rocksdb_installed()
        return backend
    raise ValueError(f"unknown state backend {name!r}; use 'memory' or 'rocksdb'")


def _rocksdb_backend(
    path: str | os.PathLike[str] | None, style: CompactionStyle | None, trigger: int | None
) -> RocksDBStateBackend:
    default = RocksDBOptions()
    return RocksDBStateBackend(
        path,
        compaction_style=default.compaction_style if style is None else style,
        level0_compaction_trigger=default.level0_compaction_trigger if trigger is None else trigger,
    )


def _check_nothing_for_rocksdb(path: object, **options: object) -> None:
    if path is not None:
        raise ValueError("the memory state backend keeps state on the heap; it takes no path")
    given = [option for option, value in options.items() if value is not None]
    if given:
        raise ValueError(
            "the memory state backend keeps state on the heap; it takes no RocksDB options "
            f"({', '.join(given)}); use set_state_backend('rocksdb', ...) for them"
        )


def _check_rocksdb_installed() -> None:
    try:
        importlib.import_module("lockgate.engine.state.rocksdb_store")
    except ImportError as error:
        raise ImportError(
            f"the RocksDB state backend needs rocksdict ({error}); "
            "install the extra: pip install 'lockgate[rocksdb]'",
            name=error.name,
        ) from error


def _safe(part: str) -> str:
    return "".join(c if c.isalnum() or c in "._" else "_" for c in part)
