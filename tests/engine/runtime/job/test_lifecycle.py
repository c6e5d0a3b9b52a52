"""Each lifecycle event says how it is logged: steps at INFO, restarts and checkpoints that
went wrong at WARNING, a failed job at ERROR with its exception, with structured fields."""

from __future__ import annotations

import logging

import pytest

from lockgate.engine import (
    CheckpointCompleted,
    CheckpointFailed,
    CheckpointFailureReason,
    JobFailed,
    JobFinished,
    JobRestarting,
    JobStarted,
    OperatorError,
    RestoredFromCheckpoint,
)

Reason = CheckpointFailureReason
FAILURE = OperatorError("sums", 1, 2, ValueError("bad record"))


def test_steps_of_a_job_are_logged_at_info() -> None:
    steps = [
        JobStarted("job", 0.0, 0),
        RestoredFromCheckpoint("job", 0.0, 1, 4, "/chk/job/chk-4/_metadata", False),
        CheckpointCompleted("job", 0.0, 5, "/chk/job/chk-5/_metadata", False, 0.1, 1024),
        JobFinished("job", 0.0, 1),
    ]

    assert {event.level for event in steps} == {logging.INFO}
    assert all(event.error is None for event in steps)


def test_a_restart_is_a_warning_carrying_its_cause() -> None:
    restarting = JobRestarting("job", 0.0, 0, FAILURE, 1.5)

    assert (restarting.level, restarting.error) == (logging.WARNING, FAILURE)


def test_a_failed_job_is_an_error_carrying_its_failure_and_ends_the_job() -> None:
    failed = JobFailed("job", 0.0, 3, FAILURE)

    assert (failed.level, failed.error, failed.is_terminal) == (logging.ERROR, FAILURE, True)


@pytest.mark.parametrize(
    ("reason", "level"),
    [
        (Reason.TIMEOUT, logging.WARNING),
        (Reason.DECLINED, logging.WARNING),
        (Reason.STORAGE_FAILED, logging.WARNING),
        (Reason.UNENCODABLE_STATE, logging.WARNING),
        (Reason.SUBSUMED, logging.INFO),
        (Reason.ALIGNMENT_ABORTED, logging.INFO),
        (Reason.JOB_ENDED, logging.INFO),
        (Reason.SUBTASK_FAILED, logging.INFO),
    ],
)
def test_a_failed_checkpoint_warns_only_when_something_went_wrong(
    reason: CheckpointFailureReason, level: int
) -> None:
    assert CheckpointFailed("job", 0.0, 3, reason, "", False).level == level


def test_a_failure_in_a_function_names_its_operator_and_subtask_in_the_log_fields() -> None:
    fields = JobRestarting("job", 0.0, 2, FAILURE, 1.5).log_fields()

    assert fields == {
        "event": "JobRestarting",
        "job": "job",
        "attempt": 2,
        "delay": 1.5,
        "uid": "sums",
        "subtask": 1,
    }


def test_checkpoint_events_carry_the_checkpoint_id_in_the_log_fields() -> None:
    failed = CheckpointFailed("job", 0.0, 3, Reason.TIMEOUT, "", False)
    restored = RestoredFromCheckpoint("job", 0.0, 1, 4, "/chk/4", True)

    assert failed.log_fields()["checkpoint_id"] == 3
    assert failed.log_fields()["reason"] == "TIMEOUT"
    assert (restored.log_fields()["checkpoint_id"], restored.log_fields()["location"]) == (
        4,
        "/chk/4",
    )


def test_messages_say_what_happened_naming_the_job_and_checkpoint() -> None:
    restored = RestoredFromCheckpoint("orders", 0.0, 1, 4, "/chk/orders/chk-4/_metadata", False)
    failed = CheckpointFailed(
        "orders", 0.0, 7, Reason.DECLINED, "subtask 'sink' 1/2 said no", False
    )

    assert restored.message() == (
        "job 'orders' attempt 1 restores checkpoint 4 at /chk/orders/chk-4/_metadata"
    )
    assert failed.message() == (
        "job 'orders' checkpoint 7 failed (DECLINED): a subtask declined the checkpoint: "
        "subtask 'sink' 1/2 said no"
    )
