"""Allowed lateness: when an event-time window is gone, so a record for it is late.

Flink counts event time in whole milliseconds: window ``[start, end)`` holds up to its max
timestamp ``end - 1``, is cleaned up at ``end - 1 + lateness``, and a record for it is late
once the watermark has reached that cleanup time (``isWindowLate``). lockgate counts event
time in floats, where the step below a time is one float, not one millisecond; a watermark
``w`` says no record at or below ``w`` follows. So Flink's millisecond ``T`` is the floats
``[T, T + 1)``, its watermark ``W`` is the largest float below ``W + 1`` (what
``WatermarkGenerator`` emits for the same records), and its cleanup time is the largest
float below ``end + lateness``: the sum taken exactly, never rounded first. Then lockgate
decides as Flink does for every float boundary when event time counts whole milliseconds
(or any whole unit below 2**53); ``nextafter(end, -inf) + lateness`` rounds up to
``end + lateness`` whenever that sum crosses a power of two, one watermark too late.
A record is late, for the late output, once the watermark reaches its own time plus the
lateness. Pure: no event loop.
"""

from __future__ import annotations

import math

__all__ = ["cleanup_time", "is_element_late"]


def cleanup_time(end: float, lateness: float) -> float:
    """The watermark at which a window ending at ``end`` is gone: the largest float below it.

    That is the largest float below the exact sum ``end + lateness``; without lateness, the
    window's max timestamp. A record for the window is late once the watermark is at or
    above it, and the window's state is cleared when a timer at it fires.
    """
    return math.nextafter(_sum_rounded_up(end, lateness), -math.inf)


def is_element_late(time: float, lateness: float, watermark: float) -> bool:
    """Whether a record at ``time`` is late: Flink's ``time + lateness <= watermark``.

    Taken on the exact sum, as ``cleanup_time``. Only a late record that no window took goes
    to the late output (``WindowOperator.isElementLate``): one that belongs to no window at
    all (in a gap between sliding windows) but is not late is dropped.
    """
    return _sum_rounded_up(time, lateness) <= watermark


def _sum_rounded_up(a: float, b: float) -> float:
    """The smallest float at or above the exact sum ``a + b``."""
    total = a + b
    if math.isinf(total):
        return total
    # Knuth's TwoSum: ``error`` is exactly what rounding ``a + b`` to ``total`` lost.
    b_part = total - a
    error = (a - (total - b_part)) + (b - b_part)
    return math.nextafter(total, math.inf) if error > 0 else total
