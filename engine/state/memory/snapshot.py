"""KeyedStateSnapshot: a version of a keyed state store's tables, split by key group later."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from collections.abc import Set as AbstractSet
from functools import partial
from typing import Any

from lockgate.engine.state.gil_share import sharing_the_gil
from lockgate.engine.state.key_groups import key_group_for
from lockgate.engine.state.memory.layers import (
    ABSENT,
    Layers,
    lookup,
    merged_items,
    upper_bound,
)
from lockgate.engine.state.memory.versions import SnapshotVersion
from lockgate.engine.state.ttl import EXPIRED

__all__ = ["KeyedStateSnapshot"]

KeyGroups = dict[int, dict[str, dict[Any, Any]]]
Deletions = dict[int, dict[str, list[Any]]]

_MISSING = object()


class KeyedStateSnapshot:
    """The keyed state of one subtask as it was when ``KeyedStateStore.snapshot`` returned.

    Invariant: it never changes while its version is held. It holds each table's frozen
    layers (``VersionedTable.freeze``), which the store changes only once no version holds
    them: values are replaced wholesale, containers are copied on their first write after the
    snapshot, and both land in the store's new live layer. So ``by_key_group`` may run in a
    worker thread while the event loop keeps writing to the store; it releases the GIL every
    thousand keys or so, so the event loop never waits long for it. Once nothing will read
    the snapshot again, ``release`` it; then ``store_fold`` lets the store merge its layers.
    What must outlive that (the base of incremental deltas) keeps a ``detached`` copy.
    """

    __slots__ = ("_expiring", "_fold", "_plain", "_tables", "_time", "_version", "kinds")

    def __init__(
        self,
        tables: dict[str, Layers],
        plain: Mapping[str, Callable[[Any], Any]],
        *,
        expiring: Mapping[str, Callable[[Any, float], Any]] | None = None,
        time: float = 0.0,
        kinds: Mapping[str, str] | None = None,
        version: SnapshotVersion | None = None,
        fold: Callable[[], bool] | None = None,
    ) -> None:
        """Wrap the frozen layers of ``tables``; the ``plain`` names hold ``StateEntry`` values.

        The ``expiring`` names have a TTL: their export turns a stored value into a plain one,
        or into ``EXPIRED`` if it had expired at ``time``, the clock time of the snapshot.
        ``kinds`` maps every declared or restored state name to its kind (``kind_of``).
        ``version`` is the store's hold on the layers, ``fold`` one step of its fold.
        """
        self.kinds = dict(kinds or {})
        self._tables = tables
        self._plain = dict(plain)
        self._expiring = dict(expiring or {})
        self._time = time
        self._version = version
        self._fold = fold

    @property
    def state_names(self) -> frozenset[str]:
        """The names of the states that hold at least one key."""
        return frozenset(name for name, layers in self._tables.items() if _holds_keys(layers))

    @property
    def entries(self) -> int:
        """How many (state, key) entries the snapshot holds, at most.

        Exact for a table written only before the last version still held; a key written
        again since counts once per layer holding it. O(tables), for the event loop.
        """
        return sum(upper_bound(layers) for layers in self._tables.values())

    @property
    def version(self) -> SnapshotVersion | None:
        """The store's hold on the layers this snapshot reads (``None``: it owns its dicts)."""
        return self._version

    @property
    def store_fold(self) -> Callable[[], bool] | None:
        """One bounded step of the store's fold (``KeyedStateStore.fold``), if it has a store."""
        return self._fold

    def release(self) -> None:
        """Nothing reads this snapshot any more: the store may change the layers it holds.

        Idempotent. Reading a released snapshot may see later writes: detach first.
        """
        if self._version is not None:
            self._version.release()

    def detached(self) -> KeyedStateSnapshot:
        """Return an equal snapshot that holds its own dicts, no version: it outlives ``release``.

        Linear in the entries; meant for a worker thread (it shares the GIL as it goes).
        """
        tables: dict[str, Layers] = {
            name: (dict(sharing_the_gil(_items(layers))),) for name, layers in self._tables.items()
        }
        return KeyedStateSnapshot(
            tables, self._plain, expiring=self._expiring, time=self._time, kinds=self.kinds
        )

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
        for name, layers in self._tables.items():
            for group, part in self._split(name, layers, group_of).items():
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
        for name, layers in self._tables.items():
            old = base._tables.get(name, ())
            changed, expired = self._changes(name, layers, old)
            for key, value in changed:
                upserts.setdefault(group_of(key), {}).setdefault(name, {})[key] = value
            _delete(deletions, name, expired, group_of)
        for name, old in base._tables.items():
            gone = _keys(old) - _keys(self._tables.get(name, ()))
            _delete(deletions, name, gone, group_of)
        return upserts, deletions

    def _changes(
        self, name: str, layers: Layers, old: Layers
    ) -> tuple[list[tuple[Any, Any]], list[Any]]:
        get = _getter(old)
        export = self._expiring.get(name)
        items = sharing_the_gil(_items(layers))
        if export is None:
            to_plain = self._plain.get(name)
            changed = [(k, v) for k, v in items if get(k, _MISSING) is not v]
            if to_plain is not None:
                changed = [(k, to_plain(entry.value)) for k, entry in changed]
            return changed, []
        exported = [(k, export(v, self._time), get(k, _MISSING) is not v) for k, v in items]
        expired = [
            k for k, value, _ in exported if value is EXPIRED and get(k, _MISSING) is not _MISSING
        ]
        return [(k, value) for k, value, new in exported if new and value is not EXPIRED], expired

    def _split(
        self, name: str, layers: Layers, group_of: Callable[[Any], int]
    ) -> dict[int, dict[Any, Any]]:
        export = self._expiring.get(name)
        if export is not None:
            return self._split_expiring(layers, group_of, export)
        to_plain = self._plain.get(name)
        parts: dict[int, dict[Any, Any]] = {}
        for key, value in sharing_the_gil(_items(layers)):
            group = group_of(key)
            part = parts.get(group)
            if part is None:
                part = parts[group] = {}
            part[key] = value if to_plain is None else to_plain(value.value)
        return parts

    def _split_expiring(
        self,
        layers: Layers,
        group_of: Callable[[Any], int],
        export: Callable[[Any, float], Any],
    ) -> dict[int, dict[Any, Any]]:
        parts: dict[int, dict[Any, Any]] = {}
        for key, stored in sharing_the_gil(_items(layers)):
            value = export(stored, self._time)
            if value is not EXPIRED:
                parts.setdefault(group_of(key), {})[key] = value
        return parts

    def __repr__(self) -> str:
        sizes = ", ".join(f"{name}={upper_bound(t)}" for name, t in self._tables.items())
        return f"<KeyedStateSnapshot {sizes or 'empty'}>"


def _items(layers: Layers) -> Iterable[tuple[Any, Any]]:
    # One layer is a base or a layer frozen over nothing: it holds no tombstone.
    return layers[0].items() if len(layers) == 1 else merged_items(layers)


def _holds_keys(layers: Layers) -> bool:
    return any(True for _ in _items(layers))


def _keys(layers: Layers) -> AbstractSet[Any]:
    return layers[0].keys() if len(layers) == 1 else {key for key, _ in merged_items(layers)}


def _getter(layers: Layers) -> Callable[[Any, Any], Any]:
    if len(layers) == 1:
        return layers[0].get
    if not layers:
        return lambda key, default: default

    def get(key: Any, default: Any) -> Any:
        value = lookup(layers, key)
        return default if value is ABSENT else value

    return get


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
