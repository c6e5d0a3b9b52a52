"""PassingSink: a counting sink that wakes a waiter once its count passes a threshold.

``PassingCollectSink`` does the same as a ``CollectSink``.
"""

from __future__ import annotations

from typing import Any

import anyio
from harness import CountingSink

from lockgate.connectors import CollectSink
from lockgate.connectors.memory import CollectTransaction
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


class PassingCollectSink(CollectSink[Any]):
    """A ``CollectSink`` that counts what it is written as ``PassingSink`` does, and waits alike.

    ``count`` is the records written into its transactions, committed or not; ``results``
    holds the committed ones, as any ``CollectSink``'s.
    """

    def __init__(self) -> None:
        super().__init__()
        self._passing = PassingSink()

    @property
    def count(self) -> int:
        """Records written so far."""
        return self._passing.count

    async def wait_passed(self, threshold: int) -> None:
        """Wait until at least ``threshold`` records were written."""
        await self._passing.wait_passed(threshold)

    async def write(self, txn: CollectTransaction[Any], records: list[Any]) -> None:
        await super().write(txn, records)
        passing = self._passing
        passing.count += len(records)
        if passing.threshold is not None and passing.count >= passing.threshold:
            passing.passed()
