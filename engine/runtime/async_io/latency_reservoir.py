"""LatencyReservoir: percentiles of the most recent call latencies, in bounded memory."""

from __future__ import annotations

import math
from collections import deque

__all__ = ["LatencyReservoir"]


class LatencyReservoir:
    """Keeps the last ``size`` latencies (a sliding window) and answers percentiles over them.

    Memory stays bounded however many calls are recorded; ``percentile`` uses the
    nearest-rank method and returns ``None`` before the first sample. Pure: no clock.
    """

    def __init__(self, size: int = 1024) -> None:
        if size < 1:
            raise ValueError(f"a reservoir holds at least one sample; got size={size}")
        self._samples: deque[float] = deque(maxlen=size)

    def record(self, seconds: float) -> None:
        """Add one latency, dropping the oldest once the reservoir is full."""
        self._samples.append(seconds)

    def percentiles(self, *ranks: float) -> tuple[float | None, ...]:
        """Return the nearest-rank percentile for each of ``ranks`` (0 < rank <= 100)."""
        ordered = sorted(self._samples)
        return tuple(_nearest_rank(ordered, rank) for rank in ranks)

    def __len__(self) -> int:
        """How many samples the reservoir holds now."""
        return len(self._samples)


def _nearest_rank(ordered: list[float], rank: float) -> float | None:
    if not 0 < rank <= 100:
        raise ValueError(f"a percentile rank lies in (0, 100]; got {rank}")
    if not ordered:
        return None
    return ordered[max(0, math.ceil(rank / 100 * len(ordered)) - 1)]
