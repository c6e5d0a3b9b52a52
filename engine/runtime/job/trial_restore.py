"""trial_restore: restore a snapshot into a job's operators up to ``open()``, and run nothing.

What ``lockgate savepoint check`` asks before it says a restore would succeed. The metadata
alone (``check_restore``) cannot show every problem: a state file may be unreadable or
contradict its metadata, and a function may declare a state in ``open()`` as another kind
than the snapshot holds, which shows only once the operator is built on its restored state
and opened. So this reads every state file as the restore does, builds each operator with
state on each of its subtasks' shares, opens it and closes it again. No record flows;
sources and sinks are not opened.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence

from lockgate.engine.checkpointing.snapshots import OperatorSnapshot
from lockgate.engine.errors import CheckpointStorageError, OperatorError, RestoreError
from lockgate.engine.functions.process import RuntimeContext
from lockgate.engine.graph.job_graph import OperatorNode
from lockgate.engine.graph.planning import ExecutionPlan
from lockgate.engine.restore.loader import load_restored_state
from lockgate.engine.restore.native import discard_downloads
from lockgate.engine.restore.resolve import RestoreSettings
from lockgate.engine.runtime.operators.base import Operator
from lockgate.engine.runtime.operators.kinds import OPERATOR_CLASSES, create_operator
from lockgate.engine.runtime.operators.scope import OperatorScope
from lockgate.engine.savepoints.values import ValueCodec
from lockgate.engine.time.clock import Clock

__all__ = ["trial_restore"]


async def trial_restore(
    restore: RestoreSettings,
    plan: ExecutionPlan,
    max_parallelism: int,
    *,
    codec: ValueCodec,
    clock: Clock,
) -> list[str]:
    """Return why restoring ``restore`` into ``plan`` would fail, as sentences; ``[]`` if not.

    The state is read as ``load_restored_state`` reads it (with ``codec``, the job's), so
    every reason it refuses is one; then each operator with state is built and opened on
    every subtask's share, and the first ``RestoreError`` or failure of a user function's
    ``open()`` per operator is another. Problems of the snapshot or the job are returned,
    never raised; the operators are closed again.
    """
    try:
        restored = await load_restored_state(restore, plan, max_parallelism, codec=codec)
    except (RestoreError, CheckpointStorageError) as error:
        return [str(error)]
    try:
        return [
            problem
            for node in plan.graph
            if node.kind in OPERATOR_CLASSES and node.uid in restored
            for problem in _first_problem(node, restored[node.uid], max_parallelism, clock)
        ]
    finally:
        discard_downloads(restored)


def _first_problem(
    node: OperatorNode, shares: Sequence[OperatorSnapshot], max_parallelism: int, clock: Clock
) -> Iterator[str]:
    for index, share in enumerate(shares):
        scope = OperatorScope(node.uid, index, node.parallelism)
        try:
            with scope:
                operator = create_operator(node, share, clock)
                operator.load_keyed_state()
                _open_and_close(operator, _context(operator, scope, max_parallelism, clock))
        except (RestoreError, OperatorError) as error:
            yield str(error)
            return


def _open_and_close(operator: Operator, context: RuntimeContext) -> None:
    try:
        operator.open(context)
    except BaseException:
        with contextlib.suppress(Exception):  # the failure to open is the problem to report
            operator.close()
        raise
    operator.close()


def _context(
    operator: Operator, scope: OperatorScope, max_parallelism: int, clock: Clock
) -> RuntimeContext:
    return RuntimeContext(
        uid=operator.uid,
        subtask_index=scope.subtask_index,
        parallelism=scope.parallelism,
        max_parallelism=max_parallelism,
        clock=clock,
        keyed_state=operator.keyed_state,
        operator_state=operator.operator_state,
    )
