import pytest

from lockgate.connectors import PrintSink
from lockgate.engine.io.sinks import SinkContext
from lockgate.engine.time.clock import SystemClock


async def test_each_record_prints_on_its_own_line(capsys):
    writer = PrintSink().create_writer(SinkContext("out", 0, 1, SystemClock()))
    await writer.write([1, "two", (3, 4)])
    assert capsys.readouterr().out == "1\ntwo\n(3, 4)\n"


@pytest.mark.parametrize(
    ("prefix", "parallelism", "line"),
    [("", 1, "x"), ("", 2, "2> x"), ("sums", 1, "sums> x"), ("sums", 2, "sums:2> x")],
)
async def test_lines_start_with_the_prefix_and_the_subtask_number_as_in_flink(
    capsys, prefix, parallelism, line
):
    last_subtask = SinkContext("out", parallelism - 1, parallelism, SystemClock())
    writer = PrintSink(prefix).create_writer(last_subtask)
    await writer.write(["x"])
    assert capsys.readouterr().out == f"{line}\n"
