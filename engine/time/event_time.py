"""Event time as read from records: a finite number, or an error saying which record.

Timers and windows order event time on a heap and compare it with the watermark; a NaN
compares false with everything and would stop every later timer of the subtask, and an
infinite time has no window. So every event time read with a timestamp assigner is checked
here, where it is read, and the operator reading it fails, naming the record. Pure: no
event loop.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["event_time_of", "event_times_of"]


def event_time_of(assigner: Callable[[Any], float], record: Any) -> float:
    """``assigner(record)``, the record's event time; ``ValueError`` unless it is finite."""
    time = assigner(record)
    if not math.isfinite(time):
        raise ValueError(_not_finite(time, record))
    return time


def event_times_of(assigner: Callable[[Any], float], records: Sequence[Any]) -> list[float]:
    """The event times of ``records``, in order; ``ValueError`` naming the first not finite."""
    times = list(map(assigner, records))
    if not all(map(math.isfinite, times)):
        index = next(i for i, time in enumerate(times) if not math.isfinite(time))
        raise ValueError(_not_finite(times[index], records[index]))
    return times


def _not_finite(time: float, record: Any) -> str:
    return (
        f"the timestamp assigner gave record {record!r} the event time {time!r}; event time "
        "must be a finite number: fix the assigner, or filter such records out before it"
    )
