"""Window-scoped state: keyed state of one key and one window (Flink's window namespace).

A trigger's ``get_partitioned_state`` and a window function's ``context.window_state()``
give the five state handles, scoped to the key of the record and to the window the
``WindowNamespace`` names now. Each state is a keyed ``MapState`` from window to value: a
checkpoint holds it with the key, and rescaling moves it with the key's group. Values are
never changed in place once stored (every write stores a new value, tuple, dict or
accumulator), so snapshots that share them never change. Pure: no event loop.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from lockgate.engine.state import (
    AggregateFunction,
    AggregatingState,
    AggregatingStateDescriptor,
    ListState,
    ListStateDescriptor,
    MapState,
    MapStateDescriptor,
    ReducingState,
    ReducingStateDescriptor,
    StateDescriptor,
    ValueState,
    ValueStateDescriptor,
)
from lockgate.engine.state.descriptors import check_keyed

__all__ = ["WindowNamespace", "WindowScopedStates"]


class WindowNamespace:
    """The window whose state handles read and write now; the runner moves it per call.

    ``visit`` counts the ``enter`` calls: state read back within one visit of a window is
    what that visit wrote.
    """

    __slots__ = ("state_key", "visit", "window")

    def __init__(self) -> None:
        self.window: Any = None
        self.state_key: Any = None
        self.visit = 0

    def enter(self, window: Any, state_key: Any) -> None:
        """Scope the handles to ``window`` (stored under ``state_key``)."""
        self.window = window
        self.state_key = state_key
        self.visit += 1


class _Slot:
    """One named state: a keyed map from window state key to the window's value."""

    __slots__ = ("_name", "_namespace", "_table")

    def __init__(self, table: MapState[Any, Any], namespace: WindowNamespace, name: str) -> None:
        self._table = table
        self._namespace = namespace
        self._name = name

    def _read(self) -> Any:
        return self._table.get(self._namespace.state_key)

    def _write(self, value: Any) -> None:
        self._table.put(self._namespace.state_key, value)

    def _drop(self) -> None:
        self._table.remove(self._namespace.state_key)

    def merge_into(self, target: Any, sources: Iterable[Any]) -> None:
        """Fold this state of ``sources`` (windows' state keys) into ``target``'s."""
        raise TypeError(
            f"state '{self._name}' is a {type(self).__name__.removeprefix('_Window')}, which "
            "cannot merge; merge_partitioned_state takes reducing, aggregating or list state"
        )

    def _folded(self, target: Any, sources: Iterable[Any], fold: Callable[[Any, Any], Any]) -> None:
        table = self._table
        merged = table.get(target)
        for source in sources:
            part = table.get(source)
            if part is not None:
                merged = part if merged is None else fold(merged, part)
            table.remove(source)
        if merged is not None:
            table.put(target, merged)


class _WindowValueState(_Slot, ValueState[Any]):
    __slots__ = ("_default",)

    def __init__(self, table: Any, namespace: WindowNamespace, name: str, default: Any) -> None:
        super().__init__(table, namespace, name)
        self._default = default

    def value(self) -> Any:
        stored = self._read()
        return self._default if stored is None else stored

    def update(self, value: Any) -> None:
        if value is None:
            self._drop()
        else:
            self._write(value)

    def clear(self) -> None:
        self._drop()


class _WindowListState(_Slot, ListState[Any]):
    __slots__ = ()

    def get(self) -> list[Any]:
        return list(self._read() or ())

    def add(self, value: Any) -> None:
        self._write((*(self._read() or ()), value))

    def add_all(self, values: Iterable[Any]) -> None:
        added = tuple(values)
        if added:
            self._write((*(self._read() or ()), *added))

    def update(self, values: Iterable[Any]) -> None:
        stored = tuple(values)
        if stored:
            self._write(stored)
        else:
            self._drop()

    def clear(self) -> None:
        self._drop()

    def merge_into(self, target: Any, sources: Iterable[Any]) -> None:
        self._folded(target, sources, lambda a, b: (*a, *b))


class _WindowMapState(_Slot, MapState[Any, Any]):
    __slots__ = ()

    def _entries(self) -> dict[Any, Any]:
        return self._read() or {}

    def get(self, key: Any) -> Any:
        return self._entries().get(key)

    def put(self, key: Any, value: Any) -> None:
        self._write({**self._entries(), key: value})

    def put_all(self, entries: Mapping[Any, Any]) -> None:
        if entries:
            self._write({**self._entries(), **entries})

    def remove(self, key: Any) -> None:
        entries = self._entries()
        if key not in entries:
            return
        rest = {k: v for k, v in entries.items() if k != key}
        if rest:
            self._write(rest)
        else:
            self._drop()

    def contains(self, key: Any) -> bool:
        return key in self._entries()

    def keys(self) -> list[Any]:
        return list(self._entries())

    def values(self) -> list[Any]:
        return list(self._entries().values())

    def items(self) -> list[tuple[Any, Any]]:
        return list(self._entries().items())

    def is_empty(self) -> bool:
        return not self._entries()

    def clear(self) -> None:
        self._drop()


class _WindowReducingState(_Slot, ReducingState[Any]):
    # ``add`` then ``get`` in one visit of a window (a count trigger's way) reads state once:
    # ``_added`` keeps what ``add`` stored in the namespace's current visit.
    __slots__ = ("_added", "_reduce")

    def __init__(self, table: Any, namespace: WindowNamespace, name: str, reduce: Any) -> None:
        super().__init__(table, namespace, name)
        self._reduce: Callable[[Any, Any], Any] = reduce
        self._added: tuple[int, Any] | None = None

    def get(self) -> Any:
        added = self._added
        if added is not None and added[0] == self._namespace.visit:
            return added[1]
        return self._table.get(self._namespace.state_key)

    def add(self, value: Any) -> None:
        namespace, table = self._namespace, self._table
        state_key = namespace.state_key
        previous = table.get(state_key)
        reduced = value if previous is None else self._reduce(previous, value)
        table.put(state_key, reduced)
        self._added = (namespace.visit, reduced)

    def clear(self) -> None:
        self._added = None
        self._drop()

    def merge_into(self, target: Any, sources: Iterable[Any]) -> None:
        self._added = None
        self._folded(target, sources, self._reduce)


class _WindowAggregatingState(_Slot, AggregatingState[Any, Any]):
    __slots__ = ("_function",)

    def __init__(self, table: Any, namespace: WindowNamespace, name: str, function: Any) -> None:
        super().__init__(table, namespace, name)
        self._function: AggregateFunction[Any, Any, Any] = function

    def get(self) -> Any:
        accumulator = self._read()
        return None if accumulator is None else self._function.get_result(accumulator)

    def add(self, value: Any) -> None:
        # a stored accumulator may be shared with a snapshot: add to a copy
        stored = self._read()
        function = self._function
        accumulator = function.create_accumulator() if stored is None else copy.deepcopy(stored)
        self._write(function.add(value, accumulator))

    def clear(self) -> None:
        self._drop()

    def merge_into(self, target: Any, sources: Iterable[Any]) -> None:
        merge = self._function.merge
        self._folded(target, sources, lambda a, b: merge(copy.deepcopy(a), b))


class WindowScopedStates:
    """The window-scoped states of one user (a trigger, or a window function).

    Each state is a keyed ``MapState`` named ``<prefix>/<name>`` (window state key ->
    value), declared on first use. ``get_state`` returns a handle per descriptor (the same
    one again for the same name); ``remove_window`` drops a window's entry in every state
    declared so far. Per-window state takes no TTL: it lives as long as its window.
    """

    __slots__ = ("_declared", "_handles", "_map_state", "_namespace", "_prefix", "_tables")

    def __init__(
        self,
        map_state: Callable[[MapStateDescriptor[Any, Any]], MapState[Any, Any]],
        prefix: str,
        namespace: WindowNamespace,
    ) -> None:
        self._map_state = map_state
        self._prefix = prefix
        self._namespace = namespace
        self._handles: dict[str, Any] = {}
        self._declared: dict[str, StateDescriptor] = {}
        self._tables: list[MapState[Any, Any]] = []

    def get_state(self, descriptor: StateDescriptor) -> Any:
        """The handle on ``descriptor``'s state for the current key and window.

        Raises:
            ValueError: the name was declared before with another descriptor, or with a TTL.
            TypeError: ``descriptor`` is not one of the five keyed state descriptors.
        """
        handle = self._handles.get(descriptor.name)
        if handle is not None:
            known = self._declared[descriptor.name]
            if known is descriptor or known == descriptor:
                return handle
        return self._declare(descriptor)

    def get_list_state(self, descriptor: ListStateDescriptor[Any]) -> ListState[Any]:
        """The ``ListState`` ``descriptor`` declares (PyFlink's name)."""
        return self.get_state(descriptor)  # type: ignore[no-any-return]

    def get_map_state(self, descriptor: MapStateDescriptor[Any, Any]) -> MapState[Any, Any]:
        """The ``MapState`` ``descriptor`` declares (PyFlink's name)."""
        return self.get_state(descriptor)  # type: ignore[no-any-return]

    def get_reducing_state(self, descriptor: ReducingStateDescriptor[Any]) -> ReducingState[Any]:
        """The ``ReducingState`` ``descriptor`` declares (PyFlink's name)."""
        return self.get_state(descriptor)  # type: ignore[no-any-return]

    def get_aggregating_state(
        self, descriptor: AggregatingStateDescriptor[Any, Any, Any]
    ) -> AggregatingState[Any, Any]:
        """The ``AggregatingState`` ``descriptor`` declares (PyFlink's name)."""
        return self.get_state(descriptor)  # type: ignore[no-any-return]

    def merge(self, descriptor: StateDescriptor, target: Any, sources: Iterable[Any]) -> None:
        """Fold ``descriptor``'s state of the windows ``sources`` into ``target``'s."""
        self.get_state(descriptor).merge_into(target, sources)

    def remove_window(self, state_key: Any) -> None:
        """Drop every state (declared so far) of the window stored under ``state_key``."""
        self._namespace.visit += 1  # what this visit wrote is gone
        for table in self._tables:
            table.remove(state_key)

    def _declare(self, descriptor: StateDescriptor) -> Any:
        name = descriptor.name
        known = self._declared.get(name)
        if known is not None:
            raise ValueError(
                f"window state '{name}' was declared twice, differently: {known} and "
                f"{descriptor}; give each state its own name"
            )
        if descriptor.ttl is not None:
            raise ValueError(
                f"window state '{name}' has a TTL; per-window state lives as long as its "
                "window: declare it without ttl="
            )
        handle = self._handle(descriptor)
        self._handles[name], self._declared[name] = handle, descriptor
        return handle

    def _handle(self, descriptor: StateDescriptor) -> Any:
        check_keyed(descriptor)
        namespace, name = self._namespace, descriptor.name
        table = self._map_state(MapStateDescriptor[Any, Any](f"{self._prefix}/{name}"))
        self._tables.append(table)
        match descriptor:
            case ValueStateDescriptor():
                return _WindowValueState(table, namespace, name, descriptor.default)
            case ListStateDescriptor():
                return _WindowListState(table, namespace, name)
            case MapStateDescriptor():
                return _WindowMapState(table, namespace, name)
            case ReducingStateDescriptor():
                return _WindowReducingState(table, namespace, name, descriptor.reduce_function)
            case AggregatingStateDescriptor():
                return _WindowAggregatingState(
                    table, namespace, name, descriptor.aggregate_function
                )
        raise AssertionError(descriptor)  # check_keyed allows only the five above
