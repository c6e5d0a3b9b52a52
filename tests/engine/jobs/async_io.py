"""Test doubles for the async_map tests: calls the test releases, a sink that logs barriers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import anyio.lowlevel

from lockgate.engine import CompletedCheckpoint, Sink, SinkContext, SinkWriter, StreamEnvironment
from lockgate.engine.checkpointing.snapshots import ASYNC_INPUTS_STATE
from lockgate.engine.restore.loader import load_restored_state
from lockgate.engine.restore.resolve import RestoreSettings


class Changes:
    """Lets a test wait until a condition over shared test doubles holds; every change
    notifies it. Shared, not copied, by every subtask."""

    def __init__(self) -> None:
        self._waiters: list[tuple[Callable[[], bool], anyio.Event]] = []

    def __deepcopy__(self, memo: dict[int, Any]) -> Changes:
        return self

    def notify(self) -> None:
        for condition, event in self._waiters:
            if condition():
                event.set()

    async def wait_until(self, condition: Callable[[], bool], *, within: float = 10.0) -> None:
        event = anyio.Event()
        self._waiters.append((condition, event))
        try:
            with anyio.fail_after(within):
                if not condition():
                    await event.wait()
        finally:
            self._waiters.remove((condition, event))


class HeldCalls:
    """An async function whose call for a record waits until the test releases that record.

    ``started`` lists the records in the order their calls began; ``active`` counts the calls
    inside the function now and ``peak`` the most there ever were at once. ``opened`` lets
    every call through at once. Shared by every subtask and every attempt.
    """

    def __init__(self, changes: Changes, result: Callable[[Any], Any] = lambda r: r) -> None:
        self.changes = changes
        self.result = result
        self.started: list[Any] = []
        self.released: list[Any] = []
        self.active = 0
        self.peak = 0
        self.opened = False
        self._events: dict[Any, anyio.Event] = {}

    def __deepcopy__(self, memo: dict[int, Any]) -> HeldCalls:
        return self

    async def __call__(self, record: Any) -> Any:
        self.active += 1
        self.peak = max(self.peak, self.active)
        self.started.append(record)
        self.changes.notify()
        try:
            if not self.opened:
                await self._event(record).wait()
        finally:
            self.active -= 1
        return self.result(record)

    def release(self, *records: Any) -> None:
        for record in records:
            self.released.append(record)
            self._event(record).set()

    def open(self) -> None:
        """Release every call, now and later."""
        self.opened = True
        for event in self._events.values():
            event.set()

    @property
    def waiting(self) -> list[Any]:
        """Records whose calls started and were not released."""
        released = set(self.released)
        return [r for r in self.started if r not in released and not self.opened]

    async def wait_started(self, count: int) -> None:
        await self.changes.wait_until(lambda: len(self.started) >= count)

    def _event(self, record: Any) -> anyio.Event:
        return self._events.setdefault(record, anyio.Event())


class LoggingSink(Sink[Any]):
    """Logs, in order, every record written and every barrier reaching the sink.

    Entries: ``record`` for each record, ``("barrier", id)`` at each checkpoint's
    ``snapshot_state`` and ``"finish"`` when the input ended.
    """

    def __init__(self, changes: Changes) -> None:
        self.changes = changes
        self.log: list[Any] = []

    def create_writer(self, context: SinkContext) -> SinkWriter[Any]:
        return _LoggingWriter(self)

    @property
    def records(self) -> list[Any]:
        return [e for e in self.log if e != "finish" and not _is_barrier(e)]

    async def wait_logged(self, *entries: Any) -> None:
        await self.changes.wait_until(lambda: all(e in self.log for e in entries))


class _LoggingWriter(SinkWriter[Any]):
    def __init__(self, sink: LoggingSink) -> None:
        self.sink = sink

    async def write(self, records: list[Any]) -> None:
        self.sink.log.extend(records)
        self.sink.changes.notify()

    async def snapshot_state(self, checkpoint_id: int) -> list[Any]:
        self.sink.log.append(("barrier", checkpoint_id))
        self.sink.changes.notify()
        return []

    async def finish(self) -> None:
        self.sink.log.append("finish")
        self.sink.changes.notify()


def _is_barrier(entry: Any) -> bool:
    return isinstance(entry, tuple) and len(entry) == 2 and entry[0] == "barrier"


async def in_flight_state(
    env: StreamEnvironment, checkpoint: CompletedCheckpoint, uid: str
) -> list[list[Any]]:
    """The records of calls in flight that ``checkpoint`` holds for ``uid``, per subtask."""
    restore = RestoreSettings(checkpoint.metadata, env.checkpoint_storage, "", own_checkpoint=True)
    restored = await load_restored_state(restore, env.plan(), env.max_parallelism)
    return [snapshot.lists.get(ASYNC_INPUTS_STATE, []) for snapshot in restored[uid]]


async def wait_until(condition: Callable[[], bool], *, within: float = 10.0) -> None:
    """Yield to the event loop until ``condition`` holds (for conditions nothing notifies,
    such as job metrics); no sleeping."""
    with anyio.fail_after(within):
        while not condition():
            await anyio.lowlevel.checkpoint()
