"""CheckpointConfig: when and how a job takes checkpoints."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from lockgate.engine.events import SnapshotOptions

__all__ = ["CheckpointConfig", "CheckpointingMode"]


class CheckpointingMode(enum.Enum):
    """What checkpoints guarantee: each event reflected in state exactly once, or at least once.

    Exactly-once aligns barriers (a subtask stops reading a channel that delivered the
    barrier until all have); at-least-once never blocks, so a restore may replay records
    that the snapshot already reflects.
    """

    EXACTLY_ONCE = "exactly_once"
    AT_LEAST_ONCE = "at_least_once"


@dataclass(frozen=True, slots=True)
class CheckpointConfig:
    """Checkpoint settings; by default one slow checkpoint never restarts a healthy job.

    Attributes:
        interval: seconds between the start of two periodic checkpoints; ``None`` takes only
            the final checkpoint of a bounded job and those triggered on demand.
        mode: exactly-once (aligned barriers) or at-least-once (no blocking).
        timeout: seconds after which a checkpoint that is not complete is aborted (Flink's
            default, 10 minutes).
        min_pause: seconds between the end of one checkpoint and the start of the next.
        max_concurrent: checkpoints in progress at once.
        tolerable_failures: consecutive failed checkpoints (timeouts, declines, storage
            errors) tolerated before the job fails and restarts. Flink defaults to 0; here the
            default is 3, so that a single slow or failed checkpoint is only reported.
        max_retained: completed checkpoints kept in storage; older ones are deleted when a
            newer one completes.
        unaligned: take checkpoints unaligned (exactly-once only, one at a time): barriers
            overtake the records queued in channels, and those in-flight records are stored
            with the checkpoint, so a checkpoint under backpressure does not wait for full
            channels to drain. Savepoints stay aligned. A checkpoint with in-flight records
            restores only at the parallelism it was taken at.
        aligned_timeout: with ``unaligned``, start each checkpoint aligned and let a subtask
            go unaligned once its alignment has taken this many seconds (0: at once).
    """

    interval: float | None = None
    mode: CheckpointingMode = CheckpointingMode.EXACTLY_ONCE
    timeout: float = 600.0
    min_pause: float = 0.0
    max_concurrent: int = 1
    tolerable_failures: int = 3
    max_retained: int = 1
    unaligned: bool = False
    aligned_timeout: float | None = None

    def __post_init__(self) -> None:
        if self.interval is not None and self.interval <= 0:
            raise ValueError(f"checkpoint interval must be positive; got {self.interval}")
        if self.timeout <= 0:
            raise ValueError(f"checkpoint timeout must be positive; got {self.timeout}")
        if self.max_concurrent < 1 or self.max_retained < 1 or self.tolerable_failures < 0:
            raise ValueError(
                "max_concurrent and max_retained must be at least 1 and tolerable_failures at "
                f"least 0; got {self.max_concurrent}, {self.max_retained}, "
                f"{self.tolerable_failures}"
            )
        self._check_unaligned()

    @property
    def checkpoint_options(self) -> SnapshotOptions:
        """The options every checkpoint (not savepoint) of the job is taken with."""
        return SnapshotOptions(unaligned=self.unaligned, aligned_timeout=self.aligned_timeout)

    def _check_unaligned(self) -> None:
        _ = self.checkpoint_options  # checks aligned_timeout
        if self.unaligned and self.mode is not CheckpointingMode.EXACTLY_ONCE:
            raise ValueError(
                "unaligned checkpoints need mode=EXACTLY_ONCE; at-least-once checkpoints never "
                "block a channel, so there is no alignment to skip: drop unaligned=True"
            )
        if self.unaligned and self.max_concurrent != 1:
            raise ValueError(
                f"unaligned checkpoints are taken one at a time (as in Flink); got "
                f"max_concurrent={self.max_concurrent}: set it to 1"
            )
