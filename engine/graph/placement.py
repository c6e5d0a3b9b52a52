"""Placement: which worker process hosts each subtask of a plan ☐.

Worker ``w`` of ``W`` owns the key groups ``[w * max_parallelism // W, (w + 1) *
max_parallelism // W)``; a subtask runs on the worker that owns the first key group of its
range (``key_group_range``), keyed or not. So the placement depends only on the plan's
parallelisms, ``max_parallelism`` and the worker count: every attempt of a job places every
subtask on the same worker, a key-group range stays on its worker across restarts, and
subtasks of equal index in chains of equal parallelism share a worker (a forward edge between
them never leaves the process). A chain is one subtask actor, so a chain is never split.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from lockgate.engine.state.key_groups import key_group_range

__all__ = ["Placement", "SubtaskSlot", "place_subtasks"]

SubtaskSlot = tuple[int, int]
"""A subtask by ``(chain_id, subtask_index)``."""


@dataclass(frozen=True)
class Placement:
    """The worker of every subtask: ``workers`` processes, numbered from 0."""

    workers: int
    assignments: Mapping[SubtaskSlot, int]

    def worker_of(self, chain_id: int, subtask_index: int) -> int:
        """The worker hosting subtask ``subtask_index`` of chain ``chain_id``."""
        return self.assignments[chain_id, subtask_index]

    def subtasks_of(self, worker: int) -> tuple[SubtaskSlot, ...]:
        """The subtasks worker ``worker`` hosts, by chain, then index."""
        return tuple(sorted(slot for slot, host in self.assignments.items() if host == worker))

    def describe(self) -> str:
        """One line per worker: ``worker 0: chain 0 [0], chain 2 [0 1]``."""
        return "\n".join(self._line(worker) for worker in range(self.workers))

    def _line(self, worker: int) -> str:
        by_chain: dict[int, list[int]] = {}
        for chain_id, index in self.subtasks_of(worker):
            by_chain.setdefault(chain_id, []).append(index)
        hosted = ", ".join(
            f"chain {chain_id} [{' '.join(map(str, indexes))}]"
            for chain_id, indexes in by_chain.items()
        )
        return f"worker {worker}: {hosted or 'nothing'}"


def place_subtasks(
    chains: Iterable[tuple[int, int]], *, workers: int, max_parallelism: int
) -> Placement:
    """Place the subtasks of ``chains`` (``(chain_id, parallelism)`` pairs) on ``workers``.

    Raises:
        ValueError: ``workers`` is below 1.
    """
    if workers < 1:
        raise ValueError(f"workers must be at least 1; got {workers}")
    assignments = {
        (chain_id, index): _worker_of(index, parallelism, workers, max_parallelism)
        for chain_id, parallelism in chains
        for index in range(parallelism)
    }
    return Placement(workers, assignments)


def _worker_of(index: int, parallelism: int, workers: int, max_parallelism: int) -> int:
    first_key_group = key_group_range(index, max_parallelism, parallelism).start
    return first_key_group * workers // max_parallelism
