import pytest

from lockgate.actors import IllegalStateTransition
from lockgate.engine.checkpointing.checkpoint_status import CheckpointStatus

PENDING, COMPLETED, ABORTED = (
    CheckpointStatus.PENDING,
    CheckpointStatus.COMPLETED,
    CheckpointStatus.ABORTED,
)
ALLOWED = [(PENDING, COMPLETED), (PENDING, ABORTED)]
ILLEGAL = [(a, b) for a in CheckpointStatus for b in CheckpointStatus if (a, b) not in ALLOWED]


def ids(transition: tuple[CheckpointStatus, CheckpointStatus]) -> str:
    return f"{transition[0].value}->{transition[1].value}"


@pytest.mark.parametrize("transition", ALLOWED, ids=ids)
def test_a_pending_checkpoint_may_complete_or_abort(
    transition: tuple[CheckpointStatus, CheckpointStatus],
) -> None:
    current, target = transition
    assert current.advance(target) is target


@pytest.mark.parametrize("transition", ILLEGAL, ids=ids)
def test_an_illegal_transition_names_both_states(
    transition: tuple[CheckpointStatus, CheckpointStatus],
) -> None:
    current, target = transition
    with pytest.raises(IllegalStateTransition, match=f"{current.name}.*{target.name}"):
        current.advance(target)


def test_only_completed_and_aborted_are_terminal() -> None:
    assert [status for status in CheckpointStatus if status.is_terminal] == [COMPLETED, ABORTED]
