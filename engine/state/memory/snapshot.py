"""KeyedStateSnapshot: a consistent copy of a keyed state store, split by key group later."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from functools import partial
from typing import Any

from lockgate.engine.state.gil_share import sharing_the_gil
from lockgate.engine.state.key_groups import key_group_for
from lockgate.engine.state.ttl import EXPIRED

__all__ = ["KeyedStateSnapshot"]

KeyGroups = dict[int, dict[str, dict[Any, Any]]]
Deletions = dict[int, dict[str, list[Any]]]

_MISSING = object()


class KeyedStateSnapshot:
    """The keyed state of one subtask as it was when ``KeyedStateStore.snapshot`` returned.

    Invariant: it never changes. It holds shallow copies of the store's tables, and the store
    never changes a value or container those copies reference (values are replaced wholesale,
    containers are copied on their first write after the snapshot). So ``by_key_group`` may
    run in a worker thread while the event loop keeps writing to the store; it releases the
    GIL every thousand keys or so, so the event loop never waits long for it.
    """

    __slots__ = ("_expiring", "_plain", "_tables", "_time", "kinds")

    def __init__(
        self,
        tables: dict[str, dict[Any, Any]],
        plain: Mapping[str, Callable[[Any], Any]],
        *,
        expiring: Mapping[str, Callable[[Any, float], Any]] | None = None,
        time: float = 0.0,
        kinds: Mapping[str, str] | None = None,
    ) -> None:
        """Wrap ``tables`` (private copies) whose ``plain`` names hold ``StateEntry`` values.

        The ``expiring`` names have a TTL: their export turns a stored value into a plain one,
        or into ``EXPIRED`` if it had expired at ``time``, the clock time of the snapshot.
        ``kinds`` maps every declared or restored state name to its kind (``kind_of``).
        """
        self.kinds = dict(kinds or {})
        self._tables = tables
        self._plain = dict(plain)
        self._expiring = dict(expiring or {})
        self._time = time

    @property
    def state_names(self) -> frozenset[str]:
        """The names of the states that hold at least one key."""
        return frozenset(self._tables)

    @property
    def entries(self) -> int:
        """How many (state, key) entries the snapshot holds."""
        return sum(len(table) for table in self._tables.values())

    def by_key_group(self, max_parallelism: int) -> KeyGroups:
        """Return key group -> state name -> key -> plain value.

        Lists and maps come out as new plain ``list`` and ``dict`` objects; other values are
        the stored objects themselves (treat them as read-only). States without keys in a
        key group are absent from it, and key groups without state are absent. Values of
        states with a TTL that had expired when the snapshot was taken are omitted.
        """
        if max_parallelism < 1:
            raise ValueError(f"max_parallelism must be at least 1; got {max_parallelism}")
        groups: KeyGroups = {}
        group_of = (
            _key_group_cache(max_parallelism)
            if len(self._tables) > 1
            else partial(key_group_for, max_parallelism=max_parallelism)
        )
        for name, table in self._tables.items():
            for group, part in self._split(name, table, group_of).items():
                groups.setdefault(group, {})[name] = part
        return groups

    def delta_by_key_group(
        self, base: KeyedStateSnapshot, max_parallelism: int
    ) -> tuple[KeyGroups, Deletions]:
        """Return what changed since ``base``, an earlier snapshot of the same store.

        Upserts come as ``by_key_group`` gives values; deletions as key group -> state name
        -> keys. A value changed when the snapshot holds another object than ``base`` does:
        stores replace values wholesale and copy containers before changing them, so the
        same object is the same value. Applying the delta to ``base.by_key_group`` gives
        ``self.by_key_group``; values with a TTL that expired since count as deleted.
        """
        group_of = partial(key_group_for, max_parallelism=max_parallelism)
        upserts: KeyGroups = {}
        deletions: Deletions = {}
        for name, table in self._tables.items():
            old = base._tables.get(name, {})
            changed, expired = self._changes(name, table, old)
            for key, value in changed:
                upserts.setdefault(group_of(key), {}).setdefault(name, {})[key] = value
            _delete(deletions, name, expired, group_of)
        for name, old in base._tables.items():
            _delete(deletions, name, old.keys() - self._tables.get(name, {}).keys(), group_of)
        return upserts, deletions

    def _changes(
        self, name: str, table: dict[Any, Any], old: dict[Any, Any]
    ) -> tuple[list[tuple[Any, Any]], list[Any]]:
        get = old.get
        export = self._expiring.get(name)
        if export is None:
            to_plain = self._plain.get(name)
            items = sharing_the_gil(table.items())
            changed = [(k, v) for k, v in items if get(k, _MISSING) is not v]
            if to_plain is not None:
                changed = [(k, to_plain(entry.value)) for k, entry in changed]
            return changed, []
        exported = [
            (k, export(v, self._time), get(k, _MISSING) is not v)
            for k, v in sharing_the_gil(table.items())
        ]
        expired = [k for k, value, _ in exported if value is EXPIRED and k in old]
        return [(k, value) for k, value, new in exported if new and value is not EXPIRED], expired

    def _split(
        self, name: str, table: dict[Any, Any], group_of: Callable[[Any], int]
    ) -> dict[int, dict[Any, Any]]:
        export = self._expiring.get(name)
        if export is not None:
            return self._split_expiring(table, group_of, export)
        to_plain = self._plain.get(name)
        parts: dict[int, dict[Any, Any]] = {}
        for key, value in sharing_the_gil(table.items()):
            group = group_of(key)
            part = parts.get(group)
            if part is None:
                part = parts[group] = {}
            part[key] = value if to_plain is None else to_plain(value.value)
        return parts

    def _split_expiring(
        self,
        table: dict[Any, Any],
        group_of: Callable[[Any], int],
        export: Callable[[Any, float], Any],
    ) -> dict[int, dict[Any, Any]]:
        parts: dict[int, dict[Any, Any]] = {}
        for key, stored in sharing_the_gil(table.items()):
            value = export(stored, self._time)
            if value is not EXPIRED:
                parts.setdefault(group_of(key), {})[key] = value
        return parts

    def __repr__(self) -> str:
        sizes = ", ".join(f"{name}={len(table)}" for name, table in self._tables.items())
        return f"<KeyedStateSnapshot {sizes or 'empty'}>"


def _delete(
    deletions: Deletions, name: str, keys: Iterable[Any], group_of: Callable[[Any], int]
) -> None:
    for key in keys:
        deletions.setdefault(group_of(key), {}).setdefault(name, []).append(key)


def _key_group_cache(max_parallelism: int) -> Callable[[Any], int]:
    # A key usually holds several states; its stable hash is computed once per snapshot.
    # (With one state the cache only costs: a million-entry dict resizing stalls the loop.)
    cache: dict[Any, int] = {}

    def group_of(key: Any) -> int:
        group = cache.get(key)
        if group is None:
            group = cache[key] = key_group_for(key, max_parallelism)
        return group

    return group_of
