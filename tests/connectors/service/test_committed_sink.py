"""A CommittedSink's subscribers see the records of a transaction only once its checkpoint
committed it, each once, in one commit order; from their start, or from the history."""

from __future__ import annotations

from contextlib import aclosing

import anyio
import pytest

from lockgate.connectors import CollectionSource, CommittedSink
from lockgate.engine import SinkContext, StreamEnvironment, SystemClock
from lockgate.engine.testing import AwaitCheckpoint, FailOnce
from tests.connectors.service.jobs import take


def context(index: int = 0, *, attempt: int = 0, restored: tuple[object, ...] = ()) -> SinkContext:
    return SinkContext(
        uid="out",
        subtask_index=index,
        parallelism=2,
        clock=SystemClock(),
        restored_state=restored,
        attempt=attempt,
    )


async def committed(sink: CommittedSink[int], records: list[int], checkpoint_id: int) -> None:
    """One writer writes ``records`` and commits them with checkpoint ``checkpoint_id``."""
    writer = sink.create_writer(context())
    await writer.open()
    await writer.write(records)
    await writer.snapshot_state(checkpoint_id)
    await writer.notify_checkpoint_complete(checkpoint_id)


async def test_a_subscriber_sees_records_only_once_their_checkpoint_completed():
    sink: CommittedSink[int] = CommittedSink()
    records = sink.subscribe()
    writer = sink.create_writer(context())
    await writer.open()

    await writer.write([1, 2])
    await writer.snapshot_state(1)
    assert records.buffered == 0

    await writer.notify_checkpoint_complete(1)
    assert await take(records, 2) == [1, 2]


async def test_a_subscription_starts_when_it_is_made_unless_from_the_beginning():
    sink: CommittedSink[int] = CommittedSink()
    await committed(sink, [1, 2], 1)
    later, everything = sink.subscribe(), sink.subscribe(from_beginning=True)

    await committed(sink, [3], 2)

    assert await take(later, 1) == [3]
    assert await take(everything, 3) == [1, 2, 3]


async def test_from_the_beginning_reaches_back_as_far_as_the_history_keeps():
    sink: CommittedSink[int] = CommittedSink(history=2)
    await committed(sink, [1, 2, 3], 1)

    assert await take(sink.subscribe(from_beginning=True), 2) == [2, 3]


async def test_a_transaction_recovered_after_its_commit_is_not_published_twice():
    sink: CommittedSink[int] = CommittedSink()
    records = sink.subscribe()
    writer = sink.create_writer(context())
    await writer.open()
    await writer.write([7])
    state = await writer.snapshot_state(1)
    await writer.notify_checkpoint_complete(1)

    await sink.create_writer(context(attempt=1, restored=tuple(state))).open()

    assert (records.buffered, sink.statistics().committed) == (1, 1)


async def test_a_dropping_subscriber_that_falls_behind_yields_what_it_had_then_raises():
    sink: CommittedSink[int] = CommittedSink()
    slow = sink.subscribe(on_overflow="drop", buffer=3)
    await committed(sink, [1, 2, 3], 1)

    await committed(sink, [4], 2)  # no room: the subscriber is dropped, the commit goes on

    assert await take(slow, 3) == [1, 2, 3]
    with pytest.raises(Exception, match="fell behind: 3 committed records waited") as raised:
        await anext(slow)
    assert type(raised.value).__name__ == "SubscriberTooSlow"
    assert sink.statistics().subscribers == 0


async def test_a_commit_waits_while_a_backpressuring_subscriber_has_no_room():
    sink: CommittedSink[int] = CommittedSink()
    slow = sink.subscribe(buffer=3)
    await committed(sink, [1, 2, 3], 1)
    done = anyio.Event()

    async def commit_more() -> None:
        await committed(sink, [4], 2)
        done.set()

    async with anyio.create_task_group() as group:
        group.start_soon(commit_more)
        await anyio.wait_all_tasks_blocked()
        assert not done.is_set()
        assert await take(slow, 1) == [1]
        await done.wait()

    assert await take(slow, 3) == [2, 3, 4]


async def test_a_subscription_left_behind_holds_no_commit_back():
    sink: CommittedSink[int] = CommittedSink()
    await committed(sink, [1], 1)
    async for _ in sink.subscribe(from_beginning=True, buffer=1):
        break  # nothing references the subscription any more: it leaves

    with anyio.fail_after(5):
        await committed(sink, [2, 3], 2)

    assert sink.statistics().subscribers == 0


async def test_a_closed_subscription_ends_its_iteration():
    sink: CommittedSink[int] = CommittedSink()
    async with aclosing(sink.subscribe()) as records:
        await committed(sink, [1], 1)
        await records.aclose()

        assert [record async for record in records] == []


async def test_subscribers_see_every_committed_record_once_in_one_order_across_a_failure():
    sink: CommittedSink[int] = CommittedSink(history=None)
    first, second = sink.subscribe(), sink.subscribe(buffer=1500)  # second is read after
    fail = FailOnce()
    elements = [*range(500), AwaitCheckpoint(), *range(500, 1000), fail, *range(1000, 1500)]
    env = StreamEnvironment(parallelism=2, batch_size=50)
    env.enable_checkpointing(0.02)
    env.from_source(CollectionSource(elements), uid="numbers", parallelism=1).sink_to(
        sink, uid="out"
    )

    async with anyio.create_task_group() as group:
        group.start_soon(env.execute, "committed")
        seen = await take(first, 1500)
    history = await take(sink.subscribe(from_beginning=True), 1500)

    assert fail.fired
    assert sorted(seen) == list(range(1500))  # each record once, none lost
    assert await take(second, 1500) == seen == history  # one commit order for all
