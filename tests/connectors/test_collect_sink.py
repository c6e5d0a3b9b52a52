from __future__ import annotations

from lockgate.connectors import CollectSink
from lockgate.engine import SinkContext, SystemClock


def context(index: int = 0, *, attempt: int = 0, restored: tuple[object, ...] = ()) -> SinkContext:
    return SinkContext(
        uid="out",
        subtask_index=index,
        parallelism=2,
        clock=SystemClock(),
        restored_state=restored,
        attempt=attempt,
    )


async def test_written_records_stay_invisible_until_their_checkpoint_completes() -> None:
    sink: CollectSink[int] = CollectSink()
    writer = sink.create_writer(context())
    await writer.open()

    await writer.write([1, 2])
    await writer.snapshot_state(1)

    assert sink.results == []
    await writer.notify_checkpoint_complete(1)
    assert sink.results == [1, 2]


async def test_records_after_the_barrier_wait_for_the_next_checkpoint() -> None:
    sink: CollectSink[str] = CollectSink()
    writer = sink.create_writer(context())
    await writer.open()

    await writer.write(["a"])
    await writer.snapshot_state(1)
    await writer.write(["b"])
    await writer.notify_checkpoint_complete(1)

    assert sink.results == ["a"]


async def test_a_transaction_recovered_after_its_commit_is_not_added_twice() -> None:
    sink: CollectSink[int] = CollectSink()
    writer = sink.create_writer(context())
    await writer.open()
    await writer.write([7])
    state = await writer.snapshot_state(1)
    await writer.notify_checkpoint_complete(1)

    recovered = sink.create_writer(context(attempt=1, restored=tuple(state)))
    await recovered.open()

    assert sink.results == [7]


async def test_a_pre_committed_transaction_is_committed_on_recovery() -> None:
    sink: CollectSink[int] = CollectSink()
    writer = sink.create_writer(context())
    await writer.open()
    await writer.write([5, 6])
    state = await writer.snapshot_state(1)
    await writer.close()  # the attempt dies before notify-complete arrives

    recovered = sink.create_writer(context(attempt=1, restored=tuple(state)))
    await recovered.open()

    assert sink.results == [5, 6]


async def test_records_of_an_unfinished_transaction_are_dropped_on_close() -> None:
    sink: CollectSink[int] = CollectSink()
    writer = sink.create_writer(context())
    await writer.open()

    await writer.write([1])
    await writer.close()

    assert sink.results == []


async def test_clear_forgets_committed_records() -> None:
    sink: CollectSink[int] = CollectSink()
    writer = sink.create_writer(context())
    await writer.open()
    await writer.write([1])
    await writer.snapshot_state(1)
    await writer.notify_checkpoint_complete(1)

    sink.clear()

    assert sink.results == []
