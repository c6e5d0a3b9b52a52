"""discover_splits: sources look up what their splits are made of before an attempt deploys."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lockgate.engine.graph.job_graph import OperatorKind
from lockgate.engine.graph.planning import ExecutionPlan
from lockgate.engine.io.sources import Source
from lockgate.engine.runtime.operators.scope import OperatorScope

__all__ = ["discover_splits"]


async def discover_splits(plan: ExecutionPlan, restored: Mapping[str, Any]) -> None:
    """Await ``Source.discover_splits`` of every source whose splits this attempt builds.

    A source restored from a checkpoint reads the splits the checkpoint holds, so it is not
    asked. The deployment then calls ``create_splits``, plain synchronous code, which may use
    what the discovery found without any I/O on the event loop. A failure names the source's
    operator uid, as its ``create_splits`` would.
    """
    for chain in plan.chains:
        head = chain.head
        if head.kind is OperatorKind.SOURCE and head.uid not in restored:
            source: Source[Any] = head.function
            with OperatorScope(head.uid, 0, chain.parallelism):
                await source.discover_splits()
