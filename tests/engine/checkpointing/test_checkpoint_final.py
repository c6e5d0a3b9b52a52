"""A bounded job ends with a final checkpoint, even with checkpointing disabled, so that its
transactional sinks commit every record before ``execute`` returns."""

from __future__ import annotations

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import StreamEnvironment
from lockgate.engine.testing import RecordingTwoPhaseCommitSink
from tests.engine.jobs.basic import final_values

RECORDS = 10_000


def numbers_job(sink: CollectSink[int] | RecordingTwoPhaseCommitSink[int]) -> StreamEnvironment:
    """Two source subtasks, rebalanced into two sink subtasks; checkpointing not enabled."""
    env = StreamEnvironment(parallelism=2, batch_size=128)
    env.from_source(CollectionSource(range(RECORDS)), uid="numbers").map(
        lambda number: number * 2, uid="double"
    ).rebalance().sink_to(sink, uid="out")
    return env


async def test_a_bounded_job_without_checkpointing_commits_every_record() -> None:
    sink: CollectSink[int] = CollectSink()

    await numbers_job(sink).execute("final")

    assert sorted(sink.results) == [2 * number for number in range(RECORDS)]


async def test_a_bounded_job_without_checkpointing_completes_exactly_one_checkpoint() -> None:
    result = await numbers_job(CollectSink()).execute("final")

    statistics = result.metrics.checkpoints
    assert (statistics.completed, statistics.failed, statistics.in_progress) == (1, 0, 0)
    assert [record.checkpoint_id for record in statistics.history] == [1]


async def test_the_last_transaction_of_every_sink_subtask_commits_before_execute_returns() -> None:
    sink: RecordingTwoPhaseCommitSink[int] = RecordingTwoPhaseCommitSink()

    await numbers_job(sink).execute("final")

    assert sorted(sink.committed) == [2 * number for number in range(RECORDS)]
    assert (sink.open_transactions, sink.pre_committed) == ([], [])


async def test_a_bounded_keyed_job_commits_the_exact_final_value_of_every_key() -> None:
    sink: CollectSink[tuple[int, int]] = CollectSink()
    env = StreamEnvironment(parallelism=2, batch_size=128)
    env.from_source(CollectionSource(range(RECORDS)), uid="numbers").map(
        lambda number: (number % 10, number), uid="pairs"
    ).key_by(lambda pair: pair[0]).reduce(lambda a, b: (a[0], a[1] + b[1]), uid="sums").sink_to(
        sink, uid="out"
    )

    await env.execute("final")

    assert len(sink.results) == RECORDS
    assert final_values(sink.results) == {key: sum(range(key, RECORDS, 10)) for key in range(10)}
