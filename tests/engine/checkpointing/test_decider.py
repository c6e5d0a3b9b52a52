"""The coordinator's decisions, without an event loop: when checkpoints start, how jobs end."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lockgate.actors import IllegalStateTransition
from lockgate.engine.checkpointing.config import CheckpointConfig
from lockgate.engine.checkpointing.decider import (
    CheckpointDecider,
    DrainSources,
    FailJob,
    JobEnding,
    Refuse,
    StartCheckpoint,
    StopJob,
)
from lockgate.engine.checkpointing.messages import (
    AcknowledgeCheckpoint,
    CheckpointFailureReason,
    SubtaskId,
)
from lockgate.engine.checkpointing.pending import PendingCheckpoint
from lockgate.engine.events import CHECKPOINT, SnapshotKind, SnapshotOptions

RUNNING, DRAINING, FINAL = JobEnding.RUNNING, JobEnding.DRAINING, JobEnding.FINAL_CHECKPOINT
STOPPING, STOPPED = JobEnding.STOPPING_WITH_SAVEPOINT, JobEnding.STOPPED
ALLOWED = [
    (RUNNING, FINAL),
    (RUNNING, DRAINING),
    (RUNNING, STOPPING),
    (DRAINING, FINAL),
    (FINAL, STOPPED),
    (FINAL, RUNNING),
    (STOPPING, STOPPED),
    (STOPPING, RUNNING),
    (STOPPING, FINAL),
]
ILLEGAL = [(a, b) for a in JobEnding for b in JobEnding if (a, b) not in ALLOWED]

Reason = CheckpointFailureReason
COUNTED = [Reason.TIMEOUT, Reason.DECLINED, Reason.STORAGE_FAILED]
UNCOUNTED = [reason for reason in Reason if reason not in COUNTED]

SOURCE, MAP, SINK = SubtaskId(0, 0), SubtaskId(1, 0), SubtaskId(2, 0)
TARGET = "file:///savepoints"
STOP_SAVEPOINT = SnapshotOptions(SnapshotKind.STOP_SAVEPOINT, TARGET)
SAVEPOINT = SnapshotOptions(SnapshotKind.SAVEPOINT, TARGET)


def decider(**config: Any) -> CheckpointDecider:
    return CheckpointDecider(CheckpointConfig(**config), job_name="numbers")


def periodic(**config: Any) -> CheckpointDecider:
    return decider(interval=1.0, **config)


def started(answer: object) -> StartCheckpoint:
    assert isinstance(answer, StartCheckpoint)
    return answer


def finish_all(subject: CheckpointDecider, count: int = 1) -> StartCheckpoint | None:
    answers = [subject.on_finished(SubtaskId(9, i), subtask_count=count) for i in range(count)]
    return answers[-1]


def running(**config: Any) -> CheckpointDecider:
    return decider(**config)


def draining(**config: Any) -> CheckpointDecider:
    subject = decider(**config)
    subject.stop_with_savepoint(TARGET, drain=True)
    return subject


def final_checkpoint(**config: Any) -> CheckpointDecider:
    subject = decider(**config)
    finish_all(subject)
    return subject


def stopping_with_savepoint(**config: Any) -> CheckpointDecider:
    subject = decider(**config)
    subject.stop_with_savepoint(TARGET, drain=False)
    return subject


def stopped(**config: Any) -> CheckpointDecider:
    subject = decider(**config)
    final = started(finish_all(subject))
    subject.on_completed(final.checkpoint_id, kind=SnapshotKind.CHECKPOINT, now=1.0)
    return subject


IN: dict[JobEnding, Callable[..., CheckpointDecider]] = {
    RUNNING: running,
    DRAINING: draining,
    FINAL: final_checkpoint,
    STOPPING: stopping_with_savepoint,
    STOPPED: stopped,
}
ENDING = [state for state in JobEnding if state is not RUNNING]


def ending_ids(state: JobEnding) -> str:
    return state.name


def transition_ids(transition: tuple[JobEnding, JobEnding]) -> str:
    return f"{transition[0].name}->{transition[1].name}"


def pending(checkpoint_id: int, *acknowledged: SubtaskId) -> PendingCheckpoint:
    checkpoint = PendingCheckpoint(checkpoint_id, 0.0, [SOURCE, MAP, SINK], {})
    for subtask in acknowledged:
        checkpoint.acknowledge(AcknowledgeCheckpoint(checkpoint_id, subtask), now=0.5)
    return checkpoint


# The transition table


@pytest.mark.parametrize("transition", ALLOWED, ids=transition_ids)
def test_every_edge_of_the_table_is_allowed(transition: tuple[JobEnding, JobEnding]) -> None:
    current, target = transition
    assert current.advance(target) is target


@pytest.mark.parametrize("transition", ILLEGAL, ids=transition_ids)
def test_an_illegal_transition_raises_naming_both_states(
    transition: tuple[JobEnding, JobEnding],
) -> None:
    current, target = transition
    with pytest.raises(IllegalStateTransition, match=f"{current.name}.*{target.name}"):
        current.advance(target)


def test_an_illegal_transition_error_carries_both_states() -> None:
    with pytest.raises(IllegalStateTransition) as raised:
        STOPPED.advance(RUNNING)
    assert (raised.value.current, raised.value.target) == (STOPPED, RUNNING)


@pytest.mark.parametrize("state", list(JobEnding), ids=ending_ids)
def test_each_ending_is_reached_as_the_coordinator_reaches_it(state: JobEnding) -> None:
    assert IN[state]().ending is state


# Ids


def test_ids_count_up_from_the_first_one_given() -> None:
    subject = CheckpointDecider(CheckpointConfig(), job_name="numbers", next_checkpoint_id=8)
    assert [subject.start().checkpoint_id for _ in range(3)] == [8, 9, 10]
    assert subject.next_checkpoint_id == 11


def test_periodic_requested_and_final_checkpoints_share_one_sequence_of_ids() -> None:
    subject = periodic()
    first = started(subject.periodic(0.0, pending=0))
    second = started(subject.request(SAVEPOINT))
    third = started(finish_all(subject))
    assert [first.checkpoint_id, second.checkpoint_id, third.checkpoint_id] == [1, 2, 3]


def test_a_checkpoint_that_does_not_start_takes_no_id() -> None:
    subject = periodic(max_concurrent=1)
    subject.periodic(0.0, pending=1)
    subject.stop_with_savepoint(TARGET, drain=True)
    subject.request(CHECKPOINT)
    assert subject.next_checkpoint_id == 1


def test_a_started_checkpoint_keeps_the_options_it_was_asked_for() -> None:
    assert decider().start(SAVEPOINT) == StartCheckpoint(1, SAVEPOINT)


# Periodic checkpoints: interval, min_pause, max_concurrent


def test_a_job_without_an_interval_takes_no_periodic_checkpoint() -> None:
    subject = decider(interval=None)
    assert subject.periodic_interval is None
    assert subject.periodic(100.0, pending=0) is None


def test_a_job_with_an_interval_tries_a_periodic_checkpoint_every_interval() -> None:
    assert decider(interval=2.5).periodic_interval == 2.5


def test_a_periodic_checkpoint_starts_when_nothing_holds_it_back() -> None:
    assert periodic().periodic(1.0, pending=0) == StartCheckpoint(1, CHECKPOINT)


def test_the_first_checkpoint_does_not_wait_for_min_pause() -> None:
    assert periodic(min_pause=5.0).periodic(0.0, pending=0) is not None


def test_a_checkpoint_waits_for_min_pause_after_the_last_completion() -> None:
    subject = periodic(min_pause=5.0)
    subject.on_completed(1, kind=SnapshotKind.CHECKPOINT, now=10.0)
    assert subject.periodic(14.9, pending=0) is None


def test_a_checkpoint_starts_once_min_pause_has_passed_since_the_last_completion() -> None:
    subject = periodic(min_pause=5.0)
    subject.on_completed(1, kind=SnapshotKind.CHECKPOINT, now=10.0)
    assert subject.periodic(15.0, pending=0) is not None


@pytest.mark.parametrize("kind", [SnapshotKind.SAVEPOINT, SnapshotKind.STOP_SAVEPOINT])
def test_a_completed_savepoint_starts_no_min_pause(kind: SnapshotKind) -> None:
    subject = periodic(min_pause=5.0)
    subject.on_completed(1, kind=kind, now=10.0)
    assert subject.periodic(11.0, pending=0) is not None


@pytest.mark.parametrize("max_concurrent", [1, 2, 3])
def test_a_periodic_checkpoint_waits_while_max_concurrent_are_pending(max_concurrent: int) -> None:
    subject = periodic(max_concurrent=max_concurrent)
    assert subject.periodic(1.0, pending=max_concurrent) is None
    assert subject.periodic(1.0, pending=max_concurrent - 1) is not None


def test_a_requested_checkpoint_ignores_min_pause_and_max_concurrent() -> None:
    subject = periodic(min_pause=5.0, max_concurrent=1)
    subject.on_completed(1, kind=SnapshotKind.CHECKPOINT, now=10.0)
    assert subject.request(CHECKPOINT) == StartCheckpoint(1, CHECKPOINT)


# Stopping


@pytest.mark.parametrize("state", ENDING, ids=ending_ids)
def test_no_periodic_checkpoint_starts_once_the_job_is_ending(state: JobEnding) -> None:
    assert IN[state](interval=1.0).periodic(100.0, pending=0) is None


@pytest.mark.parametrize("state", ENDING, ids=ending_ids)
def test_a_checkpoint_request_is_refused_once_the_job_is_ending(state: JobEnding) -> None:
    assert IN[state]().request(SAVEPOINT) == Refuse(
        "job 'numbers' is stopping; no checkpoint was taken"
    )


@pytest.mark.parametrize("state", ENDING, ids=ending_ids)
@pytest.mark.parametrize("drain", [False, True])
def test_a_second_stop_is_refused(state: JobEnding, drain: bool) -> None:
    subject = IN[state]()
    assert subject.stop_with_savepoint(TARGET, drain=drain) == Refuse(
        "job 'numbers' is already stopping"
    )
    assert subject.ending is state


def test_a_stop_without_drain_starts_the_stop_savepoint_as_the_final_snapshot() -> None:
    subject = decider()
    answer = subject.stop_with_savepoint(TARGET, drain=False)
    assert answer == StartCheckpoint(1, STOP_SAVEPOINT, final=True)
    assert (subject.ending, subject.final_checkpoint_id) == (STOPPING, 1)


def test_a_stop_with_drain_ends_the_sources_first() -> None:
    subject = decider()
    assert subject.stop_with_savepoint(TARGET, drain=True) == DrainSources()
    assert (subject.ending, subject.final_checkpoint_id) == (DRAINING, None)


def test_a_drained_job_takes_the_stop_savepoint_once_every_subtask_finished() -> None:
    subject = draining()
    assert subject.on_finished(SOURCE, subtask_count=2) is None
    assert subject.on_finished(SINK, subtask_count=2) == StartCheckpoint(
        1, STOP_SAVEPOINT, final=True
    )
    assert subject.ending is FINAL


@pytest.mark.parametrize("make", [stopping_with_savepoint, final_checkpoint])
def test_the_completed_final_snapshot_stops_the_job(make: Callable[[], CheckpointDecider]) -> None:
    subject = make()
    final = subject.final_checkpoint_id
    assert final is not None
    assert subject.on_completed(final, kind=SnapshotKind.CHECKPOINT, now=1.0) == StopJob(final)
    assert subject.ending is STOPPED


def test_a_checkpoint_other_than_the_final_one_stops_nothing() -> None:
    subject = stopping_with_savepoint()
    assert subject.on_completed(99, kind=SnapshotKind.CHECKPOINT, now=1.0) is None
    assert subject.ending is STOPPING


def test_a_failed_stop_savepoint_leaves_the_job_running() -> None:
    subject = stopping_with_savepoint()
    assert subject.on_aborted(1, Reason.DECLINED) is None
    assert (subject.ending, subject.final_checkpoint_id) == (RUNNING, None)


def test_a_job_whose_stop_savepoint_failed_checkpoints_and_stops_again() -> None:
    subject = stopping_with_savepoint()
    subject.on_aborted(1, Reason.DECLINED)
    assert subject.request(CHECKPOINT) == StartCheckpoint(2, CHECKPOINT)
    assert subject.stop_with_savepoint(TARGET, drain=False) == StartCheckpoint(
        3, STOP_SAVEPOINT, final=True
    )


def test_every_subtask_finishing_before_the_stop_savepoint_completed_takes_another_one() -> None:
    subject = stopping_with_savepoint()
    assert finish_all(subject) == StartCheckpoint(2, STOP_SAVEPOINT, final=True)
    assert (subject.ending, subject.final_checkpoint_id) == (FINAL, 2)


def test_a_failed_drained_stop_savepoint_is_followed_by_a_final_checkpoint() -> None:
    subject = draining()
    final = started(finish_all(subject))
    assert subject.on_aborted(final.checkpoint_id, Reason.TIMEOUT) == StartCheckpoint(
        2, CHECKPOINT, final=True
    )
    assert subject.ending is FINAL


# The final checkpoint


def test_a_job_takes_its_final_checkpoint_once_every_subtask_finished() -> None:
    subject = decider()
    assert subject.on_finished(SOURCE, subtask_count=2) is None
    assert subject.ending is RUNNING
    assert subject.on_finished(SINK, subtask_count=2) == StartCheckpoint(1, CHECKPOINT, final=True)
    assert (subject.ending, subject.final_checkpoint_id) == (FINAL, 1)


def test_a_repeated_finished_report_starts_no_second_final_checkpoint() -> None:
    subject = decider()
    subject.on_finished(SOURCE, subtask_count=1)
    assert subject.on_finished(SOURCE, subtask_count=1) is None
    assert subject.final_checkpoint_id == 1


def test_a_failed_final_checkpoint_is_taken_again() -> None:
    subject = final_checkpoint()
    assert subject.on_aborted(1, Reason.TIMEOUT) == StartCheckpoint(2, CHECKPOINT, final=True)
    assert (subject.ending, subject.final_checkpoint_id) == (FINAL, 2)


def test_a_failed_checkpoint_other_than_the_final_one_retries_nothing() -> None:
    subject = final_checkpoint()
    assert subject.on_aborted(99, Reason.TIMEOUT) is None
    assert subject.final_checkpoint_id == 1


def test_a_final_snapshot_aborted_because_the_job_ended_is_not_taken_again() -> None:
    subject = final_checkpoint()
    assert subject.on_aborted(1, Reason.JOB_ENDED) is None
    assert subject.ending is FINAL


# Which subtasks hear a trigger


def test_a_trigger_goes_to_the_sources() -> None:
    assert decider().trigger_targets(frozenset({SOURCE})) == {SOURCE}


def test_a_trigger_also_goes_to_subtasks_whose_input_ended() -> None:
    subject = decider()
    subject.on_input_ended(MAP)
    assert subject.trigger_targets(frozenset({SOURCE})) == {SOURCE, MAP}


def test_a_trigger_also_goes_to_finished_subtasks() -> None:
    subject = decider()
    subject.on_input_ended(MAP)
    subject.on_finished(MAP, subtask_count=3)
    subject.on_finished(SINK, subtask_count=3)
    assert subject.trigger_targets(frozenset({SOURCE})) == {SOURCE, MAP, SINK}


def test_an_ended_subtask_is_triggered_for_each_pending_checkpoint_it_missed_oldest_first() -> None:
    checkpoints = [pending(3), pending(1), pending(2, SINK)]
    missed = decider().missed_barriers(SINK, checkpoints)
    assert [checkpoint.checkpoint_id for checkpoint in missed] == [1, 3]


def test_an_ended_subtask_misses_nothing_when_no_checkpoint_is_pending() -> None:
    assert decider().missed_barriers(SINK, []) == []


# Failures in a row against tolerable_failures


@pytest.mark.parametrize("reason", COUNTED, ids=lambda reason: reason.name)
def test_a_counted_failure_adds_one_to_the_failures_in_a_row(reason: Reason) -> None:
    subject = decider(tolerable_failures=3)
    subject.on_aborted(1, reason)
    assert subject.failures_in_a_row == 1


@pytest.mark.parametrize("reason", UNCOUNTED, ids=lambda reason: reason.name)
def test_an_uncounted_failure_never_fails_the_job(reason: Reason) -> None:
    subject = decider(tolerable_failures=0)
    assert [subject.on_aborted(i, reason) for i in range(5)] == [None] * 5
    assert subject.failures_in_a_row == 0


@pytest.mark.parametrize("tolerable", [0, 1, 3])
def test_the_job_runs_on_within_tolerable_failures(tolerable: int) -> None:
    subject = decider(tolerable_failures=tolerable)
    assert [subject.on_aborted(i, Reason.TIMEOUT) for i in range(tolerable)] == [None] * tolerable


@pytest.mark.parametrize("tolerable", [0, 1, 3])
def test_one_failure_more_than_tolerable_fails_the_job(tolerable: int) -> None:
    subject = decider(tolerable_failures=tolerable)
    for i in range(tolerable):
        subject.on_aborted(i, Reason.TIMEOUT)
    answer = subject.on_aborted(7, Reason.DECLINED)
    assert answer == FailJob(7, Reason.DECLINED, tolerable + 1, tolerable)


def test_the_failure_that_fails_the_job_names_the_setting() -> None:
    failure = FailJob(7, Reason.DECLINED, failures=2, tolerable=1)
    assert failure.message == (
        "2 checkpoints failed in a row, more than tolerable_failures=1; the job fails"
    )


@pytest.mark.parametrize("kind", list(SnapshotKind))
def test_a_completion_resets_the_failures_in_a_row(kind: SnapshotKind) -> None:
    subject = decider(tolerable_failures=1)
    subject.on_aborted(1, Reason.TIMEOUT)
    subject.on_completed(2, kind=kind, now=1.0)
    assert subject.failures_in_a_row == 0
    assert subject.on_aborted(3, Reason.TIMEOUT) is None


def test_a_failed_final_snapshot_beyond_tolerable_fails_the_job_and_retries_nothing() -> None:
    subject = final_checkpoint(tolerable_failures=0)
    assert isinstance(subject.on_aborted(1, Reason.TIMEOUT), FailJob)
    assert subject.next_checkpoint_id == 2


@given(st.lists(st.sampled_from([None, *Reason]), max_size=40), st.integers(0, 4))
def test_the_job_fails_exactly_when_counted_failures_since_a_completion_exceed_tolerable(
    events: list[Reason | None], tolerable: int
) -> None:
    subject = decider(tolerable_failures=tolerable)
    in_a_row = 0
    for checkpoint_id, reason in enumerate(events, start=1):
        if reason is None:
            subject.on_completed(checkpoint_id, kind=SnapshotKind.CHECKPOINT, now=0.0)
            in_a_row = 0
            continue
        in_a_row += reason in COUNTED
        failed = isinstance(subject.on_aborted(checkpoint_id, reason), FailJob)
        assert failed == (reason in COUNTED and in_a_row > tolerable)


def test_the_decider_shows_its_live_state() -> None:
    subject = final_checkpoint()
    assert repr(subject) == (
        "<CheckpointDecider 'numbers' final checkpoint next=2 final=1 failures_in_a_row=0>"
    )
