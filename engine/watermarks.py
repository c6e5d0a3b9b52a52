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
from typing import Any

from lockgate.engine.events import Watermark

__all__ = ["MAX_WATERMARK", "WatermarkGenerator", "WatermarkStrategy", "WatermarkValve"]

MAX_WATERMARK = Watermark(math.inf)
"""The watermark of a stream that ended: event time has passed everything."""

_NO_TIME = -math.inf


@dataclass(frozen=True, slots=True)
class WatermarkStrategy:
    """How a stream's records tell their event time, and how late they may come.

    A record's event time is ``timestamp_assigner(record)`` (seconds, or any unit the job
    uses throughout). The watermark trails the newest event time seen by
    ``max_out_of_orderness``: a record may come that much earlier than the newest one and
    still be on time; the watermark declares that no record at or below it follows.
    Watermarks leave a subtask at most every ``auto_watermark_interval`` seconds of the
    job's clock (an environment option, as in Flink); the end of a bounded stream advances
    the watermark to infinity.

    Build one with ``for_bounded_out_of_orderness(seconds)`` or
    ``for_monotonous_timestamps()`` and ``.with_timestamp_assigner(fn)``.
    """

    max_out_of_orderness: float = 0.0
    timestamp_assigner: Callable[[Any], float] | None = None

    def __post_init__(self) -> None:
        if not self.max_out_of_orderness >= 0:
            raise ValueError(
                f"max_out_of_orderness must be 0 or more; got {self.max_out_of_orderness!r}"
            )

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

    def create_generator(self) -> WatermarkGenerator:
        """Return a generator for one subtask's records."""
        if self.timestamp_assigner is None:
            raise ValueError(
                "the watermark strategy has no timestamp assigner; call "
                ".with_timestamp_assigner(lambda record: <its event time>)"
            )
        return WatermarkGenerator(self.timestamp_assigner, self.max_out_of_orderness)


class WatermarkGenerator:
    """Tracks the newest event time of one subtask's records; says which watermark is due.

    The watermark is the newest timestamp minus the allowed out-of-orderness, just below it
    (a record exactly that late is still on time). ``take_due`` returns it once it has
    advanced and ``interval`` seconds have passed since the last one left.
    """

    __slots__ = ("_assigner", "_delay", "_emitted", "_newest", "_next_at")

    def __init__(self, assigner: Callable[[Any], float], max_out_of_orderness: float) -> None:
        self._assigner = assigner
        self._delay = max_out_of_orderness
        self._newest = _NO_TIME
        self._emitted = _NO_TIME
        self._next_at = _NO_TIME

    def on_records(self, records: Sequence[Any]) -> None:
        """Take the event times of a batch of records."""
        newest = max(map(self._assigner, records), default=_NO_TIME)
        if newest > self._newest:
            self._newest = newest

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

    def finish(self) -> None:
        """The input ended and the final watermark left: nothing more is due."""
        self._emitted = math.inf

    def due_at(self) -> float | None:
        """When a watermark that advanced is due, or ``None`` if none waits."""
        return self._next_at if self.current > self._emitted else None

    def __repr__(self) -> str:
        return f"<WatermarkGenerator newest={self._newest} emitted={self._emitted}>"


class WatermarkValve:
    """Combines the watermarks of a subtask's input channels: the minimum of the open ones.

    Each channel's watermark only goes up (a lower one is ignored). A channel that ended no
    longer holds the others back. ``on_watermark`` and ``on_end`` return the subtask's new
    watermark when the minimum advanced, else ``None``.
    """

    __slots__ = ("_channels", "_current")

    def __init__(self, channels: int) -> None:
        self._channels: dict[int, float] = dict.fromkeys(range(channels), _NO_TIME)
        self._current = _NO_TIME

    @property
    def current(self) -> float:
        """The last watermark this valve let through (``-inf`` before the first)."""
        return self._current

    def on_watermark(self, channel: int, watermark: Watermark) -> Watermark | None:
        """Take ``watermark`` from ``channel``; return the combined one if it advanced."""
        channels = self._channels
        if channel in channels and watermark.timestamp > channels[channel]:
            channels[channel] = watermark.timestamp
            return self._advance()
        return None

    def on_end(self, channel: int) -> Watermark | None:
        """``channel`` ended; return the combined watermark if that let it advance."""
        self._channels.pop(channel, None)
        return self._advance() if self._channels else None

    def _advance(self) -> Watermark | None:
        lowest = min(self._channels.values())
        if lowest <= self._current:
            return None
        self._current = lowest
        return Watermark(lowest)

    def __repr__(self) -> str:
        return f"<WatermarkValve current={self._current} channels={self._channels}>"
