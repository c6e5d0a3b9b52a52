"""BatchStep: how a batch runs from one position of a subtask's chain to the next.

Each operator is a step of its own, one call per batch, except a ``map`` chained right
before a running ``reduce`` (a keyed stream's ``map(...).key_by(...).reduce(...)`` in one
chain, as at parallelism 1): the two run as one loop, which folds each record as the map
returns it, so no list of mapped records is built and walked again. The step then names
the reduce's scope, and the map's errors still name the map (``Mapping``). The event-time
kinds (``StampedMapOperator``, ...) are steps of their own, and so is a reduce that reads
its keys ahead (RocksDB's multi-get needs the mapped records first).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, NamedTuple

from lockgate.engine.runtime.operators.base import Operator
from lockgate.engine.runtime.operators.basic import MapOperator
from lockgate.engine.runtime.operators.rolling import Mapping, ReduceOperator
from lockgate.engine.runtime.operators.scope import OperatorScope

__all__ = ["BatchStep", "batch_steps"]


class BatchStep(NamedTuple):
    """A batch's way from ``position`` on: ``process(records)`` under ``scope``, then ``after``."""

    process: Callable[[list[Any]], list[Any]]
    scope: OperatorScope
    after: int


def batch_steps(stages: Sequence[tuple[Operator, OperatorScope]]) -> list[BatchStep]:
    """The step that starts at each position of the chain: ``steps[i]`` starts at stage ``i``.

    A fused step skips its reduce (``after`` is two on); the reduce keeps its own step, for
    batches that start there.
    """
    steps = []
    for position, (operator, scope) in enumerate(stages):
        following = stages[position + 1][0] if position + 1 < len(stages) else None
        if (
            type(operator) is MapOperator
            and type(following) is ReduceOperator
            and following.reads_ahead is False
        ):
            mapped = partial(following.process_mapped, mapping=Mapping(operator, scope))
            steps.append(BatchStep(mapped, stages[position + 1][1], position + 2))
        else:
            steps.append(BatchStep(operator.process_batch, scope, position + 1))
    return steps
