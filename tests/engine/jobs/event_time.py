"""Test doubles for the event-time tests: a sink that logs records and watermarks in order."""

from __future__ import annotations

import math
from typing import Any

from lockgate.engine import Sink, SinkContext, SinkWriter, Watermark
from tests.engine.jobs.async_io import Changes


class WatermarkLog(Sink[Any]):
    """Logs, per subtask in arrival order, each record and each watermark (as a float).

    Shared by every copy of a job; ``changes`` is notified after each entry.
    """

    def __init__(self, changes: Changes | None = None) -> None:
        self.changes = changes or Changes()
        self.logs: dict[int, list[Any]] = {}

    def create_writer(self, context: SinkContext) -> SinkWriter[Any]:
        return _LogWriter(self, self.logs.setdefault(context.subtask_index, []))

    def __deepcopy__(self, memo: dict[int, Any]) -> WatermarkLog:
        return self

    def records(self) -> list[Any]:
        """Every record, subtask by subtask."""
        return [e for log in self.logs.values() for e in log if not isinstance(e, Watermark)]

    def watermarks(self, subtask: int = 0) -> list[float]:
        """The watermarks subtask ``subtask`` received, in order."""
        return [e.timestamp for e in self.logs.get(subtask, []) if isinstance(e, Watermark)]

    def late_records(self, event_time: Any = lambda record: record) -> list[Any]:
        """Records that arrived at or below a watermark their subtask had already received."""
        late = []
        for log in self.logs.values():
            watermark = -math.inf
            for entry in log:
                if isinstance(entry, Watermark):
                    watermark = entry.timestamp
                elif event_time(entry) <= watermark:
                    late.append(entry)
        return late

    async def wait_for_watermark(self, at_least: float, subtask: int = 0) -> None:
        """Wait until subtask ``subtask`` received a watermark of ``at_least`` or more."""
        await self.changes.wait_until(lambda: any(w >= at_least for w in self.watermarks(subtask)))


class _LogWriter(SinkWriter[Any]):
    def __init__(self, sink: WatermarkLog, log: list[Any]) -> None:
        self.sink = sink
        self.log = log

    async def write(self, records: list[Any]) -> None:
        self.log.extend(records)
        self.sink.changes.notify()

    async def write_watermark(self, watermark: Watermark) -> None:
        self.log.append(watermark)
        self.sink.changes.notify()


def below(timestamp: float) -> float:
    """The watermark a strategy without out-of-orderness derives from ``timestamp``."""
    return math.nextafter(timestamp, -math.inf)
