import pickle
import subprocess
import sys

import pytest

from lockgate.actors import IllegalStateTransition
from lockgate.engine.io.sinks import SinkContext
from lockgate.engine.io.transactions import TransactionStatus
from lockgate.engine.testing import (
    AwaitCheckpoint,
    FailOnce,
    InjectedFailure,
    ManualClock,
    RecordingTransaction,
    RecordingTwoPhaseCommitSink,
    TransactionChanged,
    TransactionEvent,
)
from lockgate.engine.time import clock


def context(*, subtask_index: int = 0, attempt: int = 0) -> SinkContext:
    return SinkContext("out", subtask_index, 2, ManualClock(), job_name="job", attempt=attempt)


async def pre_committed(
    sink: RecordingTwoPhaseCommitSink[str], *records: str
) -> RecordingTransaction[str]:
    txn = await sink.begin_transaction(context())
    await sink.write(txn, list(records))
    await sink.pre_commit(txn)
    return txn


def test_fail_once_raises_injected_failure_the_first_time():
    with pytest.raises(InjectedFailure, match="boom"):
        FailOnce("boom").maybe_fire()


def test_fail_once_does_nothing_after_it_fired():
    fail = FailOnce()
    with pytest.raises(InjectedFailure):
        fail.maybe_fire()

    fail.maybe_fire()

    assert fail.fired


def test_fail_once_has_not_fired_until_called():
    assert not FailOnce().fired


def test_fail_once_repr_shows_its_name_and_whether_it_fired():
    assert repr(FailOnce("after checkpoint 1")) == "<FailOnce 'after checkpoint 1' fired=False>"


def test_the_testing_module_reexports_the_manual_clock():
    assert ManualClock is clock.ManualClock


async def test_transaction_ids_are_fenced_by_job_attempt_subtask_and_counter():
    sink = RecordingTwoPhaseCommitSink[str]()

    ids = [
        (await sink.begin_transaction(context(subtask_index=s, attempt=a))).transaction_id
        for a, s in [(0, 0), (0, 0), (0, 1), (1, 0)]
    ]

    assert ids == ["job/run/0/0/1", "job/run/0/0/2", "job/run/0/1/1", "job/run/1/0/1"]


async def test_committed_holds_the_records_of_committed_transactions_in_commit_order():
    sink = RecordingTwoPhaseCommitSink[str]()
    first, second = await pre_committed(sink, "a", "b"), await pre_committed(sink, "c")

    await sink.commit(second)
    await sink.commit(first)

    assert sink.committed == ["c", "a", "b"]


async def test_committing_a_transaction_twice_adds_nothing():
    sink = RecordingTwoPhaseCommitSink[str]()
    txn = await pre_committed(sink, "a")
    await sink.commit(txn)

    await sink.recover_and_commit(txn)

    assert sink.committed == ["a"]


async def test_a_pre_committed_transaction_is_open_until_committed():
    sink = RecordingTwoPhaseCommitSink[str]()
    txn = await pre_committed(sink, "a")

    assert (sink.open_transactions, sink.pre_committed) == (["job/run/0/0/1"], ["job/run/0/0/1"])
    await sink.commit(txn)
    assert (sink.open_transactions, sink.committed_transactions) == ([], ["job/run/0/0/1"])


async def test_an_aborted_transactions_records_never_commit():
    sink = RecordingTwoPhaseCommitSink[str]()
    txn = await sink.begin_transaction(context())
    await sink.write(txn, ["a"])

    await sink.abort(txn)

    assert (sink.committed, sink.aborted) == ([], ["job/run/0/0/1"])


async def test_aborting_twice_is_harmless():
    sink = RecordingTwoPhaseCommitSink[str]()
    txn = await sink.begin_transaction(context())
    await sink.abort(txn)

    await sink.recover_and_abort(txn)

    assert sink.status(txn.transaction_id) is TransactionStatus.ABORTED


async def test_every_call_is_logged_in_order_with_the_records_written():
    sink = RecordingTwoPhaseCommitSink[str]()
    txn = await pre_committed(sink, "a")
    await sink.commit(txn)

    assert sink.events == [
        TransactionEvent("begin_transaction", "job/run/0/0/1"),
        TransactionEvent("write", "job/run/0/0/1", ("a",)),
        TransactionEvent("pre_commit", "job/run/0/0/1"),
        TransactionEvent("commit", "job/run/0/0/1"),
    ]


async def test_a_transaction_from_a_checkpoint_it_never_saw_can_be_recovered():
    sink = RecordingTwoPhaseCommitSink[str]()

    await sink.recover_and_commit(RecordingTransaction("old/0/0/1", ["a"]))

    assert sink.committed == ["a"]


async def test_committing_an_aborted_transaction_raises_naming_both_statuses():
    sink = RecordingTwoPhaseCommitSink[str]()
    txn = await pre_committed(sink, "a")
    await sink.abort(txn)

    with pytest.raises(IllegalStateTransition, match=r"ABORTED.*COMMITTED"):
        await sink.commit(txn)


async def test_committing_a_transaction_that_was_never_pre_committed_raises():
    sink = RecordingTwoPhaseCommitSink[str]()
    txn = await sink.begin_transaction(context())

    with pytest.raises(IllegalStateTransition, match=r"OPEN.*COMMITTED"):
        await sink.commit(txn)


async def test_a_pre_committed_transaction_changed_before_its_commit_fails_loudly():
    sink = RecordingTwoPhaseCommitSink[str]()
    txn = await pre_committed(sink, "a")

    txn.records.append("b")  # what a sink must never do: checkpoints hold txn by reference

    with pytest.raises(TransactionChanged, match=r"'job/run/0/0/1' changed after its pre-commit"):
        await sink.commit(txn)


async def test_a_pre_committed_transaction_changed_before_its_abort_fails_loudly():
    sink = RecordingTwoPhaseCommitSink[str]()
    txn = await pre_committed(sink, "a", "b")

    txn.records.clear()

    with pytest.raises(TransactionChanged, match=r"held 2 records then.*0 records now"):
        await sink.abort(txn)


async def test_a_transaction_says_how_many_records_it_holds():
    sink = RecordingTwoPhaseCommitSink[str]()

    assert sink.transaction_size(await pre_committed(sink, "a", "b")) == 2


def test_a_transaction_survives_pickling_with_its_records():
    txn = RecordingTransaction("job/run/0/0/1", [f"r{i}" for i in range(5_000)])

    assert pickle.loads(pickle.dumps(txn)) == txn


async def test_writing_to_a_pre_committed_transaction_raises():
    sink = RecordingTwoPhaseCommitSink[str]()
    txn = await pre_committed(sink, "a")

    with pytest.raises(RuntimeError, match="PRE_COMMITTED; only an OPEN transaction"):
        await sink.write(txn, ["b"])


def test_the_sink_repr_counts_committed_records_open_transactions_and_events():
    assert repr(RecordingTwoPhaseCommitSink()) == (
        "<RecordingTwoPhaseCommitSink committed=0 open=0 events=0>"
    )


MADE_SCRIPT = """
import pickle, sys
from lockgate.engine import testing

before = testing.sentinels_made()
pickle.loads(bytes.fromhex(sys.argv[1]))
print(before, testing.sentinels_made())
"""


def test_a_process_knows_it_made_a_sentinel_once_it_unpickled_one():
    pickled = pickle.dumps([FailOnce("unpickled"), AwaitCheckpoint()]).hex()

    completed = subprocess.run(
        [sys.executable, "-c", MADE_SCRIPT, pickled], capture_output=True, text=True, check=True
    )

    assert completed.stdout == "False True\n"
