"""What a job needs to run in worker processes, checked at submission, before it starts.

- Every operator's function (and key selector) pickles with cloudpickle: a ``GraphError``
  names the first operator uid that does not.
- Checkpoint storage every worker reaches: ``memory://`` lives in one process only.
- A clock every worker shares: the system clock (a ``ManualClock`` moves in one process).
- Watermark alignment within one worker: a group's sources align through an object of one
  process, so a group whose source subtasks are placed on several workers is refused.
"""

from __future__ import annotations

from typing import Any

from lockgate.engine.checkpointing.storage import CheckpointStorage, MemoryCheckpointStorage
from lockgate.engine.errors import ExecutorError, GraphError
from lockgate.engine.graph.job_graph import OperatorKind
from lockgate.engine.graph.planning import ExecutionPlan
from lockgate.engine.runtime.executors.shipping import DriverObjects, ship
from lockgate.engine.time.clock import Clock, SystemClock

__all__ = ["check_alignment", "check_clock", "check_picklable", "check_storage"]


def check_picklable(plan: ExecutionPlan, executor: str) -> None:
    """Raise ``GraphError`` naming the first operator whose function cannot be pickled."""
    objects = DriverObjects()
    for node in plan.graph.nodes:
        _check(node.uid, "function", node.function, objects, executor)
        if node.key_selector is not None:
            _check(node.uid, "key selector", node.key_selector, objects, executor)
    for edge in plan.edges:
        if edge.key_selector is not None:
            uid = edge.downstream.head.uid
            _check(uid, "key selector", edge.key_selector, objects, executor)


def _check(uid: str, what: str, value: Any, objects: DriverObjects, executor: str) -> None:
    try:
        ship(value, objects)
    except Exception as error:  # pickling raises whatever the object's reducer raises
        raise GraphError(
            f"operator '{uid}': its {what} {value!r} cannot be pickled, so it cannot travel "
            f"to the worker processes of {executor}: {type(error).__name__}: {error}; hold "
            "no open files, sockets, locks, event-loop objects or generators in it (open "
            "them in open()), or run the job on the LocalExecutor"
        ) from error


def check_storage(storage: CheckpointStorage, executor: str) -> None:
    """Raise ``ExecutorError`` when the checkpoint storage lives in this process only."""
    if isinstance(storage, MemoryCheckpointStorage):
        raise ExecutorError(
            f"checkpoint storage memory:// lives in the driving process only, and the "
            f"worker processes of {executor} write their state where the job master reads "
            "it: set_checkpoint_storage('file:///path') on one machine (or 's3://bucket/"
            "prefix'), reachable from every worker"
        )


def check_clock(clock: Clock, executor: str) -> None:
    """Raise ``ExecutorError`` unless ``clock`` is the system clock every process reads."""
    if type(clock) is not SystemClock:
        raise ExecutorError(
            f"the job's clock {clock!r} cannot be shared by the worker processes of "
            f"{executor}: each would move its own copy; run it on the LocalExecutor, or "
            "leave the environment's clock as the system clock"
        )


def check_alignment(plan: ExecutionPlan, executor: str) -> None:
    """Raise ``ExecutorError`` when a watermark alignment group's sources span workers.

    ``plan`` is placed; a group whose source subtasks are all on one worker aligns there.
    """
    placement = plan.placement
    assert placement is not None, "alignment is checked on the placed plan"
    groups: dict[str, set[int]] = {}
    for chain in plan.chains:
        for node in chain.operators:
            alignment = getattr(node.function, "alignment", None)
            if node.kind is not OperatorKind.TIMESTAMPS or alignment is None:
                continue
            workers = groups.setdefault(alignment.group, set())
            workers.update(placement.worker_of(chain.chain_id, i) for i in range(chain.parallelism))
            if len(workers) > 1:
                raise ExecutorError(
                    f"operator '{node.uid}' aligns watermarks in group '{alignment.group}', "
                    f"whose source subtasks {executor} places on workers {sorted(workers)}; "
                    "a group aligns its sources within one process only (not yet across "
                    "workers): run the job on the LocalExecutor, on ProcessExecutor(workers=1), "
                    "or without with_watermark_alignment()"
                )
