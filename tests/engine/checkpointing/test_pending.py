import pytest

from lockgate.actors import IllegalStateTransition
from lockgate.engine.checkpointing.checkpoint_status import CheckpointStatus
from lockgate.engine.checkpointing.messages import (
    AcknowledgeCheckpoint,
    CheckpointFailureReason,
    DeclineCheckpoint,
    StateHandle,
    SubtaskCheckpointStats,
    SubtaskId,
)
from lockgate.engine.checkpointing.metadata import OperatorStateHandles
from lockgate.engine.checkpointing.pending import AckResult, PendingCheckpoint

SOURCE_0, SOURCE_1, SINK_0 = SubtaskId(0, 0), SubtaskId(0, 1), SubtaskId(1, 0)
PARALLELISM = {"src": 2, "sink": 1, "map": 2}


def pending(checkpoint_id: int = 7) -> PendingCheckpoint:
    return PendingCheckpoint(checkpoint_id, 100.0, [SOURCE_0, SOURCE_1, SINK_0], PARALLELISM)


def handle(name: str, size: int = 10) -> StateHandle:
    return StateHandle(f"/chk-7/{name}", size, f"sha256:{name}")


def ack(
    subtask: SubtaskId, checkpoint_id: int = 7, **handles: StateHandle
) -> AcknowledgeCheckpoint:
    return AcknowledgeCheckpoint(checkpoint_id, subtask, dict(handles))


def fully_acknowledged() -> PendingCheckpoint:
    checkpoint = pending()
    checkpoint.acknowledge(ack(SOURCE_0, src=handle("src-0")), now=101.0)
    checkpoint.acknowledge(ack(SOURCE_1, src=handle("src-1")), now=102.0)
    checkpoint.acknowledge(ack(SINK_0), now=103.0)
    return checkpoint


def test_the_first_acknowledgement_of_an_expected_subtask_succeeds() -> None:
    assert pending().acknowledge(ack(SOURCE_0), now=101.0) is AckResult.SUCCESS


def test_a_second_acknowledgement_of_a_subtask_is_a_duplicate() -> None:
    checkpoint = pending()
    checkpoint.acknowledge(ack(SOURCE_0, src=handle("first")), now=101.0)
    assert checkpoint.acknowledge(ack(SOURCE_0, src=handle("second")), 102.0) is AckResult.DUPLICATE
    assert checkpoint.handles == {"src": {0: handle("first")}}


def test_an_acknowledgement_from_an_unexpected_subtask_is_unknown() -> None:
    assert pending().acknowledge(ack(SubtaskId(5, 0)), now=101.0) is AckResult.UNKNOWN


def test_an_acknowledgement_after_an_abort_is_discarded() -> None:
    checkpoint = pending()
    checkpoint.abort(CheckpointFailureReason.TIMEOUT)
    assert checkpoint.acknowledge(ack(SOURCE_0), now=101.0) is AckResult.DISCARDED


def test_an_acknowledgement_after_completion_is_discarded() -> None:
    checkpoint = fully_acknowledged()
    checkpoint.to_metadata("job", 128)
    checkpoint.to_completed("/chk-7/_metadata", 104.0)
    assert checkpoint.acknowledge(ack(SOURCE_0), now=105.0) is AckResult.DISCARDED


def test_an_acknowledgement_of_another_checkpoint_is_rejected() -> None:
    with pytest.raises(ValueError, match="checkpoint 8 reached pending checkpoint 7"):
        pending().acknowledge(ack(SOURCE_0, checkpoint_id=8), now=101.0)


def test_a_handle_for_an_operator_the_job_lacks_is_rejected() -> None:
    with pytest.raises(ValueError, match="operator 'ghost'"):
        pending().acknowledge(ack(SOURCE_0, ghost=handle("ghost")), now=101.0)


def test_a_handle_for_a_subtask_index_beyond_the_parallelism_is_rejected() -> None:
    with pytest.raises(ValueError, match="operator 'sink' subtask 1"):
        pending().acknowledge(ack(SOURCE_1, sink=handle("sink")), now=101.0)


def test_a_checkpoint_is_fully_acknowledged_only_once_every_subtask_acknowledged() -> None:
    checkpoint = pending()
    checkpoint.acknowledge(ack(SOURCE_0), now=101.0)
    checkpoint.acknowledge(ack(SOURCE_1), now=101.0)
    assert not checkpoint.is_fully_acknowledged
    assert checkpoint.not_yet_acknowledged == {SINK_0}
    checkpoint.acknowledge(ack(SINK_0), now=101.0)
    assert checkpoint.is_fully_acknowledged


def test_has_acknowledged_tells_which_subtasks_acknowledged() -> None:
    checkpoint = pending()
    checkpoint.acknowledge(ack(SOURCE_1), now=101.0)
    assert [checkpoint.has_acknowledged(s) for s in (SOURCE_0, SOURCE_1)] == [False, True]


def test_a_decline_aborts_the_checkpoint_with_the_subtasks_reason() -> None:
    checkpoint = pending()
    decline = DeclineCheckpoint(7, SINK_0, CheckpointFailureReason.STORAGE_FAILED, "disk full")
    assert checkpoint.decline(decline) is AckResult.SUCCESS
    assert checkpoint.status is CheckpointStatus.ABORTED
    assert checkpoint.failure_reason is CheckpointFailureReason.STORAGE_FAILED
    assert checkpoint.failure_message == "subtask 1/0 declined: disk full"


def test_a_decline_from_an_unexpected_subtask_is_unknown() -> None:
    checkpoint = pending()
    decline = DeclineCheckpoint(7, SubtaskId(9, 0), CheckpointFailureReason.DECLINED)
    assert checkpoint.decline(decline) is AckResult.UNKNOWN
    assert checkpoint.status is CheckpointStatus.PENDING


def test_a_decline_after_an_abort_is_discarded() -> None:
    checkpoint = pending()
    checkpoint.abort(CheckpointFailureReason.TIMEOUT)
    decline = DeclineCheckpoint(7, SINK_0, CheckpointFailureReason.DECLINED)
    assert checkpoint.decline(decline) is AckResult.DISCARDED
    assert checkpoint.failure_reason is CheckpointFailureReason.TIMEOUT


def test_abort_records_the_failure_reason() -> None:
    checkpoint = pending()
    checkpoint.abort(CheckpointFailureReason.TIMEOUT)
    assert (checkpoint.status, checkpoint.failure_reason) == (
        CheckpointStatus.ABORTED,
        CheckpointFailureReason.TIMEOUT,
    )


def test_aborting_an_ended_checkpoint_is_an_illegal_transition() -> None:
    checkpoint = pending()
    checkpoint.abort(CheckpointFailureReason.TIMEOUT)
    with pytest.raises(IllegalStateTransition, match=r"checkpoint 7.*ABORTED.*ABORTED"):
        checkpoint.abort(CheckpointFailureReason.SUBSUMED)


def test_handles_are_merged_by_operator_and_subtask_index() -> None:
    assert fully_acknowledged().handles == {"src": {0: handle("src-0"), 1: handle("src-1")}}


def test_operator_states_hold_one_slot_per_subtask_and_none_where_nothing_was_written() -> None:
    checkpoint = pending()
    checkpoint.acknowledge(ack(SOURCE_1, src=handle("src-1")), now=101.0)
    assert checkpoint.operator_states() == {
        "src": OperatorStateHandles(2, (None, handle("src-1"))),
        "sink": OperatorStateHandles(1, (None,)),
        "map": OperatorStateHandles(2, (None, None)),
    }


def test_metadata_cannot_be_made_before_every_subtask_acknowledged() -> None:
    checkpoint = pending()
    checkpoint.acknowledge(ack(SOURCE_0), now=101.0)
    with pytest.raises(ValueError, match="subtasks 0/1, 1/0 have not acknowledged"):
        checkpoint.to_metadata("job", 128)


def test_metadata_records_the_job_the_id_and_every_operator() -> None:
    metadata = fully_acknowledged().to_metadata("job", 128)
    assert (metadata.job_name, metadata.checkpoint_id, metadata.timestamp) == ("job", 7, 100.0)
    assert metadata.operators["src"].handles == (handle("src-0"), handle("src-1"))


def test_completing_carries_the_location_times_and_metadata() -> None:
    checkpoint = fully_acknowledged()
    metadata = checkpoint.to_metadata("job", 128)
    completed = checkpoint.to_completed("/chk-7/_metadata", 104.0)
    assert checkpoint.status is CheckpointStatus.COMPLETED
    assert (completed.checkpoint_id, completed.location, completed.metadata) == (
        7,
        "/chk-7/_metadata",
        metadata,
    )
    assert completed.duration == 4.0


def test_completing_without_metadata_is_rejected() -> None:
    with pytest.raises(ValueError, match="call to_metadata"):
        fully_acknowledged().to_completed("/chk-7/_metadata", 104.0)


def test_completing_an_aborted_checkpoint_is_an_illegal_transition() -> None:
    checkpoint = fully_acknowledged()
    metadata = checkpoint.to_metadata("job", 128)
    checkpoint.abort(CheckpointFailureReason.SUBSUMED)
    with pytest.raises(IllegalStateTransition, match=r"ABORTED.*COMPLETED"):
        checkpoint.to_completed("/chk-7/_metadata", 104.0, metadata)


def test_the_record_reports_delays_alignment_and_size() -> None:
    checkpoint = pending()
    stats = SubtaskCheckpointStats(start_delay=0.5, alignment_duration=0.25)
    checkpoint.acknowledge(
        AcknowledgeCheckpoint(7, SINK_0, {"sink": handle("sink", 30)}, stats), now=102.0
    )
    checkpoint.acknowledge(ack(SOURCE_0, src=handle("src-0", 12)), now=101.0)
    record = checkpoint.record(end_time=110.0)
    assert record.ack_delays == {SINK_0: 2.0, SOURCE_0: 1.0}
    assert (record.alignment_duration, record.start_delay) == (0.25, 0.5)
    assert (record.state_size, record.acknowledged, record.total, record.duration) == (
        42,
        2,
        3,
        10.0,
    )


def test_the_record_sums_in_flight_bytes_and_keeps_each_subtasks_statistics() -> None:
    checkpoint = pending()
    unaligned = SubtaskCheckpointStats(persisted_in_flight=300, unaligned=True)
    aligned = SubtaskCheckpointStats(alignment_duration=0.5)
    checkpoint.acknowledge(AcknowledgeCheckpoint(7, SINK_0, {}, unaligned), now=101.0)
    checkpoint.acknowledge(AcknowledgeCheckpoint(7, SOURCE_0, {}, aligned), now=101.0)
    checkpoint.acknowledge(
        AcknowledgeCheckpoint(7, SOURCE_1, {}, SubtaskCheckpointStats(persisted_in_flight=20)),
        now=101.0,
    )

    record = checkpoint.record(end_time=110.0)

    assert (record.unaligned, record.persisted_in_flight) == (True, 320)
    assert record.subtasks[SINK_0] == unaligned
    assert record.subtasks[SOURCE_0].alignment_duration == 0.5


def test_a_record_of_aligned_snapshots_is_aligned_with_no_in_flight_bytes() -> None:
    record = fully_acknowledged().record(end_time=110.0)

    assert (record.unaligned, record.persisted_in_flight) == (False, 0)
    assert sorted(record.subtasks) == [SOURCE_0, SOURCE_1, SINK_0]


def test_repr_shows_the_status_and_progress() -> None:
    checkpoint = pending()
    checkpoint.acknowledge(ack(SOURCE_0), now=101.0)
    assert repr(checkpoint) == "PendingCheckpoint(id=7, status=PENDING, acknowledged=1/3)"
