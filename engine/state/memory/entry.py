"""StateEntry: a mutable per-key container stamped with the snapshot epoch that owns it."""

from __future__ import annotations

from typing import Generic, TypeVar, final

__all__ = ["FROZEN", "StateEntry"]

C = TypeVar("C")

FROZEN = -1
"""The epoch of entries no writer owns (restored ones): the first write copies them."""


@final
class StateEntry(Generic[C]):
    """A container (list, dict or accumulator) and the epoch in which it was made.

    Invariant: a writer changes ``value`` in place only while ``epoch`` equals the epoch of
    its store. Snapshots copy tables shallowly and then advance the store's epoch, so every
    entry a snapshot can see is older than the store and is replaced by a copy, never
    changed, on its next write.
    """

    __slots__ = ("epoch", "value")

    def __init__(self, epoch: int, value: C) -> None:
        self.epoch = epoch
        self.value = value

    def __repr__(self) -> str:
        return f"StateEntry(epoch={self.epoch}, value={self.value!r})"
