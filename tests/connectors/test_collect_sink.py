from lockgate.connectors import CollectSink
from lockgate.engine.clock import SystemClock
from lockgate.engine.sinks import SinkContext


def context(subtask_index: int = 0, parallelism: int = 1) -> SinkContext:
    return SinkContext("out", subtask_index, parallelism, SystemClock())


async def test_results_hold_records_in_the_order_written():
    sink: CollectSink[int] = CollectSink()
    writer = sink.create_writer(context())
    await writer.write([1, 2])
    await writer.write([3])
    assert sink.results == [1, 2, 3]


async def test_results_gather_the_records_of_every_subtask():
    sink: CollectSink[str] = CollectSink()
    first, second = sink.create_writer(context(0, 2)), sink.create_writer(context(1, 2))
    await first.write(["a"])
    await second.write(["b"])
    assert sorted(sink.results) == ["a", "b"]


async def test_clear_forgets_the_records_written_so_far():
    sink: CollectSink[int] = CollectSink()
    writer = sink.create_writer(context())
    await writer.write([1])
    sink.clear()
    await writer.write([2])
    assert sink.results == [2]
