"""TtlMapState: a map per key whose entries expire one by one, as in Flink."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Generic, TypeVar

from lockgate.engine.state.memory.entry import FROZEN, StateEntry
from lockgate.engine.state.memory.map_state import HeapMapState
from lockgate.engine.state.memory.versioned_table import VersionedTable
from lockgate.engine.state.scope import StateScope
from lockgate.engine.state.ttl import EXPIRED, TtlPolicy, TtlValue

__all__ = ["TtlMapState", "export_map", "restore_map"]

UK = TypeVar("UK")
UV = TypeVar("UV")


def export_map(stored: StateEntry[dict[Any, TtlValue[Any]]], now: float) -> Any:
    """Return a new plain dict of a stored map's live entries, or ``EXPIRED`` if none is."""
    live = {key: item.value for key, item in stored.value.items() if item.expires_at > now}
    return live or EXPIRED


def restore_map(plain: Mapping[Any, Any], deadline: float) -> StateEntry[dict[Any, Any]]:
    """Return a restored map whose entries all expire at ``deadline``, owned by no epoch."""
    return StateEntry(FROZEN, {key: TtlValue(value, deadline) for key, value in plain.items()})


class TtlMapState(HeapMapState[UK, Any], Generic[UK, UV]):
    """A ``MapState`` whose entries are ``TtlValue`` items, each expiring on its own.

    Every access removes the expired entries it meets (copying the map first if a snapshot
    may see it), so an expired entry is never returned and a map left empty holds no state.
    """

    __slots__ = ("_policy",)

    def __init__(self, scope: StateScope, table: VersionedTable, policy: TtlPolicy) -> None:
        super().__init__(scope, table)
        self._policy = policy

    def get(self, key: UK) -> UV | None:
        """Return the live value under ``key`` in the current key's map, or ``None``."""
        if not self._live_keys((key,)):
            return None
        item: TtlValue[UV] = self._readable()[key]  # type: ignore[index]
        return item.value

    def put(self, key: UK, value: UV) -> None:
        """Set ``key`` to ``value`` with a fresh deadline."""
        self._writable().value[key] = self._policy.stamp(value)

    def put_all(self, entries: Mapping[UK, UV]) -> None:
        """Set every key of ``entries``, each with a fresh deadline."""
        if entries:
            deadline = self._policy.deadline()
            stamped = {key: TtlValue(value, deadline) for key, value in entries.items()}
            self._writable().value.update(stamped)

    def remove(self, key: UK) -> None:
        """Remove ``key`` from the current key's map, if it is there."""
        entries = self._readable()
        if entries is None or key not in entries:
            return
        self._delete((key,))

    def contains(self, key: UK) -> bool:
        """Whether the current key's map holds a live ``key`` (a read: it may refresh it)."""
        return bool(self._live_keys((key,)))

    def keys(self) -> list[UK]:
        """Return the live user keys of the current key's map."""
        return self._live_keys(None)

    def values(self) -> list[UV]:
        """Return the live values of the current key's map."""
        live = self._live_keys(None)
        entries = self._readable()
        return [entries[key].value for key in live] if entries else []

    def items(self) -> list[tuple[UK, UV]]:
        """Return the live (user key, value) pairs of the current key's map."""
        live = self._live_keys(None)
        entries = self._readable()
        return [(key, entries[key].value) for key in live] if entries else []

    def is_empty(self) -> bool:
        """Whether the current key's map holds no live entry."""
        return not self._live_keys(None)

    def _live_keys(self, keys: Iterable[UK] | None) -> list[UK]:
        """Return which of ``keys`` (all if ``None``) are live; drop expired ones, refresh reads.

        Reads refresh only with ``on_read_and_write``; the map is re-read afterwards by the
        callers because dropping or refreshing may have replaced it with a copy.
        """
        entries = self._readable()
        if entries is None:
            return []
        now = self._policy.now()
        wanted = entries if keys is None else [key for key in keys if key in entries]
        expired = [key for key in wanted if entries[key].expires_at <= now]
        live = [key for key in wanted if entries[key].expires_at > now]
        if expired:
            self._delete(expired)
        if live and self._policy.refreshes_on_read:
            self._refresh(live)
        return live

    def _delete(self, keys: Iterable[UK]) -> None:
        entries = self._writable().value
        for key in keys:
            del entries[key]
        if not entries:
            self.clear()

    def _refresh(self, keys: Iterable[UK]) -> None:
        entries = self._writable().value
        deadline = self._policy.deadline()
        for key in keys:
            entries[key] = TtlValue(entries[key].value, deadline)
