"""WatermarkGenerator: how a stream's watermarks are made from its records (Flink's interface).

A generator sees every record with its event time (``on_event``) and is asked periodically,
every ``auto_watermark_interval`` of the job's clock (``on_periodic_emit``); either may emit
a watermark, or mark its stream idle or active, through the ``WatermarkOutput`` it is
given. A *periodic* generator emits from ``on_periodic_emit`` only; a *punctuated* one emits
from ``on_event``, and such a watermark takes effect right after the record it was emitted
for, whatever the batch size. ``BoundedOutOfOrdernessWatermarks`` is the built-in periodic
generator. No event loop here.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from lockgate.engine.events import Watermark
from lockgate.engine.time.clock import Clock

__all__ = [
    "BoundedOutOfOrdernessWatermarks",
    "WatermarkGenerator",
    "WatermarkGeneratorContext",
    "WatermarkOutput",
]

T_contra = TypeVar("T_contra", contravariant=True)


class WatermarkOutput(Protocol):
    """Where a generator emits: a watermark, or its stream's idleness (Flink's interface).

    Emitting a watermark also marks the output active again, as in Flink. A watermark that
    is not above the output's current one changes nothing but that.
    """

    def emit_watermark(self, watermark: Watermark) -> None:
        """Declare that no record at or below ``watermark.timestamp`` follows."""

    def mark_idle(self) -> None:
        """Operators downstream stop waiting for this output's watermarks, until it emits."""

    def mark_active(self) -> None:
        """Count this output again (an idle one no longer is)."""


@dataclass(frozen=True, slots=True)
class WatermarkGeneratorContext:
    """Where a generator runs: the operator, the subtask, the source split, and the clock.

    ``split_id`` names the source split whose records the generator sees (each split of a
    source subtask has its own generator), or is ``None`` for all of a subtask's records.
    ``clock`` is the job's clock: a generator that reads time reads it there, so tests and
    simulations drive it.
    """

    uid: str
    subtask_index: int
    split_id: str | None
    clock: Clock


class WatermarkGenerator(ABC, Generic[T_contra]):
    """Makes watermarks from the records of one stream (or one source split).

    ``on_event`` is called for every record, in order, with its event time;
    ``on_periodic_emit`` every ``auto_watermark_interval`` seconds of the job's clock (after
    every batch when the interval is 0). A watermark emitted in ``on_event`` leaves right
    after that record, before the next one; one emitted in ``on_periodic_emit`` after the
    records read so far. A generator belongs to one subtask: it is called by one task only.
    A periodic generator may also define ``on_timestamps(timestamps)``, which then replaces
    the ``on_event`` calls of a batch by one call with the batch's event times (as the
    built-in one does, so that periodic watermarks cost one call per batch).
    """

    @abstractmethod
    def on_event(self, event: T_contra, timestamp: float, output: WatermarkOutput) -> None:
        """See ``event``, whose event time is ``timestamp``; emit a watermark if it says one."""

    def on_periodic_emit(self, output: WatermarkOutput) -> None:
        """Emit the watermark the records seen so far allow, if any; by default nothing."""


class BoundedOutOfOrdernessWatermarks(WatermarkGenerator[Any]):
    """The watermark trails the newest event time seen by ``max_out_of_orderness``.

    It is just below ``newest - max_out_of_orderness`` (a record exactly that late is still
    on time), emitted periodically; nothing before the first record. With 0 it is the
    monotonous generator: event time never goes back.
    """

    __slots__ = ("_delay", "_newest")

    def __init__(self, max_out_of_orderness: float) -> None:
        if not max_out_of_orderness >= 0:
            raise ValueError(
                f"max_out_of_orderness must be 0 or more; got {max_out_of_orderness!r}"
            )
        self._delay = max_out_of_orderness
        self._newest = -math.inf

    def on_event(self, event: Any, timestamp: float, output: WatermarkOutput) -> None:
        """Remember ``timestamp`` if it is the newest."""
        if timestamp > self._newest:
            self._newest = timestamp

    def on_timestamps(self, timestamps: Sequence[float]) -> None:
        """``on_event`` for a whole batch at once: this generator emits nothing per record."""
        newest = max(timestamps, default=-math.inf)
        if newest > self._newest:
            self._newest = newest

    def on_periodic_emit(self, output: WatermarkOutput) -> None:
        """Emit the watermark just below ``newest - max_out_of_orderness``."""
        if self._newest != -math.inf:
            output.emit_watermark(Watermark(math.nextafter(self._newest - self._delay, -math.inf)))

    def __repr__(self) -> str:
        return f"<BoundedOutOfOrdernessWatermarks delay={self._delay} newest={self._newest}>"
