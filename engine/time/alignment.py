"""AlignmentGroup: how far the sources of one watermark alignment group may run ahead ☐.

Flink's watermark alignment (FLIP-182, 1.15+): the group's watermark is the lowest of its
members that count (neither idle nor ended), and a member more than ``max_drift`` above it
pauses reading until the group catches up. Members are source subtasks of one process;
each tells its watermark through a callable, read whenever the group's is asked for. Pure:
no event loop, no clock.
"""

from __future__ import annotations

import math
from collections.abc import Callable

__all__ = ["AlignmentGroup", "MemberWatermark"]

MemberWatermark = Callable[[], float | None]
"""A member's watermark now (``-inf`` before its first), or ``None`` while it is idle."""


class AlignmentGroup:
    """The members of one alignment group, and the watermark each has now.

    Invariants: ``watermark`` is the minimum over the members that count (``inf`` while
    none does: nothing holds anyone back); an idle member does not count while it is idle;
    a member that left (its input ended, or its attempt stopped) never counts again.
    ``max_allowed`` is ``watermark + max_drift``: a member above it is to pause.
    """

    __slots__ = ("_members", "max_drift", "name")

    def __init__(self, name: str, max_drift: float) -> None:
        self.name = name
        self.max_drift = max_drift
        self._members: dict[str, MemberWatermark] = {}

    def join(self, member: str, watermark: MemberWatermark) -> None:
        """Count ``member``, whose watermark ``watermark()`` tells."""
        if member in self._members:
            raise ValueError(f"'{member}' is in watermark alignment group '{self.name}' already")
        self._members[member] = watermark

    def leave(self, member: str) -> None:
        """``member`` ended: it no longer holds the group back."""
        self._members.pop(member, None)

    @property
    def watermark(self) -> float:
        """The group's watermark: the lowest of the members that count."""
        counted = (w for watermark in self._members.values() if (w := watermark()) is not None)
        return min(counted, default=math.inf)

    @property
    def max_allowed(self) -> float:
        """The highest watermark a member may have and still read."""
        return self.watermark + self.max_drift

    def allows(self, member: str) -> bool:
        """Whether ``member`` may read on: its watermark is not above ``max_allowed``."""
        own = self._own(member)
        return own is None or own <= self.max_allowed

    def drift(self, member: str) -> float | None:
        """How far ``member``'s watermark is above the group's; ``None`` unless both are finite."""
        own, group = self._own(member), self.watermark
        if own is None or not math.isfinite(own) or not math.isfinite(group):
            return None
        return own - group

    def _own(self, member: str) -> float | None:
        # A member that left (or never joined) is not held back and tells no drift.
        watermark = self._members.get(member)
        return None if watermark is None else watermark()

    def __repr__(self) -> str:
        return f"<AlignmentGroup {self.name!r} max_drift={self.max_drift} {list(self._members)}>"
