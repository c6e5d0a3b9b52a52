"""State: keyed state scoped to the current key, operator state, and their snapshots.

Keyed state (``ValueState``, ``ListState``, ``MapState``, ``ReducingState``,
``AggregatingState``) is declared with descriptors on a ``KeyedStateStore``; operator state
(even-split and union list state, broadcast state) on an ``OperatorStateStore``. Both take
consistent snapshots cheaply on the event loop; ``KeyedStateSnapshot.by_key_group`` turns a
keyed snapshot into plain data off the event loop. A ``StateBackend`` chooses where keyed state
lives: ``MemoryStateBackend`` (heap) or ``RocksDBStateBackend`` (disk, extra ``rocksdb``; its
store is ``lockgate.engine.state.rocksdb_store.RocksDBKeyedStateStore``).
"""

from lockgate.engine.state.aggregate_function import AggregateFunction
from lockgate.engine.state.aggregating_state import AggregatingState
from lockgate.engine.state.backend import (
    KeyedSnapshot,
    KeyedStateBackend,
    KeyedStateBackendSpec,
    MemoryStateBackend,
    RocksDBStateBackend,
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
from lockgate.engine.state.keyed import KeyedStateRestore, KeyedStateStatistics, KeyedStateStore
from lockgate.engine.state.keyed_snapshot import KeyedStateSnapshot
from lockgate.engine.state.list_state import ListState
from lockgate.engine.state.map_state import MapState
from lockgate.engine.state.operator_state import OperatorStateSnapshot, OperatorStateStore
from lockgate.engine.state.reducing_state import ReducingState
from lockgate.engine.state.ttl import StateTtlConfig
from lockgate.engine.state.value_state import ValueState

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
