"""TableFold: how a table's layers become one dict again, a bounded step at a time ☐.

A step moves at most about ``budget`` entries, so a fold of a million keys never holds the
event loop for long. Which step comes next depends on the table's layers as they are now: a
snapshot may have added a layer, or taken a version of the ones a step was moving, since the
last step. Every step leaves the table reading the same values: an entry is only ever copied
under a newer layer holding the same or a newer value, or over layers it shadows anyway.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any, Protocol

from lockgate.engine.state.memory.layers import ABSENT, Layers, has_tombstones

__all__ = ["MAX_CHANGE_LAYERS", "TableFold"]

MAX_CHANGE_LAYERS = 3
"""Frozen layers over the base beyond which, while versions hold them, they are merged."""

MAX_ROUNDS = 3
"""Live layers applied onto the base in steps before the base is copied up instead."""


class Layered(Protocol):
    """What a fold changes of a ``VersionedTable``."""

    def layers(self) -> Layers:
        """The live layer over the frozen ones."""

    def freeze(self) -> Layers:
        """Move the live layer under a new, empty one."""

    def replace_layers(self, live: dict[Any, Any], frozen: Layers) -> None:
        """Set the layers: the same mapping, fewer layers."""


class TableFold:
    """The step a table's fold is in the middle of, resumed by the next call to ``step``.

    Without versions holding any layer (``held`` false): each frozen layer over the base is
    applied onto the base, oldest first; then a small live layer is applied onto the base,
    which becomes the live layer, or a larger one is frozen to be applied in steps (at most
    ``MAX_ROUNDS`` times, as writes go on meanwhile), or else (most keys written since) the
    base's entries the live layer lacks are copied into it, and the base is dropped. Either
    way the work is bounded by a few times the base's size, whatever the writes. With
    versions holding layers, nothing they hold changes: only once there are more than
    ``MAX_CHANGE_LAYERS`` layers over the base are those merged, into a new dict.
    """

    __slots__ = ("_cursor", "_merged", "_rounds", "_source", "_sources", "_target")

    def __init__(self) -> None:
        self._source: dict[Any, Any] | None = None  # the layer the cursor walks
        self._target: dict[Any, Any] | None = None  # where its entries go
        self._cursor: Iterator[tuple[Any, Any]] = iter(())
        self._sources: list[dict[Any, Any]] = []  # a merge's layers to go, oldest first
        self._merged: Layers = ()  # the layers a merge replaces, newest first
        self._rounds = 0  # live layers frozen to be applied in steps, since the last collapse

    def step(self, table: Layered, budget: int, *, held: bool) -> int:
        """Do one step; return about how many entries it moved (0: nothing to do now)."""
        if self._merged:
            return self._merge(table, budget)
        live, *frozen = table.layers()
        if held:
            if len(frozen) - 1 <= MAX_CHANGE_LAYERS:
                return 0
            self._merged = tuple(frozen[:-1])
            self._sources = list(reversed(self._merged))
            self._target, self._source = {}, None
            return self._merge(table, budget)
        base = frozen[-1]
        if len(frozen) >= 2:
            return self._push(table, frozen[-2], base, budget)
        if len(live) <= budget:
            base.update(live)  # tombstones land too: the table purges them
            table.replace_layers(base, ())
            self._rounds = 0
            return max(1, len(live))
        if 4 * len(live) < len(base) and self._rounds < MAX_ROUNDS:
            table.freeze()  # apply it in steps; the next live layer will be smaller
            self._rounds += 1
            return 1
        return self._pull_up(table, live, base, budget)

    def _push(
        self, table: Layered, layer: dict[Any, Any], base: dict[Any, Any], budget: int
    ) -> int:
        chunk = self._chunk(layer, base, budget)
        base.update(chunk)
        if has_tombstones(layer):
            for key, value in chunk:
                if value is ABSENT:
                    del base[key]
        if len(chunk) < budget:
            live, *frozen = table.layers()
            table.replace_layers(live, (*frozen[:-2], base))
            self._source = None
        return max(1, len(chunk))

    def _pull_up(
        self, table: Layered, live: dict[Any, Any], base: dict[Any, Any], budget: int
    ) -> int:
        chunk = self._chunk(base, live, budget)
        for key, value in chunk:
            if key not in live:  # a tombstone is in live too: it keeps shadowing
                live[key] = value
        if len(chunk) < budget:
            table.replace_layers(live, ())
            self._source, self._rounds = None, 0
        return max(1, len(chunk))

    def _merge(self, table: Layered, budget: int) -> int:
        target = self._target
        assert target is not None, "a merge writes into its new dict"
        moved = 0
        while self._sources and moved < budget:
            wanted = budget - moved
            chunk = self._chunk(self._sources[0], target, wanted)
            target.update(chunk)  # tombstones stay: the base under them may hold the keys
            moved += len(chunk)
            if len(chunk) < wanted:
                self._sources.pop(0)
        if not self._sources:
            self._finish_merge(table, target)
        return max(1, moved)

    def _finish_merge(self, table: Layered, merged: dict[Any, Any]) -> None:
        live, *frozen = table.layers()
        count = len(self._merged)
        replaced = frozen[-1 - count : -1]
        assert all(a is b for a, b in zip(replaced, self._merged, strict=True)), "merged layers"
        table.replace_layers(live, (*frozen[: -1 - count], merged, frozen[-1]))
        self._merged, self._target = (), None

    def _chunk(
        self, source: dict[Any, Any], target: dict[Any, Any], budget: int
    ) -> list[tuple[Any, Any]]:
        # The next entries of ``source`` for ``target``; a new pair starts a new walk.
        if source is not self._source or target is not self._target:
            self._source, self._target = source, target
            self._cursor = iter(source.items())
        return list(itertools.islice(self._cursor, budget))
