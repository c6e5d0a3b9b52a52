"""The two-phase-commit harness: a TwoPhaseCommitWriter driven by hand, as the engine drives it.

Flink's TwoPhaseCommitSinkFunctionTest scenario: write 42, snapshot 0, write 43, snapshot 1,
write 44, snapshot 2; then complete, abort or restore checkpoints and assert exactly which
records committed.
"""

import pickle
from typing import Any

import pytest

from lockgate.engine.io.sinks import SinkContext, SinkWriter, TwoPhaseCommitWriter
from lockgate.engine.io.transactions import TransactionStatus
from lockgate.engine.testing import RecordingTwoPhaseCommitSink
from lockgate.engine.time.clock import ManualClock


class CountingWriter(SinkWriter[int]):
    async def write(self, records: list[int]) -> None:
        pass


def context(*, restored_state: tuple[Any, ...] = (), attempt: int = 0) -> SinkContext:
    return SinkContext(
        "out", 0, 1, ManualClock(), restored_state=restored_state, job_name="job", attempt=attempt
    )


async def opened_writer(
    sink: RecordingTwoPhaseCommitSink[int], **options: Any
) -> TwoPhaseCommitWriter[int, Any]:
    writer = sink.create_writer(context(**options))
    await writer.open()
    return writer


async def three_snapshots(
    writer: TwoPhaseCommitWriter[int, Any],
) -> list[list[Any]]:
    """Write 42, snapshot 0, write 43, snapshot 1, write 44, snapshot 2; return the states."""
    states = []
    for checkpoint_id, record in enumerate([42, 43, 44]):
        await writer.write([record])
        states.append(await writer.snapshot_state(checkpoint_id))
    return states


async def test_the_writer_of_a_two_phase_commit_sink_is_a_sink_writer():
    writer = RecordingTwoPhaseCommitSink[int]().create_writer(context())

    assert isinstance(writer, SinkWriter)


async def test_nothing_commits_before_a_checkpoint_completes():
    sink = RecordingTwoPhaseCommitSink[int]()
    await three_snapshots(await opened_writer(sink))

    assert sink.committed == []


async def test_completing_checkpoint_1_commits_the_transactions_of_0_and_1():
    sink = RecordingTwoPhaseCommitSink[int]()
    writer = await opened_writer(sink)
    await three_snapshots(writer)

    await writer.notify_checkpoint_complete(1)

    assert sink.committed == [42, 43]


async def test_after_completing_1_the_transaction_of_2_and_the_current_one_stay_open():
    sink = RecordingTwoPhaseCommitSink[int]()
    writer = await opened_writer(sink)
    await three_snapshots(writer)

    await writer.notify_checkpoint_complete(1)

    assert sink.open_transactions == ["job/run/0/0/3", "job/run/0/0/4"]
    assert sink.pre_committed == ["job/run/0/0/3"]


async def test_a_late_notification_after_a_newer_one_commits_nothing_twice():
    sink = RecordingTwoPhaseCommitSink[int]()
    writer = await opened_writer(sink)
    await three_snapshots(writer)

    await writer.notify_checkpoint_complete(2)
    await writer.notify_checkpoint_complete(1)

    assert sink.committed == [42, 43, 44]


async def test_transactions_commit_oldest_checkpoint_first():
    sink = RecordingTwoPhaseCommitSink[int]()
    writer = await opened_writer(sink)
    await three_snapshots(writer)

    await writer.notify_checkpoint_complete(2)

    assert sink.calls("commit") == ["job/run/0/0/1", "job/run/0/0/2", "job/run/0/0/3"]


async def test_an_aborted_checkpoint_loses_nothing_the_next_completed_one_commits_it():
    sink = RecordingTwoPhaseCommitSink[int]()
    writer = await opened_writer(sink)
    await three_snapshots(writer)

    await writer.notify_checkpoint_aborted(1)
    await writer.notify_checkpoint_complete(2)

    assert sink.committed == [42, 43, 44]


async def test_restoring_snapshot_1_after_snapshot_2_failed_commits_42_and_43():
    sink = RecordingTwoPhaseCommitSink[int]()
    failed = await opened_writer(sink)
    states = await three_snapshots(failed)
    await failed.notify_checkpoint_aborted(2)
    await failed.close()

    await opened_writer(sink, restored_state=tuple(states[1]), attempt=1)

    assert sink.committed == [42, 43]


async def test_restoring_snapshot_1_aborts_the_transaction_that_was_open_at_snapshot_1():
    sink = RecordingTwoPhaseCommitSink[int]()
    failed = await opened_writer(sink)
    states = await three_snapshots(failed)
    await failed.close()

    await opened_writer(sink, restored_state=tuple(states[1]), attempt=1)

    assert sink.calls("recover_and_abort") == ["job/run/0/0/3"]
    assert sink.status("job/run/0/0/3") is TransactionStatus.ABORTED


async def test_restoring_recovers_pre_committed_transactions_in_checkpoint_order():
    sink = RecordingTwoPhaseCommitSink[int]()
    states = await three_snapshots(await opened_writer(sink))

    await opened_writer(sink, restored_state=tuple(reversed(states[1])), attempt=1)

    assert sink.calls("recover_and_commit") == ["job/run/0/0/1", "job/run/0/0/2"]


async def test_restoring_after_the_checkpoint_already_committed_commits_nothing_twice():
    sink = RecordingTwoPhaseCommitSink[int]()
    failed = await opened_writer(sink)
    states = await three_snapshots(failed)
    await failed.notify_checkpoint_complete(1)
    await failed.close()

    await opened_writer(sink, restored_state=tuple(states[1]), attempt=1)

    assert sink.committed == [42, 43]


async def test_a_restored_writer_fences_its_transactions_with_the_new_attempt():
    sink = RecordingTwoPhaseCommitSink[int]()
    states = await three_snapshots(await opened_writer(sink))

    restored = await opened_writer(sink, restored_state=tuple(states[1]), attempt=1)
    await restored.write([45])
    await restored.snapshot_state(3)
    await restored.notify_checkpoint_complete(3)

    assert sink.committed_transactions == ["job/run/0/0/1", "job/run/0/0/2", "job/run/1/0/1"]
    assert sink.committed == [42, 43, 45]


async def test_a_fresh_sink_recovers_a_checkpoint_that_went_through_pickle():
    states = await three_snapshots(await opened_writer(RecordingTwoPhaseCommitSink[int]()))
    stored = pickle.loads(pickle.dumps(states[1]))
    fresh = RecordingTwoPhaseCommitSink[int]()

    await opened_writer(fresh, restored_state=tuple(stored), attempt=1)

    assert fresh.committed == [42, 43]


async def test_a_snapshot_is_not_changed_by_records_written_after_it():
    sink = RecordingTwoPhaseCommitSink[int]()
    writer = await opened_writer(sink)
    state = await writer.snapshot_state(0)

    await writer.write([42])

    assert [item["transaction"].records for item in state] == [[], []]


async def test_a_snapshot_holds_the_pre_committed_transaction_itself():
    sink = RecordingTwoPhaseCommitSink[int]()
    writer = await opened_writer(sink)
    await writer.write([42])
    pre_committed = writer.transactions.current

    state = await writer.snapshot_state(0)

    assert state[0]["transaction"] is pre_committed


async def test_the_snapshot_size_counts_the_records_its_transactions_hold():
    sink = RecordingTwoPhaseCommitSink[int]()
    writer = await opened_writer(sink)
    await three_snapshots(writer)
    await writer.notify_checkpoint_complete(0)

    assert writer.snapshot_size() == 2  # 43 and 44 are pending; the open transaction is empty


async def test_a_plain_sink_writer_holds_no_records_in_its_snapshots():
    writer = CountingWriter()

    assert (await writer.snapshot_state(1), writer.snapshot_size()) == ([], 0)


async def test_closing_aborts_the_open_transaction_but_keeps_pre_committed_ones():
    sink = RecordingTwoPhaseCommitSink[int]()
    writer = await opened_writer(sink)
    await writer.write([42])
    await writer.snapshot_state(0)

    await writer.close()

    assert (sink.aborted, sink.pre_committed) == (["job/run/0/0/2"], ["job/run/0/0/1"])


async def test_the_final_checkpoint_after_finish_commits_everything_and_opens_nothing():
    sink = RecordingTwoPhaseCommitSink[int]()
    writer = await opened_writer(sink)
    await writer.write([42])

    await writer.finish()
    await writer.snapshot_state(0)
    await writer.notify_checkpoint_complete(0)
    await writer.close()

    assert (sink.committed, sink.open_transactions, sink.aborted) == ([42], [], [])


async def test_writing_before_open_names_the_sink_and_says_to_open_it():
    writer = RecordingTwoPhaseCommitSink[int]().create_writer(context())

    with pytest.raises(RuntimeError, match=r"sink 'out' \(subtask 1/1\).*call open\(\)"):
        await writer.write([42])


async def test_the_writer_repr_shows_its_subtask_and_pending_checkpoints():
    writer = await opened_writer(RecordingTwoPhaseCommitSink[int]())
    await writer.snapshot_state(7)

    assert "'out' subtask 1/1" in repr(writer)
    assert "pending=[7]" in repr(writer)
