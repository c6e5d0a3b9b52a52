"""Between two attempts: a checkpoint asked for while an attempt fails or the next one starts
is taken by the next attempt, and a cancellation while an attempt fails ends the job CANCELED."""

from __future__ import annotations

from typing import Any

import anyio

from lockgate.connectors import CollectSink
from lockgate.engine import (
    JobStatus,
    RestartStrategy,
    Sink,
    SinkContext,
    SinkWriter,
    StreamEnvironment,
)
from lockgate.engine.testing import FailOnce
from tests.engine.jobs.checkpoints import Gate, GatedSource


class SlowTeardownSink(Sink[Any]):
    """A sink whose first writer to close waits in ``close`` until ``release``: an attempt
    whose teardown takes time. ``closing`` says one waits there."""

    def __init__(self) -> None:
        self.closing = anyio.Event()
        self.release = anyio.Event()

    def create_writer(self, context: SinkContext) -> SinkWriter[Any]:
        return _SlowTeardown(self)


class _SlowTeardown(SinkWriter[Any]):
    def __init__(self, sink: SlowTeardownSink) -> None:
        self.sink = sink

    async def write(self, records: list[Any]) -> None:
        pass

    async def close(self) -> None:
        if not self.sink.closing.is_set():
            self.sink.closing.set()
            await self.sink.release.wait()


class FailingDiscovery(GatedSource):
    """A ``GatedSource`` whose first split discovery waits for ``fail`` and then raises."""

    def __init__(self, gate: Gate) -> None:
        super().__init__(10, gate_at=10, gate=gate)
        self.discovering = anyio.Event()
        self.fail = anyio.Event()

    async def discover_splits(self) -> None:
        if not self.discovering.is_set():
            self.discovering.set()
            await self.fail.wait()
            raise OSError("injected: the source's server did not answer")


def restarting_env() -> StreamEnvironment:
    env = StreamEnvironment()
    env.enable_checkpointing(None)
    env.set_restart_strategy(RestartStrategy.fixed_delay(attempts=3, delay=0.0))
    return env


def failing_at(number: int, fail: FailOnce):
    def check(value: int) -> int:
        if value == number:
            fail.maybe_fire()
        return value

    return check


def failing_job(fail: FailOnce, sink: SlowTeardownSink, gate: Gate) -> StreamEnvironment:
    """Fails once at record 5, tears down slowly; each attempt then waits at the gate."""
    env = restarting_env()
    env.from_source(GatedSource(10, gate_at=10, gate=gate), uid="numbers").map(
        failing_at(5, fail), uid="check"
    ).sink_to(sink, uid="out")
    return env


async def test_a_checkpoint_asked_for_while_an_attempt_fails_is_taken_by_the_next_one() -> None:
    fail, sink, gate = FailOnce(), SlowTeardownSink(), Gate()
    taken: list[Any] = []

    async with failing_job(fail, sink, gate).start("restarting") as job:
        await sink.closing.wait()  # the first attempt failed and is ending

        async def trigger() -> None:
            taken.append(await job.trigger_checkpoint())

        with anyio.fail_after(10):
            async with anyio.create_task_group() as group:
                group.start_soon(trigger)
                await anyio.wait_all_tasks_blocked()
                sink.release.set()
        job.cancel()

    assert fail.fired
    assert job.metrics().attempt == 1
    assert [completed.checkpoint_id for completed in taken] == [1]


async def test_a_checkpoint_asked_for_before_a_failed_split_discovery_is_taken_after_it() -> None:
    gate = Gate()
    source = FailingDiscovery(gate)
    env = restarting_env()
    env.from_source(source, uid="numbers").sink_to(CollectSink(), uid="out")
    taken: list[Any] = []

    async with env.start("discovering") as job:
        await source.discovering.wait()

        async def trigger() -> None:
            taken.append(await job.trigger_checkpoint())

        with anyio.fail_after(10):  # the waiter used to wait for the failed attempt forever
            async with anyio.create_task_group() as group:
                group.start_soon(trigger)
                await anyio.wait_all_tasks_blocked()
                source.fail.set()
        job.cancel()

    assert len(job.failures) == 1
    assert [completed.checkpoint_id for completed in taken] == [1]


async def test_cancel_while_an_attempt_fails_ends_the_job_canceled() -> None:
    fail, sink, gate = FailOnce(), SlowTeardownSink(), Gate()

    with anyio.fail_after(10):
        async with failing_job(fail, sink, gate).start("restarting") as job:
            await sink.closing.wait()  # the first attempt failed and is ending
            job.cancel()
            sink.release.set()
            result = await job.wait()

    assert fail.fired
    assert (result.status, job.status) == (JobStatus.CANCELED, JobStatus.CANCELED)
    assert len(job.failures) == 1  # the attempt's failure is listed; the job was cancelled
