"""check_restore: what restoring a savepoint or checkpoint into a job would do, before it runs.

Flink's rules, judged from the metadata and the job's plan alone:

- the max_parallelism must be the one the snapshot was taken with: keyed state is split
  into that many key groups, and they cannot be split otherwise;
- state of an operator uid the job no longer has fails the restore, unless
  ``allow_non_restored_state`` drops it;
- a different parallelism is fine: key groups and operator state are redistributed;
- operators of the job that have no state in the snapshot start empty.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lockgate.engine.checkpointing.metadata import CheckpointMetadata
from lockgate.engine.graph.planning import ExecutionPlan

__all__ = ["OperatorMapping", "RestoreReport", "check_restore", "snapshot_name"]


@dataclass(frozen=True, slots=True)
class OperatorMapping:
    """Where the state of one operator uid goes on restore: from one parallelism to another.

    ``new_parallelism`` is ``None`` when the job has no operator with the uid: its state is
    dropped (with ``allow_non_restored_state``) or fails the restore.
    """

    uid: str
    old_parallelism: int
    new_parallelism: int | None

    @property
    def dropped(self) -> bool:
        """Whether the job has no operator to take this state."""
        return self.new_parallelism is None

    @property
    def rescaled(self) -> bool:
        """Whether the state is redistributed over another number of subtasks."""
        return not self.dropped and self.new_parallelism != self.old_parallelism


@dataclass(frozen=True, slots=True)
class RestoreReport:
    """What a restore would do: each state's operator mapping, and why it would fail.

    The restore succeeds exactly when ``problems`` is empty (``ok``). Each problem is a
    sentence naming the snapshot and the operator uid and saying what to change, fit to be
    raised as a ``RestoreError``. ``mapping`` lists every operator uid with state, in the
    snapshot's order; ``starting_empty`` the job's operators without state in the snapshot.
    """

    mapping: list[OperatorMapping] = field(default_factory=list)
    starting_empty: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Whether the restore would succeed."""
        return not self.problems

    @property
    def dropped(self) -> list[str]:
        """The uids with state the job has no operator for (a problem unless allowed)."""
        return [entry.uid for entry in self.mapping if entry.dropped]


def check_restore(
    metadata: CheckpointMetadata,
    plan: ExecutionPlan,
    max_parallelism: int,
    *,
    allow_non_restored_state: bool = False,
) -> RestoreReport:
    """Judge whether the snapshot ``metadata`` describes can be restored into ``plan``.

    ``max_parallelism`` is the job's. With ``allow_non_restored_state`` state of operator
    uids the job no longer has is reported as dropped instead of as a problem.
    """
    parallelism = {node.uid: node.parallelism for node in plan.graph}
    mapping = [
        OperatorMapping(uid, handles.parallelism, parallelism.get(uid))
        for uid, handles in metadata.operators.items()
        if any(handle is not None for handle in handles.handles)
    ]
    problems = _max_parallelism_problems(metadata, max_parallelism)
    if not allow_non_restored_state:
        problems += [
            _missing_operator(metadata, plan, entry.uid) for entry in mapping if entry.dropped
        ]
    with_state = {entry.uid for entry in mapping}
    starting_empty = [uid for uid in parallelism if uid not in with_state]
    return RestoreReport(mapping, starting_empty, problems)


def snapshot_name(metadata: CheckpointMetadata) -> str:
    """Name the snapshot as messages do: ``savepoint 7`` or ``checkpoint 7``."""
    kind = "savepoint" if metadata.is_savepoint else "checkpoint"
    return f"{kind} {metadata.checkpoint_id}"


def _max_parallelism_problems(metadata: CheckpointMetadata, max_parallelism: int) -> list[str]:
    if metadata.max_parallelism == max_parallelism:
        return []
    return [
        f"{snapshot_name(metadata)} was taken with max_parallelism {metadata.max_parallelism}, "
        f"but the job has {max_parallelism}; keyed state is split into that many key groups, "
        f"so set max_parallelism back to {metadata.max_parallelism}"
    ]


def _missing_operator(metadata: CheckpointMetadata, plan: ExecutionPlan, uid: str) -> str:
    problem = (
        f"{snapshot_name(metadata)} holds state for operator '{uid}', which the job no "
        f"longer has; give the operator that owns it uid='{uid}' again, or pass "
        "allow_non_restored_state=True to drop that state"
    )
    generated = [node.uid for node in plan.graph if not node.uid_is_explicit]
    if generated:
        problem += (
            f" (the uids {', '.join(map(repr, generated))} are generated, and generated uids "
            "change when the job changes: give every stateful operator a uid)"
        )
    return problem
