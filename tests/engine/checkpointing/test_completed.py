import pytest

from lockgate.engine.checkpointing.checkpoint_status import CheckpointStatus
from lockgate.engine.checkpointing.completed import CompletedCheckpoint, CompletedCheckpointStore
from lockgate.engine.checkpointing.messages import (
    AcknowledgeCheckpoint,
    CheckpointFailureReason,
    SubtaskId,
)
from lockgate.engine.checkpointing.metadata import CheckpointMetadata
from lockgate.engine.checkpointing.pending import PendingCheckpoint
from lockgate.engine.checkpointing.statistics import CheckpointStatistics

SUBTASK = SubtaskId(0, 0)


def completed(checkpoint_id: int) -> CompletedCheckpoint:
    metadata = CheckpointMetadata("job", checkpoint_id, float(checkpoint_id), 128)
    location = f"/chk-{checkpoint_id}/_metadata"
    return CompletedCheckpoint(checkpoint_id, 1.0, 2.0, location, metadata)


def ids(checkpoints: list[CompletedCheckpoint]) -> list[int]:
    return [checkpoint.checkpoint_id for checkpoint in checkpoints]


def taken(checkpoint_id: int, *, trigger: float, end: float) -> CompletedCheckpoint:
    pending = PendingCheckpoint(checkpoint_id, trigger, [SUBTASK], {})
    pending.acknowledge(AcknowledgeCheckpoint(checkpoint_id, SUBTASK), now=end)
    pending.to_metadata("job", 128)
    return pending.to_completed(f"/chk-{checkpoint_id}/_metadata", end)


def aborted(checkpoint_id: int) -> PendingCheckpoint:
    pending = PendingCheckpoint(checkpoint_id, 0.0, [SUBTASK], {})
    pending.abort(CheckpointFailureReason.TIMEOUT)
    return pending


def test_the_store_retains_the_newest_checkpoints_and_returns_the_subsumed() -> None:
    store = CompletedCheckpointStore(max_retained=2)
    assert [ids(store.add(completed(n))) for n in (1, 2, 3, 4)] == [[], [], [1], [2]]
    assert ids(store.all) == [3, 4]


def test_the_latest_checkpoint_has_the_highest_id() -> None:
    store = CompletedCheckpointStore(max_retained=3)
    store.add(completed(2))
    store.add(completed(1))
    assert store.latest == completed(2)


def test_an_empty_store_has_no_latest_checkpoint() -> None:
    assert CompletedCheckpointStore().latest is None


def test_an_older_checkpoint_added_to_a_full_store_is_subsumed_at_once() -> None:
    store = CompletedCheckpointStore(max_retained=1)
    store.add(completed(5))
    assert ids(store.add(completed(4))) == [4]
    assert ids(store.all) == [5]


def test_adding_a_checkpoint_twice_is_rejected() -> None:
    store = CompletedCheckpointStore()
    store.add(completed(1))
    with pytest.raises(ValueError, match="checkpoint 1 was already added"):
        store.add(completed(1))


def test_a_recovered_store_keeps_every_checkpoint_until_an_add_subsumes_the_excess() -> None:
    store = CompletedCheckpointStore(max_retained=2)
    store.recover([completed(3), completed(1), completed(2)])
    assert ids(store.all) == [1, 2, 3]
    assert ids(store.add(completed(4))) == [1, 2]
    assert ids(store.all) == [3, 4]


def test_only_an_empty_store_recovers_checkpoints() -> None:
    store = CompletedCheckpointStore()
    store.add(completed(1))
    with pytest.raises(ValueError, match="only an empty store recovers checkpoints"):
        store.recover([completed(2)])


def test_a_store_retains_at_least_one_checkpoint() -> None:
    with pytest.raises(ValueError, match="max_retained"):
        CompletedCheckpointStore(max_retained=0)


def test_statistics_count_checkpoints_in_progress_completed_and_failed() -> None:
    statistics = CheckpointStatistics()
    for checkpoint_id in (1, 2, 3):
        statistics.on_triggered(checkpoint_id, 0.0)
    statistics.on_completed(taken(1, trigger=0.0, end=1.0).record())
    statistics.on_aborted(aborted(2).aborted_record(CheckpointFailureReason.TIMEOUT, 5.0))
    snapshot = statistics.snapshot()
    assert (snapshot.completed, snapshot.failed, snapshot.in_progress) == (1, 1, 1)


def test_statistics_keep_a_bounded_history_oldest_first() -> None:
    statistics = CheckpointStatistics(history_size=2)
    for checkpoint_id in (1, 2, 3):
        statistics.on_completed(taken(checkpoint_id, trigger=0.0, end=1.0).record())
    assert [record.checkpoint_id for record in statistics.snapshot().history] == [2, 3]
    assert statistics.snapshot().completed == 3


def test_a_completed_record_reports_duration_and_ack_delays() -> None:
    statistics = CheckpointStatistics()
    statistics.on_completed(taken(1, trigger=10.0, end=12.5).record())
    record = statistics.snapshot().latest_completed
    assert record is not None
    assert (record.status, record.duration, record.ack_delays) == (
        CheckpointStatus.COMPLETED,
        2.5,
        {SUBTASK: 2.5},
    )


def test_a_failed_record_reports_its_reason() -> None:
    statistics = CheckpointStatistics()
    statistics.on_aborted(aborted(4).aborted_record(CheckpointFailureReason.TIMEOUT, 5.0))
    record = statistics.snapshot().latest_failed
    assert record is not None
    assert (record.checkpoint_id, record.failure_reason, record.duration) == (
        4,
        CheckpointFailureReason.TIMEOUT,
        5.0,
    )


def test_a_checkpoint_completed_without_statistics_is_still_counted() -> None:
    statistics = CheckpointStatistics()
    statistics.on_completed(completed(1).record())
    assert statistics.snapshot().latest_completed is not None
