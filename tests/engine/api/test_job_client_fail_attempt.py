"""JobClient.fail_attempt: a fault injected on purpose fails the running attempt, and the
restart strategy restores the next one from the latest checkpoint."""

from __future__ import annotations

from lockgate.engine import (
    CheckpointCompleted,
    JobRestarting,
    RestartStrategy,
    RestoredFromCheckpoint,
    StreamEnvironment,
)
from lockgate.engine.errors import AttemptKilled
from lockgate.engine.testing import RecordingTwoPhaseCommitSink
from tests.engine.jobs.basic import EndlessSource


def endless(sink: RecordingTwoPhaseCommitSink[int]) -> StreamEnvironment:
    env = StreamEnvironment(batch_size=8, channel_capacity=64)
    env.enable_checkpointing(0.01)
    env.set_restart_strategy(RestartStrategy.fixed_delay(attempts=1, delay=0.0))
    env.from_source(EndlessSource(), uid="numbers").sink_to(sink, uid="out")
    return env


async def test_a_failed_attempt_restarts_from_the_latest_checkpoint() -> None:
    sink: RecordingTwoPhaseCommitSink[int] = RecordingTwoPhaseCommitSink()
    async with endless(sink).start("killed") as job:
        events = job.events()
        async for event in events:
            if isinstance(event, CheckpointCompleted):
                assert job.fail_attempt(AttemptKilled("killed by the test"))
            if isinstance(event, RestoredFromCheckpoint):
                break
        restarting = [f.exception for f in job.failures]
        job.cancel()
    assert [type(error) for error in restarting] == [AttemptKilled]
    assert sink.committed == list(range(len(sink.committed)))  # no loss, no duplicate


async def test_the_restart_hears_the_injected_failure_as_its_cause() -> None:
    sink: RecordingTwoPhaseCommitSink[int] = RecordingTwoPhaseCommitSink()
    async with endless(sink).start("cause") as job:
        async for event in job.events():
            if isinstance(event, CheckpointCompleted):
                job.fail_attempt(AttemptKilled("killed by the test"))
            if isinstance(event, JobRestarting):
                assert str(event.cause) == "killed by the test"
                break
        job.cancel()


async def test_with_no_attempt_running_nothing_is_failed() -> None:
    sink: RecordingTwoPhaseCommitSink[int] = RecordingTwoPhaseCommitSink()
    async with endless(sink).start("ended") as job:
        job.cancel()
        await job.wait()

    assert job.fail_attempt(AttemptKilled("too late")) is False
    assert job.failures == ()
