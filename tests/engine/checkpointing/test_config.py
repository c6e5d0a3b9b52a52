"""Checkpoint configuration: which alignment options fit together, and what barriers carry."""

from __future__ import annotations

import pytest

from lockgate.engine import CheckpointingMode, StreamEnvironment
from lockgate.engine.checkpointing.config import CheckpointConfig
from lockgate.engine.events import SnapshotKind, SnapshotOptions


def test_checkpoints_are_aligned_by_default() -> None:
    assert CheckpointConfig().checkpoint_options == SnapshotOptions()


def test_unaligned_checkpoints_carry_their_options_on_every_barrier() -> None:
    config = CheckpointConfig(unaligned=True, aligned_timeout=0.5)

    assert config.checkpoint_options == SnapshotOptions(unaligned=True, aligned_timeout=0.5)


def test_an_unaligned_barrier_overtakes_at_once_unless_it_has_an_aligned_timeout() -> None:
    assert SnapshotOptions(unaligned=True).overtakes
    assert not SnapshotOptions(unaligned=True, aligned_timeout=0.0).overtakes
    assert not SnapshotOptions().overtakes


def test_a_barrier_forwarded_unaligned_drops_its_aligned_timeout() -> None:
    options = SnapshotOptions(unaligned=True, aligned_timeout=2.0)

    assert options.as_unaligned() == SnapshotOptions(unaligned=True)


def test_enable_checkpointing_takes_the_unaligned_options() -> None:
    env = StreamEnvironment()

    env.enable_checkpointing(1.0, unaligned=True, aligned_timeout=0.0)

    assert (env.checkpoint_config.unaligned, env.checkpoint_config.aligned_timeout) == (True, 0.0)


def test_an_aligned_timeout_without_unaligned_is_refused() -> None:
    with pytest.raises(ValueError, match=r"aligned_timeout=1.0 needs unaligned=True"):
        StreamEnvironment().enable_checkpointing(1.0, aligned_timeout=1.0)


def test_a_negative_aligned_timeout_is_refused() -> None:
    with pytest.raises(ValueError, match=r"aligned_timeout must be 0 or more seconds; got -1"):
        CheckpointConfig(unaligned=True, aligned_timeout=-1)


def test_unaligned_at_least_once_checkpoints_are_refused() -> None:
    with pytest.raises(ValueError, match="unaligned checkpoints need mode=EXACTLY_ONCE"):
        CheckpointConfig(mode=CheckpointingMode.AT_LEAST_ONCE, unaligned=True)


def test_unaligned_checkpoints_are_taken_one_at_a_time() -> None:
    with pytest.raises(ValueError, match=r"one at a time .* max_concurrent=2: set it to 1"):
        CheckpointConfig(unaligned=True, max_concurrent=2)


def test_a_refused_configuration_leaves_checkpointing_as_it_was() -> None:
    env = StreamEnvironment()

    with pytest.raises(ValueError):
        env.enable_checkpointing(1.0, aligned_timeout=1.0)

    assert not env.checkpointing_enabled


@pytest.mark.parametrize("kind", [SnapshotKind.SAVEPOINT, SnapshotKind.STOP_SAVEPOINT])
def test_a_savepoint_cannot_be_unaligned(kind: SnapshotKind) -> None:
    with pytest.raises(ValueError, match=f"a {kind.value} is always aligned"):
        SnapshotOptions(kind, "/tmp/sp", unaligned=True)
