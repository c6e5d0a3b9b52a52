"""PassingSink: a counting sink that wakes a waiter once its count passes a threshold."""

from __future__ import annotations

from typing import Any

import anyio
from harness import CountingSink

from lockgate.engine import SinkContext, SinkWriter


class PassingSink(CountingSink):
    """Counts records as ``CountingSink`` does; ``wait_passed(n)`` returns once ``n`` arrived.

    One waiter at a time (a benchmark's driver); the check is one comparison per batch.
    """

    def __init__(self) -> None:
        super().__init__()
        self.threshold: int | None = None
        self._passed = anyio.Event()

    def create_writer(self, context: SinkContext) -> SinkWriter[Any]:
        return _PassingWriter(self)

    async def wait_passed(self, threshold: int) -> None:
        """Wait until at least ``threshold`` records were written."""
        if self.count >= threshold:
            return
        self.threshold, self._passed = threshold, anyio.Event()
        await self._passed.wait()

    def passed(self) -> None:
        """Called by the writer once the count reached the threshold."""
        self.threshold = None
        self._passed.set()


class _PassingWriter(SinkWriter[Any]):
    def __init__(self, sink: PassingSink) -> None:
        self._sink = sink

    async def write(self, records: list[Any]) -> None:
        sink = self._sink
        sink.count += len(records)
        if sink.threshold is not None and sink.count >= sink.threshold:
            sink.passed()
