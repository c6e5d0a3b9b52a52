"""State: keyed state scoped to the current key, operator state, and their snapshots.

Keyed state (``ValueState``, ``ListState``, ``MapState``, ``ReducingState``,
``AggregatingState``) is declared with descriptors on a ``KeyedStateStore``; operator state
(even-split and union list state, broadcast state) on an ``OperatorStateStore``. Both take
consistent snapshots cheaply on the event loop; ``KeyedStateSnapshot.by_key_group`` turns a
keyed snapshot into plain data off the event loop. A ``StateBackend`` chooses where keyed state
lives: ``MemoryStateBackend`` (heap) or ``RocksDBStateBackend`` (disk, extra ``rocksdb``; its
store is ``lockgate.engine.state.rocksdb.store.RocksDBKeyedStateStore``).
"""

from lockgate.engine.state.aggregate_function import AggregateFunction
from lockgate.engine.state.backend import (
    KeyedSnapshot,
    KeyedStateBackend,
    KeyedStateBackendSpec,
    KeyedStateRestore,
    KeyedStateStatistics,
    StateBackend,
)
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
from lockgate.engine.state.memory.backend import MemoryStateBackend
from lockgate.engine.state.memory.snapshot import KeyedStateSnapshot
from lockgate.engine.state.memory.store import KeyedStateStore
from lockgate.engine.state.operator_state import OperatorStateSnapshot, OperatorStateStore
from lockgate.engine.state.rocksdb.backend import RocksDBStateBackend
from lockgate.engine.state.ttl import StateTtlConfig

__all__ = [
    "AggregateFunction",
    "AggregatingState",
    "AggregatingStateDescriptor",
    "KeyedSnapshot",
    "KeyedStateBackend",
    "KeyedStateBackendSpec",
    "KeyedStateRestore",
    "KeyedStateSnapshot",
    "KeyedStateStatistics",
    "KeyedStateStore",
    "ListState",
    "ListStateDescriptor",
    "MapState",
    "MapStateDescriptor",
    "MemoryStateBackend",
    "OperatorStateSnapshot",
    "OperatorStateStore",
    "ReducingState",
    "ReducingStateDescriptor",
    "RocksDBStateBackend",
    "StateBackend",
    "StateDescriptor",
    "StateTtlConfig",
    "ValueState",
    "ValueStateDescriptor",
]
