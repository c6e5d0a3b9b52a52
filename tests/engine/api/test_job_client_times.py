"""JobClient's plan, start time and end time, as the REST API reports them."""

from __future__ import annotations

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import JobFinished, JobStarted, StreamEnvironment
from lockgate.engine.time.clock import ManualClock


def short_job(clock: ManualClock | None = None) -> StreamEnvironment:
    env = StreamEnvironment(parallelism=2, clock=clock)
    env.from_source(CollectionSource(range(10)), uid="numbers").sink_to(CollectSink(), uid="out")
    return env


async def test_start_and_end_time_are_those_of_the_first_start_and_the_last_event() -> None:
    async with short_job().start("short") as job:
        assert (job.start_time, job.end_time) == (None, None)
        events = [event async for event in job.events()]

    [started] = [e for e in events if isinstance(e, JobStarted)]
    [finished] = [e for e in events if isinstance(e, JobFinished)]
    assert job.start_time == started.time
    assert job.end_time == finished.time


async def test_times_are_on_the_job_s_clock() -> None:
    clock = ManualClock(start=1234.0)
    async with short_job(clock).start("short") as job:
        await job.wait()

    assert job.clock is clock
    assert job.start_time == job.end_time == 1234.0


async def test_the_plan_is_the_environment_s_plan() -> None:
    env = short_job()
    async with env.start("short") as job:
        await job.wait()

    assert job.plan.describe() == env.plan().describe()
