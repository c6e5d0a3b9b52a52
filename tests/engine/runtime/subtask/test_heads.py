"""SourceHead: the batches its fetch task holds read ahead of what the subtask polled."""

from __future__ import annotations

import anyio

from lockgate.actors import Doorbell
from lockgate.connectors import CollectionSource
from lockgate.engine.io.sources import SourceContext
from lockgate.engine.runtime.operators.scope import OperatorScope
from lockgate.engine.runtime.subtask.heads import READ_AHEAD, SourceHead
from lockgate.engine.runtime.subtask.source_alignment import SourceAlignment
from lockgate.engine.time.alignment import AlignmentGroup
from lockgate.engine.time.clock import SystemClock


def source_head() -> SourceHead:
    source = CollectionSource(range(10_000))
    splits = source.create_splits(1)
    reader = source.create_reader(splits, SourceContext("numbers", 0, 1, SystemClock()))
    return SourceHead(reader, splits, batch_size=10, scope=OperatorScope("numbers", 0, 1))


async def batches_held_once_blocked(head: SourceHead) -> int:
    await head.open(Doorbell())
    async with anyio.create_task_group() as group:
        head.start(group)
        await anyio.wait_all_tasks_blocked()
        held = head.buffered
        group.cancel_scope.cancel()
    return held


async def test_a_source_head_holds_read_ahead_batches_before_any_is_polled() -> None:
    head = source_head()

    held = await batches_held_once_blocked(head)

    assert held == READ_AHEAD > 1


async def test_an_aligned_source_head_holds_one_batch_ahead() -> None:
    head = source_head()
    group = AlignmentGroup("g", max_drift=1.0)
    head.align_with(
        SourceAlignment(group, "numbers", lambda: 0.0, clock=SystemClock(), update_interval=1.0)
    )

    held = await batches_held_once_blocked(head)

    assert held == 1
