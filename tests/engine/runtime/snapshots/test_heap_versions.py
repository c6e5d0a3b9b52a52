"""A checkpoint's heap snapshots are released when its asynchronous part ends, however it
ends (written, failed, cancelled by an abort) or when a held unaligned snapshot is dropped,
and the store then folds its layers back into one."""

from __future__ import annotations

from typing import Any

import anyio

from lockgate.engine import MemoryCheckpointStorage
from lockgate.engine.checkpointing.messages import (
    AcknowledgeCheckpoint,
    DeclineCheckpoint,
    StateHandle,
    SubtaskCheckpointStats,
    SubtaskId,
)
from lockgate.engine.events import CheckpointBarrier
from lockgate.engine.runtime.snapshots.capture import StateCapture
from lockgate.engine.runtime.snapshots.subtask_checkpointer import (
    CheckpointContext,
    SubtaskCheckpointer,
)
from lockgate.engine.state import KeyedStateStatistics, KeyedStateStore, ValueStateDescriptor
from lockgate.engine.testing import ManualClock
from tests.engine.jobs.checkpoints import FailingStorage

UID = "sums"
VALUE = ValueStateDescriptor[int]("value")


class Coordinator:
    """Keeps what a subtask tells its checkpoint coordinator."""

    def __init__(self) -> None:
        self.told: list[Any] = []

    def tell_control(self, message: Any) -> None:
        self.told.append(message)

    def kinds(self) -> list[type]:
        return [type(message) for message in self.told]


class BlockingStorage(MemoryCheckpointStorage):
    """Memory storage whose writes wait until ``proceed`` is set; ``entered`` once one does."""

    def __init__(self) -> None:
        super().__init__()
        self.entered = anyio.Event()
        self.proceed = anyio.Event()

    async def write_state(
        self, job: str, checkpoint_id: int, name: str, data: bytes
    ) -> StateHandle:
        self.entered.set()
        await self.proceed.wait()
        return await super().write_state(job, checkpoint_id, name, data)


class Subtask:
    """A keyed store, its checkpointer, and the checkpoint coordinator it tells."""

    def __init__(self, storage: MemoryCheckpointStorage | None = None) -> None:
        self.coordinator = Coordinator()
        context = CheckpointContext(
            "job", SubtaskId(0, 0), storage or MemoryCheckpointStorage(), self.coordinator, 8,
            ManualClock(),
        )  # fmt: skip
        self.checkpointer = SubtaskCheckpointer(context)
        self.store = KeyedStateStore()
        self.state = self.store.get_state(VALUE)

    def write(self, first: int, count: int) -> None:
        for key in range(first, first + count):
            self.store.current_key = key
            self.state.update(key)

    def capture(self) -> list[StateCapture]:
        """The synchronous part: a snapshot, then writes on top of it."""
        captures = [StateCapture(UID, self.store.snapshot())]
        self.write(0, 5)
        return captures

    def statistics(self) -> KeyedStateStatistics:
        return self.store.statistics()


def barrier(checkpoint_id: int) -> CheckpointBarrier:
    return CheckpointBarrier(checkpoint_id, 0.0)


async def test_a_written_snapshot_releases_its_version_and_the_store_folds_its_layers() -> None:
    subtask = Subtask()
    subtask.write(0, 10)
    captures = subtask.capture()
    assert subtask.statistics().versions_held == 1

    async with anyio.create_task_group() as group:
        subtask.checkpointer.complete_async(group, barrier(1), captures, SubtaskCheckpointStats())

    assert subtask.coordinator.kinds() == [AcknowledgeCheckpoint]
    stats = subtask.statistics()
    assert (stats.versions_held, stats.frozen_layers, stats.entries) == (0, 0, 10)


async def test_a_snapshot_whose_write_fails_releases_its_version() -> None:
    subtask = Subtask(FailingStorage({1}, uid=UID))
    subtask.write(0, 10)
    captures = subtask.capture()

    async with anyio.create_task_group() as group:
        subtask.checkpointer.complete_async(group, barrier(1), captures, SubtaskCheckpointStats())

    assert subtask.coordinator.kinds() == [DeclineCheckpoint]
    stats = subtask.statistics()
    assert (stats.versions_held, stats.frozen_layers) == (0, 0)


async def test_an_abort_cancels_the_asynchronous_part_and_releases_its_version() -> None:
    storage = BlockingStorage()
    subtask = Subtask(storage)
    subtask.write(0, 10)
    captures = subtask.capture()

    async with anyio.create_task_group() as group:
        subtask.checkpointer.complete_async(group, barrier(1), captures, SubtaskCheckpointStats())
        await storage.entered.wait()
        subtask.checkpointer.notify_aborted(1)
        storage.proceed.set()  # a write that was not cancelled would now end, and acknowledge

    assert subtask.coordinator.kinds() == []
    stats = subtask.statistics()
    assert (stats.versions_held, stats.frozen_layers) == (0, 0)


def test_a_held_unaligned_snapshot_that_is_aborted_releases_its_version() -> None:
    subtask = Subtask()
    subtask.write(0, 10)
    captures = subtask.capture()  # kept: the release, not the garbage collector, must free it
    subtask.checkpointer.hold(barrier(1), captures, SubtaskCheckpointStats())
    assert subtask.statistics().versions_held == 1

    subtask.checkpointer.notify_aborted(1)

    assert subtask.statistics().versions_held == 0


async def test_two_overlapping_asynchronous_parts_fold_the_store_once_both_ended() -> None:
    storage = BlockingStorage()
    subtask = Subtask(storage)
    subtask.write(0, 10)
    first, second = subtask.capture(), subtask.capture()

    async with anyio.create_task_group() as group:
        for checkpoint_id, captures in ((1, first), (2, second)):
            subtask.checkpointer.complete_async(
                group, barrier(checkpoint_id), captures, SubtaskCheckpointStats()
            )
        await storage.entered.wait()
        assert subtask.statistics().versions_held == 2
        storage.proceed.set()

    assert subtask.coordinator.kinds() == [AcknowledgeCheckpoint, AcknowledgeCheckpoint]
    stats = subtask.statistics()
    assert (stats.versions_held, stats.frozen_layers) == (0, 0)
