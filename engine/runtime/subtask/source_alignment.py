"""SourceAlignment: a source subtask that pauses reading while it runs ahead of its group."""

from __future__ import annotations

from lockgate.engine.time.alignment import AlignmentGroup, MemberWatermark
from lockgate.engine.time.clock import Clock

__all__ = ["SourceAlignment"]


class SourceAlignment:
    """One source subtask's part in its watermark alignment group.

    Before each read the subtask asks ``wait_until_allowed``: while its watermark is more
    than the group's ``max_drift`` above the group's watermark, it waits, looking again
    every ``update_interval`` seconds of the job's clock (Flink's watermark alignment: the
    reading pauses; what was read goes on through the job). ``paused_time`` counts the
    seconds it waited, the wait going on too. It leaves the group when its input ends or it
    stops.
    """

    def __init__(
        self,
        group: AlignmentGroup,
        member: str,
        watermark: MemberWatermark,
        *,
        clock: Clock,
        update_interval: float,
    ) -> None:
        self.group = group
        self.member = member
        self._clock = clock
        self._interval = update_interval
        self._paused_time = 0.0
        self._paused_since: float | None = None
        group.join(member, watermark)

    @property
    def paused(self) -> bool:
        """Whether the subtask waits now, ahead of its group."""
        return self._paused_since is not None

    @property
    def paused_time(self) -> float:
        """Seconds this subtask waited ahead of its group, so far."""
        since = self._paused_since
        return self._paused_time + (0.0 if since is None else self._clock.now() - since)

    @property
    def drift(self) -> float | None:
        """How far the subtask's watermark is above its group's (``None`` before both are)."""
        return self.group.drift(self.member)

    async def wait_until_allowed(self) -> None:
        """Return once the subtask may read: its watermark is within the allowed drift."""
        clock = self._clock
        while not self.group.allows(self.member):
            self._paused_since = started = clock.now()
            try:
                await clock.sleep(self._interval)
            finally:
                self._paused_since = None
                self._paused_time += clock.now() - started

    def leave(self) -> None:
        """The subtask reads no more: it holds nobody back."""
        self.group.leave(self.member)

    def __repr__(self) -> str:
        return f"<SourceAlignment {self.member} in {self.group!r} paused={self.paused}>"
