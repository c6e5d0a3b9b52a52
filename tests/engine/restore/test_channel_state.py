"""Which channel state a job can restore: only on the same channels, at the same parallelism."""

from __future__ import annotations

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import StreamEnvironment
from lockgate.engine.checkpointing.channel_state import ChannelId
from lockgate.engine.checkpointing.metadata import CheckpointMetadata, OperatorStateHandles
from lockgate.engine.checkpointing.snapshots import OperatorSnapshot
from lockgate.engine.graph.planning import ExecutionPlan
from lockgate.engine.restore.channel_state import channel_state_problems

SOURCE_TO_SUMS = 0  # the only edge between chains: numbers -> (sums -> out)


def plan(*, numbers: int = 2, sums: int = 2) -> ExecutionPlan:
    env = StreamEnvironment()
    (
        env.from_source(CollectionSource(range(10)), uid="numbers", parallelism=numbers)
        .key_by(lambda n: n % 3)
        .reduce(lambda a, b: a + b, uid="sums", parallelism=sums)
        .sink_to(CollectSink(), uid="out", parallelism=sums)
    )
    return env.plan()


def taken_at(*, numbers: int = 2, sums: int = 2) -> CheckpointMetadata:
    operators = {
        uid: OperatorStateHandles(p, (None,) * p)
        for uid, p in (("numbers", numbers), ("sums", sums), ("out", sums))
    }
    return CheckpointMetadata("job", 7, 0.0, 128, operators)


def reading(records: list[int]) -> list[OperatorSnapshot]:
    channel = ChannelId(SOURCE_TO_SUMS, 1, 0)
    return [OperatorSnapshot("sums", input_channels={channel: records}), OperatorSnapshot("sums")]


def sending(records: list[int]) -> list[OperatorSnapshot]:
    channel = ChannelId(SOURCE_TO_SUMS, 0, 1)
    return [OperatorSnapshot("numbers", output_channels={channel: records})] * 2


def test_channel_state_restores_at_the_parallelism_it_was_taken_at() -> None:
    assert channel_state_problems("sums", reading([1, 2]), taken_at(), plan()) == []
    assert channel_state_problems("numbers", sending([3]), taken_at(), plan()) == []


def test_input_channel_state_refuses_a_downstream_at_another_parallelism() -> None:
    problems = channel_state_problems("sums", reading([1]), taken_at(), plan(sums=3))

    assert problems == [
        "checkpoint 7 is unaligned and holds in-flight records on the channels from operator "
        "'numbers' (parallelism 2) to operator 'sums' (parallelism 2), but the job runs them at "
        "parallelism 2 and 3; restore it at the parallelism it was taken at, or rescale "
        "through a savepoint (savepoints are aligned and hold no in-flight records)"
    ]


def test_input_channel_state_refuses_an_upstream_at_another_parallelism() -> None:
    problems = channel_state_problems("sums", reading([1]), taken_at(), plan(numbers=1))

    assert len(problems) == 1
    assert "'numbers' (parallelism 2) to operator 'sums'" in problems[0]
    assert "runs them at parallelism 1 and 2" in problems[0]


def test_output_channel_state_refuses_either_end_at_another_parallelism() -> None:
    assert channel_state_problems("numbers", sending([3]), taken_at(), plan(numbers=4))
    assert channel_state_problems("numbers", sending([3]), taken_at(), plan(sums=1))


def test_channels_without_records_restore_at_any_parallelism() -> None:
    assert channel_state_problems("sums", reading([]), taken_at(), plan(sums=3)) == []


def test_channel_state_of_an_edge_the_job_no_longer_has_is_refused() -> None:
    moved = [OperatorSnapshot("sums", input_channels={ChannelId(5, 0, 0): [1]})]

    problems = channel_state_problems("sums", moved, taken_at(), plan())

    assert problems == [
        "checkpoint 7 is unaligned and holds in-flight records of operator 'sums' on channels "
        "the job no longer has; restore it into the job it was taken from, or change the job "
        "through a savepoint (savepoints hold no in-flight records)"
    ]
