"""TtlValueState and TtlReducingState: one value per key that expires after its TTL."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from lockgate.engine.state.memory.reducing_state import HeapReducingState
from lockgate.engine.state.memory.value_state import HeapValueState
from lockgate.engine.state.memory.versioned_table import VersionedTable
from lockgate.engine.state.scope import StateScope
from lockgate.engine.state.ttl import EXPIRED, TtlPolicy, TtlValue

__all__ = ["TtlReducingState", "TtlValueState", "export_value", "restore_value"]

V = TypeVar("V")


def export_value(stored: TtlValue[Any], now: float) -> Any:
    """Return the plain value of a stored ``TtlValue``, or ``EXPIRED`` if it expired by ``now``."""
    return stored.value if stored.expires_at > now else EXPIRED


def restore_value(plain: Any, deadline: float) -> TtlValue[Any]:
    """Return a restored plain value stored to expire at ``deadline``."""
    return TtlValue(plain, deadline)


class TtlValueState(HeapValueState[V]):
    """A ``ValueState`` whose table holds ``TtlValue`` entries; expired values read as absent."""

    __slots__ = ("_policy",)

    def __init__(
        self, scope: StateScope, table: VersionedTable, default: V, policy: TtlPolicy
    ) -> None:
        super().__init__(scope, table, default)
        self._policy = policy

    def value(self) -> V:
        """Return the current key's live value, or the descriptor's default."""
        stored = self._policy.read(self._table, self._scope.current_key)
        return self._default if stored is None else stored.value

    def update(self, value: V) -> None:
        """Set the current key's value with a fresh deadline; ``None`` clears it."""
        if value is None:
            self.clear()
        else:
            self._table[self._scope.current_key] = self._policy.stamp(value)


class TtlReducingState(HeapReducingState[V]):
    """A ``ReducingState`` whose reduced value expires; adding to an expired one starts over."""

    __slots__ = ("_policy",)

    def __init__(
        self,
        scope: StateScope,
        table: VersionedTable,
        reduce_function: Callable[[V, V], V],
        policy: TtlPolicy,
    ) -> None:
        super().__init__(scope, table, reduce_function)
        self._policy = policy

    def get(self) -> V | None:
        """Return the current key's live reduced value, or ``None``."""
        stored = self._policy.read(self._table, self._scope.current_key)
        return None if stored is None else stored.value

    def add(self, value: V) -> None:
        """Fold ``value`` into the current key's live reduced value, refreshing its deadline."""
        key = self._scope.current_key
        previous = self._policy.live(self._table, key)
        reduced = value if previous is None else self._reduce(previous.value, value)
        self._table[key] = self._policy.stamp(reduced)
