"""Evictors: which records leave a window before or after its function runs (Flink's).

An evictor sees the window's records as ``TimestampedValue``s each time the window fires,
in the order they came, and removes records from that list in place: ``evict_before`` runs
before the window function (the function never sees what it removed), ``evict_after``
after it. What remains is what the window holds from then on. A window with an evictor
keeps every record (no pre-aggregation), even for ``reduce`` and ``aggregate``, which then
fold the records that remain each time the window fires.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

__all__ = [
    "CountEvictor",
    "DeltaEvictor",
    "Evictor",
    "EvictorContext",
    "TimeEvictor",
    "TimestampedValue",
]

T = TypeVar("T")
W = TypeVar("W")


@dataclass(frozen=True, slots=True)
class TimestampedValue(Generic[T]):
    """A record of a window with the timestamp it carries (``None`` when it has none).

    Records of event-time windows have the event time their window was assigned by.
    Processing-time and global windows follow the job's clock, or none, yet their records
    carry the timestamps a watermark strategy upstream gave them, as in Flink; on a stream
    without one they have none, and a ``TimeEvictor`` leaves them alone.
    """

    value: T
    timestamp: float | None

    def has_timestamp(self) -> bool:
        """Whether the record has an event time."""
        return self.timestamp is not None


@dataclass(frozen=True, slots=True)
class EvictorContext:
    """What an evictor is told when the window fires: the operator's time.

    ``watermark`` is the operator's event time and ``processing_time`` the job's clock.
    """

    watermark: float
    processing_time: float

    def current_watermark(self) -> float:
        """The operator's watermark when the window fired."""
        return self.watermark

    def current_processing_time(self) -> float:
        """The job's clock when the window fired."""
        return self.processing_time


class Evictor(ABC, Generic[T, W]):
    """Removes records from a firing window, before and/or after its function (Flink's).

    ``elements`` is the window's records in arrival order and ``size`` their number; remove
    records by deleting them from the list (``del elements[i]``). Keep no per-window data
    in attributes: one evictor object serves every key and window.
    """

    @abstractmethod
    def evict_before(
        self, elements: list[TimestampedValue[T]], size: int, window: W, ctx: EvictorContext
    ) -> None:
        """Remove records the window function must not see."""

    @abstractmethod
    def evict_after(
        self, elements: list[TimestampedValue[T]], size: int, window: W, ctx: EvictorContext
    ) -> None:
        """Remove records after the window function saw them."""

    def problems(self) -> list[str]:
        """What is wrong with the evictor's options, if anything."""
        return []


class _BeforeOrAfter(Evictor[Any, Any]):
    """An evictor that evicts either before the function or (``do_evict_after``) after it."""

    do_evict_after: bool

    def evict_before(
        self, elements: list[TimestampedValue[Any]], size: int, window: Any, ctx: EvictorContext
    ) -> None:
        """Evict now, unless this evictor evicts after the function."""
        if not self.do_evict_after:
            self.evict(elements, size)

    def evict_after(
        self, elements: list[TimestampedValue[Any]], size: int, window: Any, ctx: EvictorContext
    ) -> None:
        """Evict now, if this evictor evicts after the function."""
        if self.do_evict_after:
            self.evict(elements, size)

    def evict(self, elements: list[TimestampedValue[Any]], size: int) -> None:
        """Remove the records this evictor removes."""
        raise NotImplementedError


@dataclass(frozen=True)
class CountEvictor(_BeforeOrAfter):
    """Keeps the last ``max_count`` records of a window: the oldest go first.

    ``count_window(size, slide)`` is ``GlobalWindows`` with this evictor (``size``) and a
    ``CountTrigger`` (``slide``).
    """

    max_count: int
    do_evict_after: bool = False

    @classmethod
    def of(cls, max_count: int, do_evict_after: bool = False) -> CountEvictor:  # noqa: FBT001, FBT002 - Flink's signature
        """Keep ``max_count`` records; after the function if ``do_evict_after``."""
        return cls(max_count, do_evict_after)

    def evict(self, elements: list[TimestampedValue[Any]], size: int) -> None:
        """Remove the oldest records beyond ``max_count``."""
        if size > self.max_count:
            del elements[: size - self.max_count]

    def problems(self) -> list[str]:
        """A count that is not a whole number >= 1."""
        count = self.max_count
        if isinstance(count, int) and not isinstance(count, bool) and count >= 1:
            return []
        return [f"CountEvictor needs a max_count >= 1; got {count!r}"]


@dataclass(frozen=True)
class TimeEvictor(_BeforeOrAfter):
    """Keeps the records within ``window_size`` seconds of the window's newest timestamp.

    Removes every record at or before ``newest - window_size``, by the timestamps records
    carry, in any window (processing-time and global ones too, downstream of a watermark
    strategy); records without a timestamp are never removed (when the first has none, the
    evictor does nothing, as in Flink).
    """

    window_size: float
    do_evict_after: bool = False

    @classmethod
    def of(cls, window_size: float, do_evict_after: bool = False) -> TimeEvictor:  # noqa: FBT001, FBT002 - Flink's signature
        """Keep ``window_size`` seconds; after the function if ``do_evict_after``."""
        return cls(window_size, do_evict_after)

    def evict(self, elements: list[TimestampedValue[Any]], size: int) -> None:
        """Remove the records older than the cut-off."""
        if not elements or not elements[0].has_timestamp():
            return
        newest = max(e.timestamp for e in elements if e.timestamp is not None)
        cutoff = newest - self.window_size
        elements[:] = [e for e in elements if e.timestamp is None or e.timestamp > cutoff]

    def problems(self) -> list[str]:
        """A size that is not a number of seconds >= 0."""
        size = self.window_size
        if isinstance(size, bool) or not isinstance(size, int | float) or not size >= 0:
            return [f"TimeEvictor needs a window_size >= 0 seconds; got {size!r}"]
        return []


@dataclass(frozen=True)
class DeltaEvictor(_BeforeOrAfter):
    """Removes the records whose ``delta(record, newest)`` is ``threshold`` or more.

    ``delta_function(a, b)`` measures how far apart two records are; the newest record is
    the last one to arrive.
    """

    threshold: float
    delta_function: Callable[[Any, Any], float]
    do_evict_after: bool = False

    @classmethod
    def of(
        cls,
        threshold: float,
        delta_function: Callable[[Any, Any], float],
        do_evict_after: bool = False,  # noqa: FBT001, FBT002 - Flink's signature
    ) -> DeltaEvictor:
        """Remove records ``threshold`` or more from the newest; after if ``do_evict_after``."""
        return cls(threshold, delta_function, do_evict_after)

    def evict(self, elements: list[TimestampedValue[Any]], size: int) -> None:
        """Remove the records too far from the newest one."""
        if not elements:
            return
        newest, delta, threshold = elements[-1].value, self.delta_function, self.threshold
        elements[:] = [e for e in elements if delta(e.value, newest) < threshold]

    def problems(self) -> list[str]:
        """A delta function that cannot be called."""
        function: object = self.delta_function
        if callable(function):
            return []
        return [f"DeltaEvictor needs a delta_function(a, b); got {function!r}"]
