import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lockgate.actors import IllegalStateTransition
from lockgate.engine.io.transactions import TransactionLog, TransactionStatus

OPEN, PRE_COMMITTED = TransactionStatus.OPEN, TransactionStatus.PRE_COMMITTED
COMMITTED, ABORTED = TransactionStatus.COMMITTED, TransactionStatus.ABORTED

ALLOWED = [
    (OPEN, PRE_COMMITTED),
    (OPEN, ABORTED),
    (PRE_COMMITTED, COMMITTED),
    (PRE_COMMITTED, ABORTED),
]
ILLEGAL = [
    (current, target)
    for current in TransactionStatus
    for target in TransactionStatus
    if (current, target) not in ALLOWED
]


def ids(transition: tuple[TransactionStatus, TransactionStatus]) -> str:
    return f"{transition[0].value}->{transition[1].value}"


def log_with(*pre_committed: int, current: str | None = "open") -> TransactionLog[str]:
    log: TransactionLog[str] = TransactionLog()
    for checkpoint_id in pre_committed:
        log.pre_commit(checkpoint_id, f"txn-{checkpoint_id}")
    if current is not None:
        log.begin(current)
    return log


@pytest.mark.parametrize("transition", ALLOWED, ids=ids)
def test_an_allowed_transition_returns_the_target_status(transition):
    current, target = transition

    assert current.advance(target) is target


@pytest.mark.parametrize("transition", ILLEGAL, ids=ids)
def test_an_illegal_transition_raises_naming_both_statuses(transition):
    current, target = transition

    with pytest.raises(IllegalStateTransition, match=f"transaction.*{current.name}.*{target.name}"):
        current.advance(target)


def test_committed_and_aborted_are_the_terminal_statuses():
    assert {status for status in TransactionStatus if status.is_terminal} == {COMMITTED, ABORTED}


def test_a_new_log_has_no_open_and_no_pending_transaction():
    log: TransactionLog[str] = TransactionLog()

    assert (log.current, log.pending, log.lingering) == (None, (), ())


def test_begin_makes_the_transaction_current():
    assert log_with(current="t").current == "t"


def test_begin_refuses_a_second_open_transaction():
    with pytest.raises(ValueError, match="open already"):
        log_with(current="t").begin("u")


def test_pre_committing_the_current_transaction_leaves_none_open():
    log = log_with(current="t")

    log.pre_commit(1, "t")

    assert (log.current, log.pending) == (None, ((1, "t"),))


def test_pre_commit_refuses_a_checkpoint_id_that_does_not_increase():
    with pytest.raises(ValueError, match="checkpoint ids must increase: got 2 after 3"):
        log_with(3).pre_commit(2, "late")


def test_completing_n_makes_everything_pre_committed_at_or_before_n_committable():
    assert log_with(1, 2, 3).committable_up_to(2) == [(1, "txn-1"), (2, "txn-2")]


def test_completing_an_id_older_than_every_pending_one_commits_nothing():
    assert log_with(5).committable_up_to(4) == []


def test_mark_committed_forgets_that_checkpoints_transaction():
    log = log_with(1, 2)

    log.mark_committed(1)

    assert log.pending == ((2, "txn-2"),)


def test_mark_committed_refuses_a_checkpoint_with_nothing_pending():
    with pytest.raises(ValueError, match="no transaction is pending for checkpoint 9"):
        log_with(1).mark_committed(9)


def test_mark_aborted_returns_and_forgets_the_open_transaction():
    log = log_with(current="t")

    assert (log.mark_aborted(), log.current) == ("t", None)


def test_mark_aborted_refuses_when_nothing_is_open():
    with pytest.raises(ValueError, match="no transaction is open"):
        log_with(current=None).mark_aborted()


def test_state_items_are_plain_dicts_one_per_transaction():
    assert log_with(1, current="t").to_state() == [
        {"status": "pre_committed", "checkpoint_id": 1, "transaction": "txn-1"},
        {"status": "open", "transaction": "t"},
    ]


def test_a_snapshot_holds_each_pre_committed_transaction_itself_not_a_copy():
    txn = ["records", "of", "checkpoint", 1]
    log: TransactionLog[list[str | int]] = TransactionLog()
    log.pre_commit(1, txn)

    assert log.to_state()[0]["transaction"] is txn


def test_a_snapshot_holds_a_copy_of_the_open_transaction():
    txn = ["open"]
    log: TransactionLog[list[str]] = TransactionLog()
    log.begin(txn)
    state = log.to_state()

    txn.append("written after the snapshot")

    assert state == [{"status": "open", "transaction": ["open"]}]


def test_state_survives_pickling():
    state = log_with(1, 2).to_state()

    assert pickle.loads(pickle.dumps(state)) == state


def test_from_state_restores_pre_committed_as_pending_and_open_as_lingering():
    log: TransactionLog[str] = TransactionLog.from_state(log_with(1, 2, current="t").to_state())

    assert (log.current, log.pending, log.lingering) == (
        None,
        ((1, "txn-1"), (2, "txn-2")),
        ("t",),
    )


def test_from_state_merges_the_state_of_several_subtasks_in_checkpoint_order():
    merged = log_with(2, current="a").to_state() + log_with(1, 2, current="b").to_state()

    log: TransactionLog[str] = TransactionLog.from_state(merged)

    assert [checkpoint_id for checkpoint_id, _ in log.pending] == [1, 2, 2]
    assert log.lingering == ("a", "b")


def test_a_restored_log_writes_its_lingering_transactions_back_as_open():
    state = log_with(1, current="t").to_state()

    assert TransactionLog.from_state(state).to_state() == state


@pytest.mark.parametrize("item", [None, "txn", {"status": "committed"}, {"status": "open"}])
def test_from_state_rejects_an_item_it_did_not_write(item):
    with pytest.raises(ValueError, match="cannot restore a transaction from state item"):
        TransactionLog.from_state([item])


@given(st.lists(st.integers(0, 20), unique=True).map(sorted), st.integers(-1, 21))
def test_committing_up_to_n_leaves_exactly_the_later_checkpoints_pending(checkpoint_ids, n):
    log = log_with(*checkpoint_ids)

    for checkpoint_id, _ in log.committable_up_to(n):
        log.mark_committed(checkpoint_id)

    assert [checkpoint_id for checkpoint_id, _ in log.pending] == [
        i for i in checkpoint_ids if i > n
    ]


def test_the_repr_shows_the_open_transaction_and_pending_checkpoints():
    assert (
        repr(log_with(1, 2, current="t"))
        == "<TransactionLog current='t' pending=[1, 2] lingering=0>"
    )
