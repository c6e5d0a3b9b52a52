import pytest

from lockgate.actors import IllegalStateTransition
from lockgate.engine import JobStatus

CREATED, RUNNING, RESTARTING = JobStatus.CREATED, JobStatus.RUNNING, JobStatus.RESTARTING
FINISHING, FINISHED = JobStatus.FINISHING, JobStatus.FINISHED
CANCELED, FAILED = JobStatus.CANCELED, JobStatus.FAILED

ALLOWED = [
    (CREATED, RUNNING),
    (CREATED, FINISHING),
    (CREATED, FAILED),
    (RUNNING, RESTARTING),
    (RUNNING, FINISHING),
    (RUNNING, FINISHED),
    (RUNNING, FAILED),
    (RESTARTING, RUNNING),
    (RESTARTING, FINISHING),
    (RESTARTING, FAILED),
    (FINISHING, RESTARTING),
    (FINISHING, FINISHED),
    (FINISHING, CANCELED),
    (FINISHING, FAILED),
]
ILLEGAL = [
    (current, target)
    for current in JobStatus
    for target in JobStatus
    if (current, target) not in ALLOWED
]


def ids(transition: tuple[JobStatus, JobStatus]) -> str:
    return f"{transition[0].value}->{transition[1].value}"


@pytest.mark.parametrize("transition", ALLOWED, ids=ids)
def test_an_allowed_transition_returns_the_target_status(transition):
    current, target = transition

    assert current.advance(target) is target


@pytest.mark.parametrize("transition", ILLEGAL, ids=ids)
def test_an_illegal_transition_raises_naming_both_statuses(transition):
    current, target = transition

    with pytest.raises(IllegalStateTransition, match=f"{current.name}.*{target.name}"):
        current.advance(target)


def test_an_illegal_transition_error_carries_both_statuses():
    with pytest.raises(IllegalStateTransition) as raised:
        FINISHED.advance(RUNNING)

    assert (raised.value.current, raised.value.target) == (FINISHED, RUNNING)


def test_finished_canceled_and_failed_are_the_terminal_statuses():
    assert {status for status in JobStatus if status.is_terminal} == {FINISHED, CANCELED, FAILED}
