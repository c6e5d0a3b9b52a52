"""Whether a checkpoint's channel state can be restored into a job: same channels, same sizes.

Channel state belongs to one channel between one upstream and one downstream subtask, so
it restores only into a job that has the same channel: the same edge between the same
operators, both at the parallelism the checkpoint was taken at. Anything else must go
through a savepoint, which is always aligned and holds no channel state.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from lockgate.engine.checkpointing.channel_state import ChannelId
from lockgate.engine.checkpointing.metadata import CheckpointMetadata
from lockgate.engine.checkpointing.snapshots import OperatorSnapshot
from lockgate.engine.graph.planning import ChainEdge, ExecutionPlan
from lockgate.engine.restore.compatibility import snapshot_name

__all__ = ["channel_state_problems"]


def channel_state_problems(
    uid: str,
    snapshots: Sequence[OperatorSnapshot],
    metadata: CheckpointMetadata,
    plan: ExecutionPlan,
) -> list[str]:
    """Say why the channel state in ``uid``'s ``snapshots`` cannot be restored into ``plan``.

    Returns one sentence per edge whose in-flight records cannot be restored, naming the
    operators at its ends and what to do; an empty list when everything fits (or there is
    no channel state).
    """
    edges = {edge.edge_id: edge for edge in plan.edges}
    problems: list[str] = []
    for edge_id in sorted(_edges_with_records(snapshots)):
        edge = edges.get(edge_id)
        problem = (
            _changed_edge(metadata, uid)
            if edge is None or uid not in (edge.upstream.tail.uid, edge.downstream.head.uid)
            else _rescaled_edge(metadata, edge)
        )
        if problem and problem not in problems:
            problems.append(problem)
    return problems


def _edges_with_records(snapshots: Iterable[OperatorSnapshot]) -> set[int]:
    return {
        ChannelId(*channel).edge_id
        for snapshot in snapshots
        for channels in (snapshot.input_channels, snapshot.output_channels)
        for channel, records in channels.items()
        if records
    }


def _rescaled_edge(metadata: CheckpointMetadata, edge: ChainEdge) -> str:
    ends = (edge.upstream.tail, edge.downstream.head)
    old = [_old_parallelism(metadata, node.uid) for node in ends]
    new = [node.parallelism for node in ends]
    if old == new:
        return ""
    upstream, downstream = (node.uid for node in ends)
    return (
        f"{snapshot_name(metadata)} is unaligned and holds in-flight records on the channels "
        f"from operator '{upstream}' (parallelism {_shown(old[0])}) to operator "
        f"'{downstream}' (parallelism {_shown(old[1])}), but the job runs them at parallelism "
        f"{new[0]} and {new[1]}; restore it at the parallelism it was taken at, or rescale "
        "through a savepoint (savepoints are aligned and hold no in-flight records)"
    )


def _changed_edge(metadata: CheckpointMetadata, uid: str) -> str:
    return (
        f"{snapshot_name(metadata)} is unaligned and holds in-flight records of operator "
        f"'{uid}' on channels the job no longer has; restore it into the job it was taken "
        "from, or change the job through a savepoint (savepoints hold no in-flight records)"
    )


def _old_parallelism(metadata: CheckpointMetadata, uid: str) -> int | None:
    handles = metadata.operators.get(uid)
    return None if handles is None else handles.parallelism


def _shown(parallelism: int | None) -> str:
    return "unknown" if parallelism is None else str(parallelism)
