"""Layers: a table as dicts stacked newest first, read as one mapping ☐.

A table of the memory backend is a stack of layers: the live layer that writes go to, over
the frozen layers of earlier snapshot versions (``VersionedTable``). A key's value is the one
in the newest layer that holds the key; ``ABSENT`` there is a tombstone, so the key has no
value even if an older layer holds one. The oldest layer (the base) never holds a tombstone:
a key is only ever tombstoned over a layer that holds it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final, final

__all__ = [
    "ABSENT",
    "Layers",
    "count",
    "has_tombstones",
    "lookup",
    "merged_items",
    "upper_bound",
]

Layers = tuple[dict[Any, Any], ...]
"""Dicts stacked newest first; the last one is the base."""


@final
class _Absent:
    __slots__ = ()

    def __repr__(self) -> str:
        return "ABSENT"

    def __reduce__(self) -> str:
        return "ABSENT"  # one object per process, also after a copy or a pickle


ABSENT: Final = _Absent()
"""No value: the default of a lookup that finds nothing, and a deleted key's tombstone."""

_NOT_HERE: Final = object()
_ABSENT_ID: Final = id(ABSENT)


def lookup(layers: Layers, key: Any) -> Any:
    """Return ``key``'s value in ``layers``, or ``ABSENT`` (none, or a tombstone)."""
    for layer in layers:
        value = layer.get(key, _NOT_HERE)
        if value is not _NOT_HERE:
            return value
    return ABSENT


def merged_items(layers: Layers) -> Iterator[tuple[Any, Any]]:
    """Yield every (key, value) of ``layers`` read as one mapping: newest value, no tombstones.

    Layers must not change while this runs (frozen layers, or a live one nobody writes to).
    """
    for index, layer in enumerate(layers):
        newer = layers[:index]
        if not newer:
            yield from ((key, value) for key, value in layer.items() if value is not ABSENT)
        elif len(newer) == 1:
            (top,) = newer
            yield from (
                (key, value)
                for key, value in layer.items()
                if value is not ABSENT and key not in top
            )
        else:
            yield from (
                (key, value)
                for key, value in layer.items()
                if value is not ABSENT and not any(key in upper for upper in newer)
            )


def count(layers: Layers) -> int:
    """How many keys hold a value in ``layers`` read as one mapping.

    Counted from the base up, each layer against the layers under it: linear in the layers
    over the base, not in the base.
    """
    if not layers:
        return 0
    total = len(layers[-1])
    for index in range(len(layers) - 2, -1, -1):
        total += _change(layers[index], layers[index + 1 :])
    return total


def upper_bound(layers: Layers) -> int:
    """At least as many as ``count(layers)``, in O(layers): every layer's size, summed."""
    return sum(len(layer) for layer in layers)


def has_tombstones(layer: dict[Any, Any]) -> bool:
    """Whether ``layer`` holds a tombstone; by identity, in C (no value's ``__eq__`` runs)."""
    return _ABSENT_ID in map(id, layer.values())


def _change(layer: dict[Any, Any], lower: Layers) -> int:
    # How many keys ``layer`` adds (new values) less those it removes (tombstones).
    if len(lower) == 1 and not has_tombstones(layer):
        (base,) = lower
        return len(layer) - sum(map(base.__contains__, layer))
    change = 0
    for key, value in layer.items():
        before = lookup(lower, key) is not ABSENT
        if value is ABSENT:
            change -= before
        else:
            change += not before
    return change
