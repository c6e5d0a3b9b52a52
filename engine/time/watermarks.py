"""Watermarks: how event time is declared at a stream's start and combined over inputs.

``WatermarkStrategy`` says how to read a record's event time and how far behind the newest
timestamp the watermark stays; ``WatermarkGenerator`` applies it to the records one subtask
sees; ``WatermarkValve`` combines the watermarks arriving on a subtask's input channels into
the subtask's own: the minimum over the channels still open. No event loop here.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeAlias

from lockgate.engine.events import Watermark, WatermarkStatus
from lockgate.engine.time.event_time import event_times_of

__all__ = [
    "MAX_WATERMARK",
    "ValveOutput",
    "WatermarkGenerator",
    "WatermarkStrategy",
    "WatermarkValve",
]

MAX_WATERMARK = Watermark(math.inf)
"""The watermark of a stream that ended: event time has passed everything."""

_NO_TIME = -math.inf

ValveOutput: TypeAlias = Watermark | WatermarkStatus
"""What a valve passes on: the subtask's new watermark, or its new status."""


@dataclass(frozen=True, slots=True)
class WatermarkStrategy:
    """How a stream's records tell their event time, and how late they may come.

    A record's event time is ``timestamp_assigner(record)`` (seconds, or any unit the job
    uses throughout), a finite number: NaN or an infinity fails the operator reading it.
    The watermark trails the newest event time seen by ``max_out_of_orderness``: a record
    may come that much earlier than the newest one and still be on time; the watermark
    declares that no record at or below it follows.
    Watermarks leave a subtask at most every ``auto_watermark_interval`` seconds of the
    job's clock (an environment option, as in Flink); the end of a bounded stream advances
    the watermark to infinity. With ``idle_timeout``, a subtask that read nothing for that
    many seconds goes idle: operators downstream stop waiting for its watermarks until it
    reads again.

    Build one with ``for_bounded_out_of_orderness(seconds)`` or
    ``for_monotonous_timestamps()``, then ``.with_timestamp_assigner(fn)`` and optionally
    ``.with_idleness(seconds)``.
    """

    max_out_of_orderness: float = 0.0
    timestamp_assigner: Callable[[Any], float] | None = None
    idle_timeout: float | None = None

    def __post_init__(self) -> None:
        if not self.max_out_of_orderness >= 0:
            raise ValueError(
                f"max_out_of_orderness must be 0 or more; got {self.max_out_of_orderness!r}"
            )
        if self.idle_timeout is not None and not self.idle_timeout > 0:
            raise ValueError(f"the idleness timeout must be > 0 seconds; got {self.idle_timeout!r}")

    @classmethod
    def for_bounded_out_of_orderness(cls, max_out_of_orderness: float) -> WatermarkStrategy:
        """Records may arrive up to ``max_out_of_orderness`` behind the newest one seen."""
        return cls(max_out_of_orderness)

    @classmethod
    def for_monotonous_timestamps(cls) -> WatermarkStrategy:
        """Event time never goes back: the watermark follows the newest timestamp."""
        return cls(0.0)

    def with_timestamp_assigner(self, assigner: Callable[[Any], float]) -> WatermarkStrategy:
        """Read each record's event time with ``assigner(record)``."""
        return replace(self, timestamp_assigner=assigner)

    def with_idleness(self, timeout: float) -> WatermarkStrategy:
        """Go idle after ``timeout`` seconds (job clock) without a record; active with the next."""
        return replace(self, idle_timeout=timeout)

    def create_generator(self) -> WatermarkGenerator:
        """Return a generator for one subtask's records."""
        if self.timestamp_assigner is None:
            raise ValueError(
                "the watermark strategy has no timestamp assigner; call "
                ".with_timestamp_assigner(lambda record: <its event time>)"
            )
        return WatermarkGenerator(
            self.timestamp_assigner, self.max_out_of_orderness, idle_timeout=self.idle_timeout
        )


class WatermarkGenerator:
    """Tracks the newest event time of one subtask's records; says which watermark is due.

    The watermark is the newest timestamp minus the allowed out-of-orderness, just below it
    (a record exactly that late is still on time). ``take_due`` returns it once it has
    advanced and ``interval`` seconds have passed since the last one left. With an
    ``idle_timeout``, ``take_status`` reports the subtask idle once that long passed without
    a record (counted from the first call), and active again after the next records.
    """

    __slots__ = (
        "_assigner",
        "_delay",
        "_emitted",
        "_idle_timeout",
        "_last_record_at",
        "_newest",
        "_next_at",
        "idle",
    )

    def __init__(
        self,
        assigner: Callable[[Any], float],
        max_out_of_orderness: float,
        *,
        idle_timeout: float | None = None,
    ) -> None:
        self._assigner = assigner
        self._delay = max_out_of_orderness
        self._idle_timeout = idle_timeout
        self._newest = _NO_TIME
        self._emitted = _NO_TIME
        self._next_at = _NO_TIME
        self._last_record_at: float | None = None
        self.idle = False

    def on_records(self, records: Sequence[Any], now: float) -> list[float]:
        """Take the event times of a batch of records read at ``now``; return them, in order.

        Raises:
            ValueError: naming the record, for an event time that is not finite.
        """
        times = event_times_of(self._assigner, records)
        newest = max(times, default=_NO_TIME)
        if newest > self._newest:
            self._newest = newest
        if records:
            self._last_record_at = now
        return times

    @property
    def current(self) -> float:
        """The watermark the records seen so far allow."""
        if self._newest == _NO_TIME:
            return _NO_TIME
        return math.nextafter(self._newest - self._delay, _NO_TIME)

    def take_due(self, now: float, interval: float) -> Watermark | None:
        """Return the watermark to emit at ``now``, if it advanced and its time has come."""
        current = self.current
        if current <= self._emitted or now < self._next_at:
            return None
        self._emitted, self._next_at = current, now + interval
        return Watermark(current)

    def mark_without_input(self) -> WatermarkStatus | None:
        """The subtask reads nothing (a source subtask without splits): idle for good.

        Returns the idle status to emit, unless already idle.
        """
        self._idle_timeout = None  # no timeout can make it active again
        if self.idle:
            return None
        self.idle = True
        return WatermarkStatus(idle=True)

    def take_status(self, now: float) -> WatermarkStatus | None:
        """Return the status to emit at ``now`` if it changed: idle, or active again."""
        if self._idle_timeout is None or self._emitted == math.inf:
            return None
        if self._last_record_at is None:
            self._last_record_at = now
        quiet = now - self._last_record_at >= self._idle_timeout
        if quiet == self.idle:
            return None
        self.idle = quiet
        return WatermarkStatus(idle=quiet)

    def finish(self) -> None:
        """The input ended and the final watermark left: nothing more is due."""
        self._emitted = math.inf

    @property
    def idle_timeout(self) -> float | None:
        """Seconds without a record after which ``take_status`` reports idle, if ever."""
        return self._idle_timeout

    def __repr__(self) -> str:
        return (
            f"<WatermarkGenerator newest={self._newest} emitted={self._emitted} idle={self.idle}>"
        )


@dataclass(slots=True)
class _InputChannel:
    watermark: float = _NO_TIME
    idle: bool = False


class WatermarkValve:
    """Combines the watermarks of a subtask's input channels (Flink's ``StatusWatermarkValve``).

    The subtask's watermark is the minimum over the channels that count: open, active and
    aligned. A channel's watermark only goes up (a lower one is ignored), as does the
    subtask's. An idle channel does not count, and its watermarks are ignored; back to
    active, it counts again once its watermark has caught up with the subtask's. A channel
    that ended no longer counts. The subtask is idle while all its open channels are. Each
    call returns what to pass on: a new watermark, a status change, both, or nothing.
    """

    __slots__ = ("_channels", "_current", "idle")

    def __init__(self, channels: int) -> None:
        self._channels = {index: _InputChannel() for index in range(channels)}
        self._current = _NO_TIME
        self.idle = False

    @property
    def current(self) -> float:
        """The last watermark this valve let through (``-inf`` before the first)."""
        return self._current

    def on_watermark(self, channel: int, watermark: Watermark) -> list[ValveOutput]:
        """Take ``watermark`` from ``channel``."""
        state = self._channels.get(channel)
        if state is None or state.idle or watermark.timestamp <= state.watermark:
            return []
        state.watermark = watermark.timestamp
        return self._advance()

    def on_status(self, channel: int, status: WatermarkStatus) -> list[ValveOutput]:
        """Take a status change of ``channel``."""
        state = self._channels.get(channel)
        if state is None or state.idle == status.idle:
            return []
        state.idle = status.idle
        out: list[ValveOutput] = []
        if not status.idle and self.idle:
            self.idle = False
            out.append(WatermarkStatus(idle=False))
        return out + self._advance() + self._went_idle()

    def on_end(self, channel: int) -> list[ValveOutput]:
        """``channel`` ended."""
        if self._channels.pop(channel, None) is None or not self._channels:
            return []
        return self._advance() + self._went_idle()

    def _advance(self) -> list[ValveOutput]:
        current = self._current
        counted = [
            state.watermark
            for state in self._channels.values()
            if not state.idle and state.watermark >= current
        ]
        if not counted or (lowest := min(counted)) <= current:
            return []
        self._current = lowest
        return [Watermark(lowest)]

    def _went_idle(self) -> list[ValveOutput]:
        if self.idle or not all(state.idle for state in self._channels.values()):
            return []
        self.idle = True
        return [WatermarkStatus(idle=True)]

    def __repr__(self) -> str:
        return f"<WatermarkValve current={self._current} idle={self.idle} {self._channels}>"
