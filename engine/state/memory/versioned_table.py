"""VersionedTable: one state's table, whose snapshots are versions of it, never copies."""

from __future__ import annotations

from collections.abc import Callable, ItemsView, Iterator, KeysView, MutableMapping, ValuesView
from typing import Any

from lockgate.engine.state.memory.layers import ABSENT, Layers, count, lookup, merged_items
from lockgate.engine.state.memory.table_fold import TableFold

__all__ = ["VersionedTable"]

_EMPTY: dict[Any, Any] = {}  # never written: its get() finds nothing, in C


class VersionedTable(MutableMapping[Any, Any]):
    """Key -> value of one state, as a writable ``live`` dict over frozen versions (newest first).

    ``freeze`` is the synchronous part of a snapshot: it returns the table's layers as they
    are and starts a new, empty ``live`` dict, in O(layers) whatever the number of keys. A
    key's first write after it lands in ``live``; nothing a version holds ever changes.
    ``fold`` gives the layers back to one dict, in bounded steps between batches.

    Invariants: writes go to ``live`` only (a deleted key that a frozen layer holds gets the
    ``ABSENT`` tombstone there); a frozen layer changes only when no version holds it (the
    caller of ``fold`` says so). Readers that want a dict's speed read ``live.get(key,
    ABSENT)`` first and call ``below`` only when that finds nothing.
    """

    __slots__ = ("_deleted", "_fold", "_frozen", "below", "get", "live", "pop")

    get: Callable[..., Any]
    """``get(key, default=None)``: ``key``'s value, or ``default``; the live dict's own, in C,
    while nothing is frozen."""

    pop: Callable[..., Any]
    """``pop(key[, default])``: remove ``key`` and return its value, as ``dict.pop`` does; the
    live dict's own, in C, while nothing is frozen."""

    below: Callable[[Any, Any], Any]
    """``below(key, default)``: ``key``'s value under ``live``, or ``default``, for a key
    ``live`` misses (a key ``live`` holds then holds a tombstone: nothing is below it); a C
    call that finds nothing while nothing is frozen."""

    def __init__(self) -> None:
        self.live: dict[Any, Any] = {}
        self._frozen: Layers = ()
        self._deleted: set[Any] = set()  # keys tombstoned in live (some may be set since)
        self._fold = TableFold()
        self._read_live()

    @property
    def frozen_layers(self) -> int:
        """How many frozen layers are under ``live`` (0 once folded)."""
        return len(self._frozen)

    def _layered_below(self, key: Any, default: Any) -> Any:
        frozen = self._frozen
        if not frozen or key in self.live:
            return default
        value = lookup(frozen, key)
        return default if value is ABSENT else value

    def fast_below(self) -> Callable[[Any, Any], Any]:
        """``below`` as fast as the layers allow: valid until the next delete, freeze or fold."""
        frozen = self._frozen
        if not frozen:
            return _EMPTY.get
        if len(frozen) == 1 and not self._deleted:
            return frozen[0].get
        return self._layered_below

    def _read_live(self) -> None:
        self.get, self.pop, self.below = self.live.get, self.live.pop, _EMPTY.get

    def _read_layers(self) -> None:
        self.get, self.pop, self.below = self._layered_get, self._layered_pop, self._layered_below

    def _layered_pop(self, key: Any, *default: Any) -> Any:
        value = self._layered_get(key, ABSENT)
        if value is not ABSENT:
            self.discard(key)
            return value
        if default:
            return default[0]
        raise KeyError(key)

    def _layered_get(self, key: Any, default: Any = None) -> Any:
        value = self.live.get(key, ABSENT)
        if value is ABSENT:
            value = self._layered_below(key, ABSENT)
        return default if value is ABSENT else value

    def discard(self, key: Any) -> None:
        """Remove ``key``'s value, if it has one."""
        frozen = self._frozen
        if frozen and lookup(frozen, key) is not ABSENT:
            self.live[key] = ABSENT
            self._deleted.add(key)
        else:
            self.live.pop(key, None)

    def freeze(self) -> Layers:
        """Return the table as it is, as layers no write will change, in O(layers).

        Starts a new ``live`` dict unless nothing was written since the last freeze.
        """
        if not self.live:
            return self._frozen
        self._frozen = (self.live, *self._frozen)
        self.live = {}
        self._deleted = set()
        self._read_layers()
        return self._frozen

    def fold(self, budget: int, *, held: bool) -> int:
        """Do up to about ``budget`` entries of folding; return how many (0: nothing to do).

        ``held``: whether any version still holds layers of this table. Without, the layers
        are merged into one dict; with, only too many of them are merged into a new dict.
        """
        if not self._frozen:
            return 0
        step = self._fold.step(self, budget, held=held)
        if not self._frozen and self._deleted:
            self._purge_tombstones()
        return step

    def copy(self) -> dict[Any, Any]:
        """Return a plain dict of every key's value, made now (in C while nothing is frozen)."""
        return self.live.copy() if not self._frozen else dict(merged_items(self.layers()))

    def layers(self) -> Layers:
        """The live layer over the frozen ones: what a reader on the event loop reads."""
        return (self.live, *self._frozen)

    def replace_layers(self, live: dict[Any, Any], frozen: Layers) -> None:
        """Set the layers, for ``TableFold``: the same mapping, fewer layers."""
        self.live = live
        self._frozen = frozen
        if frozen:
            self._read_layers()
        else:
            self._read_live()

    def rewrite(self, convert: Callable[[Any], Any]) -> None:
        """Replace every value with ``convert(value)``, in ``live`` (frozen layers stay)."""
        if not self._frozen:
            live = self.live
            for key, value in live.items():
                live[key] = convert(value)
            return
        self.live.update({key: convert(value) for key, value in list(self.items())})

    def __getitem__(self, key: Any) -> Any:
        value = self.get(key, ABSENT)
        if value is ABSENT:
            raise KeyError(key)
        return value

    def __setitem__(self, key: Any, value: Any) -> None:
        self.live[key] = value

    def __delitem__(self, key: Any) -> None:
        if not self._frozen:
            del self.live[key]
        elif self.get(key, ABSENT) is ABSENT:
            raise KeyError(key)
        else:
            self.discard(key)

    def __contains__(self, key: object) -> bool:
        return self.get(key, ABSENT) is not ABSENT

    def __iter__(self) -> Iterator[Any]:
        if not self._frozen:
            return iter(self.live)
        return (key for key, _ in merged_items(self.layers()))

    def __len__(self) -> int:
        return len(self.live) if not self._frozen else count(self.layers())

    def keys(self) -> KeysView[Any]:
        """The keys with a value (the live dict's own view while nothing is frozen)."""
        return self.live.keys() if not self._frozen else KeysView(self)

    def items(self) -> ItemsView[Any, Any]:
        """The (key, value) pairs (the live dict's own view while nothing is frozen)."""
        return self.live.items() if not self._frozen else ItemsView(self)

    def values(self) -> ValuesView[Any]:
        """The values (the live dict's own view while nothing is frozen)."""
        return self.live.values() if not self._frozen else ValuesView(self)

    def _purge_tombstones(self) -> None:
        live = self.live
        for key in self._deleted:
            if live.get(key) is ABSENT:
                del live[key]
        self._deleted = set()

    def __repr__(self) -> str:
        return f"<VersionedTable entries={len(self)} frozen_layers={len(self._frozen)}>"
