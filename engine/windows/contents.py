"""WindowContents: what each window of a key holds, by the window's function style.

A window holds one of: the value its ``reduce`` folded so far (``REDUCED``), the
accumulator of its ``aggregate`` (``ACCUMULATOR``), the records a ``process`` function will
get (``RECORDS``), or, when an evictor may remove records, every record with its event time
(``TIMESTAMPED``: ``(value, timestamp)`` pairs). Keyed state (``window-contents``: window
state key -> contents) holds them, so checkpoints, savepoints and rescaling carry them.

Contents a snapshot may still see are never changed in place: the first change of an
accumulator or record list after a snapshot works on a copy (``_owned`` lists the windows
copied since the last snapshot), as Flink's copy-on-write state does. Pure: no event loop.
"""

from __future__ import annotations

import copy
import enum
from collections.abc import Callable, Sequence
from typing import Any

from lockgate.engine.state import KeyedStateBackend, MapState, MapStateDescriptor

__all__ = ["CONTENTS", "EMPTY", "ContentsKind", "WindowContents"]

CONTENTS = MapStateDescriptor[Any, Any]("window-contents")
EMPTY: Any = object()
"""What ``take`` gives for a ``REDUCED`` window holding nothing: its first record is its value."""


class ContentsKind(enum.Enum):
    """How a window keeps what it received."""

    REDUCED = "reduced"
    ACCUMULATOR = "accumulator"
    RECORDS = "records"
    TIMESTAMPED = "timestamped"


class WindowContents:
    """The contents of the current key's windows, by window state key.

    ``get`` returns ``None`` for a window that holds nothing (never received a record, or
    was purged); a ``REDUCED`` window may hold ``None`` as its value only if ``reduce``
    returned it.
    """

    __slots__ = ("_function", "_kind", "_owned", "_store", "_table", "add")

    def __init__(
        self, store: KeyedStateBackend, table: MapState[Any, Any], kind: ContentsKind, function: Any
    ) -> None:
        self._store = store
        self._table = table
        self._kind = kind
        self._function = function
        self._owned: set[tuple[Any, Any]] = set()
        adders = {
            ContentsKind.REDUCED: self._reduce,
            ContentsKind.ACCUMULATOR: self._accumulate,
            ContentsKind.RECORDS: self._append,
            ContentsKind.TIMESTAMPED: self._append_timestamped,
        }
        self.add: Callable[[Any, Any, float | None], None] = adders[kind]
        """Add the record ``value`` (at event time ``timestamp``) to the window ``state_key``."""

    def _reduce(self, state_key: Any, value: Any, timestamp: float | None) -> None:
        table = self._table
        current = table.get(state_key)
        if current is None and not table.contains(state_key):
            table.put(state_key, value)
        else:
            table.put(state_key, self._function(current, value))

    def _accumulate(self, state_key: Any, value: Any, timestamp: float | None) -> None:
        table = self._table
        current = table.get(state_key)
        if current is None or (self._store.current_key, state_key) not in self._owned:
            current = self._own(state_key, current)
        table.put(state_key, self._function.add(value, current))

    def _append(self, state_key: Any, value: Any, timestamp: float | None) -> None:
        table = self._table
        current = table.get(state_key)
        if current is None or (self._store.current_key, state_key) not in self._owned:
            current = self._own(state_key, current)
        current.append(value)
        table.put(state_key, current)

    def _append_timestamped(self, state_key: Any, value: Any, timestamp: float | None) -> None:
        table = self._table
        current = self._own(state_key, table.get(state_key))
        current.append((value, timestamp))
        table.put(state_key, current)

    def take(self, state_key: Any) -> Any:
        """The window's contents, ready to fold a record into; store the result with ``put``.

        For ``REDUCED`` windows the value (``EMPTY`` when it holds nothing); for
        ``ACCUMULATOR`` and ``RECORDS`` ones an accumulator or a list this epoch owns, which
        may change in place (a copy of one a snapshot may share, or a new one). The
        per-record ``add`` does the same, record by record.
        """
        table = self._table
        current = table.get(state_key)
        if self._kind is ContentsKind.REDUCED:
            return EMPTY if current is None and not table.contains(state_key) else current
        if current is None or (self._store.current_key, state_key) not in self._owned:
            current = self._own(state_key, current)
        return current

    def put(self, state_key: Any, contents: Any) -> None:
        """Store what the window holds now: a value or accumulator from ``take``, folded."""
        self._table.put(state_key, contents)

    def get(self, state_key: Any) -> Any:
        """What the window holds, or ``None``; never change it in place."""
        return self._table.get(state_key)

    def holds(self, state_key: Any) -> bool:
        """Whether the window holds anything."""
        return self._table.contains(state_key)

    def replace_records(self, state_key: Any, records: list[tuple[Any, float | None]]) -> None:
        """Keep only ``records``, ``(value, timestamp)`` pairs: what the evictor left."""
        if records:
            self._table.put(state_key, records)
            self._owned.add((self._store.current_key, state_key))
        else:
            self.clear(state_key)

    def clear(self, state_key: Any) -> None:
        """Empty the window."""
        self._table.remove(state_key)
        self._owned.discard((self._store.current_key, state_key))

    def merge(self, target: Any, sources: Sequence[Any]) -> None:
        """Move the contents of the windows ``sources`` (in order) into the new ``target``."""
        parts = [self._table.get(source) for source in sources if self._table.contains(source)]
        for source in sources:
            self.clear(source)
        if not parts:
            return
        combined: Any = parts[0]
        if self._kind is ContentsKind.ACCUMULATOR:
            combined = copy.deepcopy(combined)
        elif self._kind is not ContentsKind.REDUCED:
            combined = list(combined)
        for part in parts[1:]:
            combined = self._combine(combined, part)
        self._table.put(target, combined)
        self._owned.add((self._store.current_key, target))

    def snapshot_taken(self) -> None:
        """A snapshot now shares every window's contents: change none of them in place."""
        self._owned.clear()

    def _combine(self, first: Any, second: Any) -> Any:
        if self._kind is ContentsKind.REDUCED:
            return self._function(first, second)
        if self._kind is ContentsKind.ACCUMULATOR:
            return self._function.merge(first, second)
        first.extend(second)
        return first

    def _own(self, state_key: Any, current: Any) -> Any:
        # Contents this epoch has not copied yet may be shared with a snapshot.
        owner = (self._store.current_key, state_key)
        accumulates = self._kind is ContentsKind.ACCUMULATOR
        if owner not in self._owned:
            self._owned.add(owner)
            if current is not None:
                return copy.deepcopy(current) if accumulates else list(current)
        if current is not None:
            return current
        return self._function.create_accumulator() if accumulates else []

    def __repr__(self) -> str:
        return f"<WindowContents {self._kind.value}>"
