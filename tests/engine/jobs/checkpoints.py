"""Test doubles for the checkpoint and recovery tests: a gated source, a storage that fails
on demand, and functions and sinks that log the checkpoint notifications they receive."""

from __future__ import annotations

import threading
from collections.abc import Container, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.from_thread
import anyio.to_thread

from lockgate.actors import ActorStopped
from lockgate.engine import (
    JobClient,
    JobError,
    KeyedProcessFunction,
    MemoryCheckpointStorage,
    ProcessContext,
    RuntimeContext,
    Sink,
    SinkContext,
    SinkWriter,
    Source,
    SourceContext,
    SourceReader,
    SourceSplit,
    ValueStateDescriptor,
)
from lockgate.engine.checkpointing.messages import StateHandle


class Gate:
    """Where a ``GatedSource`` reader stops until the test opens it; shared by every copy.

    ``reading`` is set by the first read (the job is deployed), ``reached`` when the reader
    arrives at the closed gate.
    """

    def __init__(self, *, opened: bool = False) -> None:
        self.reading = anyio.Event()
        self.reached = anyio.Event()
        self.opened = anyio.Event()
        if opened:
            self.opened.set()

    def __deepcopy__(self, memo: dict[int, Any]) -> Gate:
        return self


class GatedSource(Source[int]):
    """Reads ``range(count)`` with one reader, stopping before ``gate_at`` until the gate opens.

    A first run with a closed gate cannot finish, so a test can checkpoint and cancel it
    knowing it is still running; a second run with an open gate reads on to the end.
    """

    def __init__(self, count: int, *, gate_at: int, gate: Gate) -> None:
        self.count = count
        self.gate_at = gate_at
        self.gate = gate

    def create_splits(self, parallelism: int) -> list[SourceSplit]:
        return [SourceSplit("all", 0)]

    def create_reader(self, splits: Sequence[SourceSplit], context: SourceContext) -> _Gated:
        return _Gated(self, list(splits))


class _Gated(SourceReader[int]):
    def __init__(self, source: GatedSource, splits: list[SourceSplit]) -> None:
        self.source = source
        self.next = splits[0].position if splits else source.count

    async def read(self, max_records: int) -> list[int]:
        await anyio.lowlevel.checkpoint()
        source = self.source
        source.gate.reading.set()
        if self.next == source.gate_at and not source.gate.opened.is_set():
            source.gate.reached.set()
            await source.gate.opened.wait()
        stop = source.gate_at if self.next < source.gate_at else source.count
        batch = list(range(self.next, min(stop, self.next + max_records)))
        self.next += len(batch)
        return batch

    def snapshot_splits(self) -> list[SourceSplit]:
        return [SourceSplit("all", self.next)]


class FailingStorage(MemoryCheckpointStorage):
    """Memory storage whose ``write_state`` raises for the chosen checkpoints of one subtask.

    ``uid`` and ``subtask_index`` choose the operator subtask whose state write fails (its
    subtask then declines with ``STORAGE_FAILED``); ``failed`` logs every refused write.
    """

    def __init__(self, checkpoint_ids: Container[int], *, uid: str, subtask_index: int = 0) -> None:
        super().__init__()
        self.checkpoint_ids = checkpoint_ids
        self.uid = uid
        self.subtask_index = subtask_index
        self.failed: list[int] = []

    async def write_state(
        self, job: str, checkpoint_id: int, name: str, data: bytes
    ) -> StateHandle:
        chosen = name.startswith(f"{self.uid}-") and name.endswith(f"-{self.subtask_index}")
        if chosen and checkpoint_id in self.checkpoint_ids:
            self.failed.append(checkpoint_id)
            raise OSError(f"injected storage failure for checkpoint {checkpoint_id}")
        return await super().write_state(job, checkpoint_id, name, data)


@dataclass(frozen=True, slots=True)
class Notification:
    """One checkpoint notification one participant received."""

    who: str
    method: str
    checkpoint_id: int


@dataclass
class _Waiter:
    method: str
    checkpoint_id: int
    count: int
    done: anyio.Event = field(default_factory=anyio.Event)


class NotificationLog:
    """Every checkpoint notification of a job, shared by all copies of the functions using it."""

    def __init__(self) -> None:
        self.notifications: list[Notification] = []
        self._waiters: list[_Waiter] = []

    def __deepcopy__(self, memo: dict[int, Any]) -> NotificationLog:
        return self

    def record(self, who: str, method: str, checkpoint_id: int) -> None:
        self.notifications.append(Notification(who, method, checkpoint_id))
        for waiter in self._waiters:
            if self.count(waiter.method, waiter.checkpoint_id) >= waiter.count:
                waiter.done.set()

    def count(self, method: str, checkpoint_id: int) -> int:
        return len(self.who(method, checkpoint_id))

    def who(self, method: str, checkpoint_id: int) -> list[str]:
        return sorted(
            n.who
            for n in self.notifications
            if (n.method, n.checkpoint_id) == (method, checkpoint_id)
        )

    async def wait_count(self, method: str, checkpoint_id: int, count: int) -> None:
        """Wait until ``count`` participants received ``method`` for ``checkpoint_id``."""
        waiter = _Waiter(method, checkpoint_id, count)
        self._waiters.append(waiter)
        if self.count(method, checkpoint_id) >= count:
            waiter.done.set()
        await waiter.done.wait()


class ListeningCounter(KeyedProcessFunction[Any, Any, tuple[Any, int]]):
    """Counts records per key and emits ``(key, count)``; logs its notifications."""

    def __init__(self, log: NotificationLog) -> None:
        self.log = log

    def open(self, context: RuntimeContext) -> None:
        self.count = context.get_state(ValueStateDescriptor[int]("count", default=0))
        self.name = f"{context.uid}[{context.subtask_index}]"

    def process_element(self, value: Any, ctx: ProcessContext[Any]) -> Any:
        count = self.count.value() + 1
        self.count.update(count)
        yield (ctx.get_current_key(), count)

    def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        self.log.record(self.name, "complete", checkpoint_id)

    def notify_checkpoint_aborted(self, checkpoint_id: int) -> None:
        self.log.record(self.name, "aborted", checkpoint_id)


class ListeningSink(Sink[Any]):
    """A sink that counts records and logs its writers' notifications as ``sink[<index>]``.

    ``received`` is set by the first write: the job is deployed and records flow.
    With ``block_at``, each writer's ``snapshot_state`` for that checkpoint sets
    ``snapshot_started`` and then waits until ``release`` is set.
    """

    def __init__(self, log: NotificationLog, *, block_at: int | None = None) -> None:
        self.log = log
        self.block_at = block_at
        self.snapshot_started = anyio.Event()
        self.release = anyio.Event()
        self.records = 0
        self.received = anyio.Event()

    def create_writer(self, context: SinkContext) -> SinkWriter[Any]:
        return _ListeningWriter(self, f"sink[{context.subtask_index}]")


class _ListeningWriter(SinkWriter[Any]):
    def __init__(self, sink: ListeningSink, name: str) -> None:
        self.sink = sink
        self.name = name

    async def write(self, records: list[Any]) -> None:
        self.sink.records += len(records)
        self.sink.received.set()

    async def snapshot_state(self, checkpoint_id: int) -> list[Any]:
        if checkpoint_id == self.sink.block_at:
            self.sink.snapshot_started.set()
            await self.sink.release.wait()
        return []

    async def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        self.sink.log.record(self.name, "complete", checkpoint_id)

    async def notify_checkpoint_aborted(self, checkpoint_id: int) -> None:
        self.sink.log.record(self.name, "aborted", checkpoint_id)


class ThreadBlockedStorage(MemoryCheckpointStorage):
    """Memory storage whose write of ``uid``'s state waits in a worker thread for ``release``.

    A worker thread cannot be cancelled, as the engine's own encoding and file writes cannot:
    the subtask goes on once the thread returns, even if the job was cancelled meanwhile.
    """

    def __init__(self, *, uid: str) -> None:
        super().__init__()
        self.uid = uid
        self.writing = anyio.Event()
        self.release = threading.Event()

    async def write_state(
        self, job: str, checkpoint_id: int, name: str, data: bytes
    ) -> StateHandle:
        if name.startswith(f"{self.uid}-"):
            await anyio.to_thread.run_sync(self._wait_for_release)
        return await super().write_state(job, checkpoint_id, name, data)

    def _wait_for_release(self) -> None:
        anyio.from_thread.run_sync(self.writing.set)
        self.release.wait(10.0)


async def cancel_and_wait(job: JobClient) -> None:
    """Cancel the job and wait until it ended.

    Works around an engine bug (see ``test_checkpoint_cancellation``): a subtask that
    acknowledges a checkpoint after the cancellation stopped the coordinator fails the job
    with ``ActorStopped``. That failure only is ignored here, so that tests about something
    else do not trip on it; any other failure is raised.
    """
    job.cancel()
    try:
        await job.wait()
    except JobError as failure:
        if not isinstance(failure.__cause__, ActorStopped):
            raise


class SlowRestoreStorage(MemoryCheckpointStorage):
    """Memory storage whose ``read_state`` waits for ``release``: a restore that takes time."""

    def __init__(self) -> None:
        super().__init__()
        self.reading = anyio.Event()
        self.release = anyio.Event()

    async def read_state(self, handle: StateHandle) -> bytes:
        self.reading.set()
        await self.release.wait()
        return await super().read_state(handle)


class StalledSink(Sink[Any]):
    """A sink whose writers wait in ``write`` until ``release`` is set; ``writing`` says one
    is waiting. Stalling the sink backpressures the job: its input channels fill up."""

    def __init__(self) -> None:
        self.writing = anyio.Event()
        self.release = anyio.Event()

    def create_writer(self, context: SinkContext) -> SinkWriter[Any]:
        return _StalledWriter(self)


class _StalledWriter(SinkWriter[Any]):
    def __init__(self, sink: StalledSink) -> None:
        self.sink = sink

    async def write(self, records: list[Any]) -> None:
        self.sink.writing.set()
        await self.sink.release.wait()
