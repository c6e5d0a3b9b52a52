"""MergingWindowSet: a key's session windows, merged as records bridge them (Flink's).

Keyed state (``window-set``: window state key -> ``True``) lists the key's live windows,
whether or not they hold records (a purged window lives on until its cleanup), so a record
within a purged session still extends it. The windows never overlap or touch: adding one
merges it with every window it overlaps or touches, in one pass. Pure: no event loop.
"""

from __future__ import annotations

from typing import Any

from lockgate.engine.state import MapState, MapStateDescriptor
from lockgate.engine.windows.assigners import TimeWindow, window_of

__all__ = ["WINDOW_SET", "MergingWindowSet"]

WINDOW_SET = MapStateDescriptor[Any, bool]("window-set")


class MergingWindowSet:
    """The current key's live merging windows."""

    __slots__ = ("_table",)

    def __init__(self, table: MapState[Any, bool]) -> None:
        self._table = table

    def add(self, window: TimeWindow) -> tuple[TimeWindow, list[TimeWindow]]:
        """Add ``window``: the live window it is now part of, and the windows merged into it.

        The list is empty when nothing merged: ``window`` is new on its own (it becomes live
        only once ``keep`` is called, after the lateness check) or lies within a live window.
        """
        covered, overlapping = window, []
        for state_key in self._table.keys():  # noqa: SIM118 - a MapState, not a dict
            existing = window_of(state_key)
            assert isinstance(existing, TimeWindow)
            if existing.intersects(window):
                covered = covered.cover(existing)
                overlapping.append(existing)
        if not overlapping or overlapping == [covered]:
            return covered, []
        for existing in overlapping:
            self._table.remove(existing.state_key)
        self._table.put(covered.state_key, True)  # noqa: FBT003 - a map used as a set
        return covered, sorted(overlapping)

    def keep(self, window: TimeWindow) -> None:
        """Make ``window`` live (a window ``add`` found new on its own)."""
        self._table.put(window.state_key, True)  # noqa: FBT003 - a map used as a set

    def contains(self, state_key: Any) -> bool:
        """Whether the window stored under ``state_key`` is live."""
        return self._table.contains(state_key)

    def retire(self, state_key: Any) -> None:
        """The window is cleaned up (or was late): it is live no more."""
        self._table.remove(state_key)

    def __repr__(self) -> str:
        return "<MergingWindowSet>"
