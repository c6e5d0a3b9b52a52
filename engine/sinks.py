"""Sink and SinkWriter: how records leave a job."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from lockgate.engine.clock import Clock

__all__ = ["Sink", "SinkContext", "SinkWriter"]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class SinkContext:
    """Where a writer runs, and what it must recover.

    ``restored_state`` holds the items that writers of the restored checkpoint returned from
    ``snapshot_state``, redistributed over the new subtasks (empty on a fresh start).
    ``job_name`` and ``attempt`` let a writer fence its transaction ids per attempt.
    """

    uid: str
    subtask_index: int
    parallelism: int
    clock: Clock
    restored_state: tuple[Any, ...] = ()
    job_name: str = "job"
    attempt: int = 0


class SinkWriter(ABC, Generic[T]):
    """Writes the records that reach one subtask of a sink, in the order they arrive.

    Checkpoint hooks, in the order the engine calls them: ``snapshot_state`` when the
    subtask snapshots checkpoint n (everything written before it belongs to n); then either
    ``notify_checkpoint_complete(n)`` once n is durable, or ``notify_checkpoint_aborted(n)``.
    Notifications can be late or skipped: completing n implies every checkpoint before n.
    """

    async def open(self) -> None:
        """Acquire resources before the first write."""

    @abstractmethod
    async def write(self, records: list[T]) -> None:
        """Write a batch of records; waiting here backpressures the job."""

    async def finish(self) -> None:
        """Make everything written durable: the input has ended and nothing more will come."""

    async def close(self) -> None:
        """Release resources; called once, also after a failure (then without ``finish``)."""


class Sink(ABC, Generic[T]):
    """Where a job's records go: one writer per parallel subtask."""

    @abstractmethod
    def create_writer(self, context: SinkContext) -> SinkWriter[T]:
        """Return the writer for one subtask."""
