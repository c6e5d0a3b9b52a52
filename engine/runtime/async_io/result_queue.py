"""Result queues: which results of asynchronous calls may be emitted, and in what order.

The pure core of Flink's ``StreamElementQueue`` (ordered and unordered). No event loop: the
async operator adds an entry per input record, completes entries as calls finish, and pops
whatever may be emitted. Watermarks are fences: no result crosses one in either mode.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any, Protocol

from lockgate.engine.events import Watermark

__all__ = [
    "AsyncEntry",
    "OrderedResultQueue",
    "ResultQueue",
    "UnorderedResultQueue",
    "result_queue",
]


@dataclass(slots=True, eq=False)
class AsyncEntry:
    """One input record in a queue; ``results`` is ``None`` until its call completes.

    ``timestamp`` is the input's, on a stream with event time: its results keep it.
    """

    input: Any
    results: list[Any] | None = None
    timestamp: float | None = None


class ResultQueue(Protocol):
    """What the async operator needs of a queue, ordered or not.

    ``pop_ready`` returns the results that may be emitted now and, if every record before
    a watermark has been emitted, that watermark (call again after emitting it).
    ``inputs`` lists the records of every entry not yet emitted, in input order: what a
    checkpoint stores so that a restore can call them again.
    """

    def __len__(self) -> int:
        """Records in the queue: called, or completed and not yet emitted."""
        ...

    @property
    def is_empty(self) -> bool:
        """Whether nothing is queued: no record and no watermark."""
        ...

    def add(self, record: Any, timestamp: float | None = None) -> AsyncEntry:
        """Queue ``record``; return the entry to ``complete`` when its call finishes."""
        ...

    def add_watermark(self, watermark: Watermark) -> None:
        """Queue a watermark behind every record added so far."""
        ...

    def complete(self, entry: AsyncEntry, results: list[Any]) -> None:
        """Record the results of ``entry``'s call."""
        ...

    def pop_ready(self) -> tuple[list[Any], Watermark | None]:
        """Remove and return the results that may be emitted now, and a watermark reached."""
        ...

    def inputs(self) -> list[Any]:
        """The records of every entry not yet emitted, in input order."""
        ...

    def stamped_inputs(self) -> list[tuple[float | None, Any]]:
        """``inputs()``, each as a ``(timestamp, record)`` pair."""
        ...


def result_queue(*, ordered: bool) -> ResultQueue:
    """Return an empty ordered or unordered queue."""
    return OrderedResultQueue() if ordered else UnorderedResultQueue()


class OrderedResultQueue:
    """Emits results in input order: a completed entry waits for every earlier one.

    A watermark waits for the records before it and holds back the ones after it.
    """

    def __init__(self) -> None:
        self._items: deque[AsyncEntry | Watermark] = deque()
        self._size = 0

    def __len__(self) -> int:
        """Records in the queue: called, or completed and not yet emitted."""
        return self._size

    @property
    def is_empty(self) -> bool:
        """Whether nothing is queued: no record and no watermark."""
        return not self._items

    def add(self, record: Any, timestamp: float | None = None) -> AsyncEntry:
        """Queue ``record``; return the entry to ``complete`` when its call finishes."""
        entry = AsyncEntry(record, None, timestamp)
        self._items.append(entry)
        self._size += 1
        return entry

    def add_watermark(self, watermark: Watermark) -> None:
        """Queue a watermark behind every record added so far."""
        self._items.append(watermark)

    def complete(self, entry: AsyncEntry, results: list[Any]) -> None:
        """Record the results of ``entry``'s call (a list: a fallback may give several)."""
        _set_results(entry, results)

    def pop_ready(self) -> tuple[list[Any], Watermark | None]:
        """Remove and return the completed prefix, up to and including a watermark."""
        items = self._items
        out: list[Any] = []
        while items:
            head = items[0]
            if isinstance(head, Watermark):
                items.popleft()
                return out, head
            if head.results is None:
                break
            items.popleft()
            self._size -= 1
            out.extend(head.results)
        return out, None

    def inputs(self) -> list[Any]:
        """The records of every entry not yet emitted, in input order."""
        return [item.input for item in self._items if isinstance(item, AsyncEntry)]

    def stamped_inputs(self) -> list[tuple[float | None, Any]]:
        """``inputs()``, each as a ``(timestamp, record)`` pair."""
        return [(i.timestamp, i.input) for i in self._items if isinstance(i, AsyncEntry)]

    def __repr__(self) -> str:
        return f"<OrderedResultQueue size={self._size}>"


@dataclass(slots=True, eq=False)
class _Segment:
    """The records between two watermarks, in input order, and the watermark that ends it."""

    entries: dict[AsyncEntry, None] = field(default_factory=dict)
    completed: deque[AsyncEntry] = field(default_factory=deque)
    fence: Watermark | None = None


class UnorderedResultQueue:
    """Emits results as calls complete, but never across a watermark.

    The results of records before a watermark come out, then the watermark, then the results
    of later records; within those bounds, in completion order.
    """

    def __init__(self) -> None:
        self._segments: deque[_Segment] = deque([_Segment()])
        self._where: dict[AsyncEntry, _Segment] = {}

    def __len__(self) -> int:
        """Records in the queue: called, or completed and not yet emitted."""
        return len(self._where)

    @property
    def is_empty(self) -> bool:
        """Whether nothing is queued: no record and no watermark."""
        first = self._segments[0]
        return len(self._segments) == 1 and not first.entries and first.fence is None

    def add(self, record: Any, timestamp: float | None = None) -> AsyncEntry:
        """Queue ``record``; return the entry to ``complete`` when its call finishes."""
        entry = AsyncEntry(record, None, timestamp)
        segment = self._segments[-1]
        if segment.fence is not None:
            segment = _Segment()
            self._segments.append(segment)
        segment.entries[entry] = None
        self._where[entry] = segment
        return entry

    def add_watermark(self, watermark: Watermark) -> None:
        """Close the current segment with ``watermark``; later records start a new one."""
        last = self._segments[-1]
        if last.fence is not None:
            last = _Segment()
            self._segments.append(last)
        last.fence = watermark

    def complete(self, entry: AsyncEntry, results: list[Any]) -> None:
        """Record the results of ``entry``'s call (a list: a fallback may give several)."""
        _set_results(entry, results)
        self._where[entry].completed.append(entry)

    def pop_ready(self) -> tuple[list[Any], Watermark | None]:
        """Remove and return the first segment's completed results; its watermark once empty."""
        segment = self._segments[0]
        out: list[Any] = []
        completed, entries, where = segment.completed, segment.entries, self._where
        while completed:
            entry = completed.popleft()
            del entries[entry], where[entry]
            out.extend(entry.results or ())
        if entries or segment.fence is None:
            return out, None
        self._segments.popleft()
        if not self._segments:
            self._segments.append(_Segment())
        return out, segment.fence

    def inputs(self) -> list[Any]:
        """The records of every entry not yet emitted, in input order."""
        return [entry.input for segment in self._segments for entry in segment.entries]

    def stamped_inputs(self) -> list[tuple[float | None, Any]]:
        """``inputs()``, each as a ``(timestamp, record)`` pair."""
        return [(e.timestamp, e.input) for segment in self._segments for e in segment.entries]

    def __repr__(self) -> str:
        return f"<UnorderedResultQueue size={len(self)} segments={len(self._segments)}>"


def _set_results(entry: AsyncEntry, results: list[Any]) -> None:
    if entry.results is not None:
        raise ValueError(f"the entry of {entry.input!r} was completed twice")
    entry.results = results
