"""Watermarks: how event time is declared at a stream's start and combined over inputs.

``WatermarkStrategy`` says how to read a record's event time, which ``WatermarkGenerator``
makes the watermarks (``generators.py``), when a quiet input goes idle and which sources
keep their watermarks aligned; ``WatermarkValve`` combines the watermarks arriving on a
subtask's input channels into the subtask's own: the minimum over the channels still open.
No event loop here.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import Any, TypeAlias

from lockgate.engine.events import Watermark, WatermarkStatus
from lockgate.engine.time.generators import (
    BoundedOutOfOrdernessWatermarks,
    WatermarkGenerator,
    WatermarkGeneratorContext,
)

__all__ = [
    "MAX_WATERMARK",
    "GeneratorFactory",
    "ValveOutput",
    "WatermarkAlignment",
    "WatermarkStrategy",
    "WatermarkValve",
]

MAX_WATERMARK = Watermark(math.inf)
"""The watermark of a stream that ended: event time has passed everything."""

_NO_TIME = -math.inf

ValveOutput: TypeAlias = Watermark | WatermarkStatus
"""What a valve passes on: the subtask's new watermark, or its new status."""

GeneratorFactory: TypeAlias = Callable[[WatermarkGeneratorContext], WatermarkGenerator[Any]]
"""Makes the generator of one subtask, or of one source split (Flink's supplier)."""


@dataclass(frozen=True, slots=True)
class WatermarkAlignment:
    """Sources of one group whose watermarks stay within ``max_drift`` of each other.

    Every ``update_interval`` seconds of the job's clock, each source subtask of the group
    reports its watermark and learns the group's: the lowest of its members that are not
    idle and have not ended. A subtask whose watermark is more than ``max_drift`` above it
    stops reading until the group catches up (Flink's watermark alignment, 1.15+).
    """

    group: str
    max_drift: float
    update_interval: float = 1.0

    def __post_init__(self) -> None:
        if not self.group:
            raise ValueError("a watermark alignment group needs a name; got ''")
        if not self.max_drift >= 0:
            raise ValueError(f"max_drift must be 0 or more; got {self.max_drift!r}")
        if not self.update_interval > 0:
            raise ValueError(
                f"the alignment's update_interval must be > 0 seconds; got {self.update_interval!r}"
            )


def _bounded(max_out_of_orderness: float, context: WatermarkGeneratorContext) -> Any:
    return BoundedOutOfOrdernessWatermarks(max_out_of_orderness)


_MONOTONOUS: GeneratorFactory = partial(_bounded, 0.0)


@dataclass(frozen=True, slots=True)
class WatermarkStrategy:
    """How a stream's records tell their event time, and how its watermarks are made.

    A record's event time is ``timestamp_assigner(record)`` (seconds, or any unit the job
    uses throughout), a finite number: NaN or an infinity fails the operator reading it.
    ``generator`` makes a ``WatermarkGenerator`` for each subtask, or each split of a
    source subtask (``for_generator``); the built-in ones trail the newest event time seen
    by an allowed out-of-orderness (``for_bounded_out_of_orderness``,
    ``for_monotonous_timestamps``). Generators are asked every ``auto_watermark_interval``
    seconds of the job's clock (an environment option, as in Flink); the end of a bounded
    stream advances the watermark to infinity. With ``idle_timeout``, a split or subtask
    that read nothing for that many seconds goes idle: it stops holding the watermark back
    until it reads again. With ``alignment``, the source pauses while it runs ahead of its
    group (``with_watermark_alignment``).

    Build one with a ``for_...`` class method, then ``.with_timestamp_assigner(fn)``, and
    optionally ``.with_idleness(seconds)`` and ``.with_watermark_alignment(...)``.
    """

    generator: GeneratorFactory = _MONOTONOUS
    timestamp_assigner: Callable[[Any], float] | None = None
    idle_timeout: float | None = None
    alignment: WatermarkAlignment | None = None

    def __post_init__(self) -> None:
        if not callable(self.generator):
            raise ValueError(
                f"the watermark generator factory must be callable; got {self.generator!r}"
            )
        if self.idle_timeout is not None and not self.idle_timeout > 0:
            raise ValueError(f"the idleness timeout must be > 0 seconds; got {self.idle_timeout!r}")

    @classmethod
    def for_generator(cls, factory: GeneratorFactory) -> WatermarkStrategy:
        """Watermarks from ``factory(context)``: a generator per subtask or source split.

        ``context`` is a ``WatermarkGeneratorContext`` (operator uid, subtask, split, clock).
        """
        return cls(factory)

    @classmethod
    def for_bounded_out_of_orderness(cls, max_out_of_orderness: float) -> WatermarkStrategy:
        """Records may arrive up to ``max_out_of_orderness`` behind the newest one seen."""
        if not max_out_of_orderness >= 0:
            raise ValueError(
                f"max_out_of_orderness must be 0 or more; got {max_out_of_orderness!r}"
            )
        return cls(partial(_bounded, max_out_of_orderness))

    @classmethod
    def for_monotonous_timestamps(cls) -> WatermarkStrategy:
        """Event time never goes back: the watermark follows the newest timestamp."""
        return cls.for_bounded_out_of_orderness(0.0)

    def with_timestamp_assigner(self, assigner: Callable[[Any], float]) -> WatermarkStrategy:
        """Read each record's event time with ``assigner(record)``."""
        return replace(self, timestamp_assigner=assigner)

    def with_idleness(self, timeout: float) -> WatermarkStrategy:
        """Go idle after ``timeout`` seconds (job clock) without a record; active with the next.

        Per split in a source subtask that reads several (each split on its own), else per
        subtask.
        """
        return replace(self, idle_timeout=timeout)

    def with_watermark_alignment(
        self, group: str, max_drift: float, update_interval: float = 1.0
    ) -> WatermarkStrategy:
        """Pause a source subtask more than ``max_drift`` ahead of ``group``'s watermark.

        Checked every ``update_interval`` seconds of the job's clock (``WatermarkAlignment``).
        Only where the strategy is a source's (``from_source(..., watermark_strategy=)``).
        """
        return replace(self, alignment=WatermarkAlignment(group, max_drift, update_interval))

    def create_generator(self, context: WatermarkGeneratorContext) -> WatermarkGenerator[Any]:
        """Return a new generator for the records ``context`` names.

        Raises:
            TypeError: naming the operator, if the factory returned no ``WatermarkGenerator``.
        """
        generator = self.generator(context)
        if not isinstance(generator, WatermarkGenerator):
            raise TypeError(
                f"the watermark generator factory of operator '{context.uid}' returned "
                f"{generator!r}; it must return a WatermarkGenerator (on_event, "
                "on_periodic_emit)"
            )
        return generator


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
