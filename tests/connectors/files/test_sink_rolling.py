"""FileSink rolls part files by size, by age and at every checkpoint; a transaction may hold
several part files, all published together."""

from pathlib import Path
from typing import Any

from lockgate.connectors import FileSink
from lockgate.connectors.files import RollingPolicy
from lockgate.engine import Clock, ManualClock, SinkContext, SinkWriter


async def opened(sink: FileSink, clock: Clock | None = None) -> SinkWriter[Any]:
    writer = sink.create_writer(SinkContext("out", 0, 1, clock or ManualClock()))
    await writer.open()
    return writer


async def checkpoint(writer: SinkWriter[Any], checkpoint_id: int = 1) -> None:
    await writer.snapshot_state(checkpoint_id)
    await writer.notify_checkpoint_complete(checkpoint_id)


def sizes(sink: FileSink) -> list[int]:
    return [path.stat().st_size for path in sink.part_files()]


async def test_a_part_file_rolls_before_a_line_that_would_exceed_max_bytes(tmp_path: Path) -> None:
    sink = FileSink(tmp_path, rolling=RollingPolicy(max_part_bytes=12))
    writer = await opened(sink)
    await writer.write(["aaaa"] * 5)
    await checkpoint(writer)

    assert sizes(sink) == [10, 10, 5]
    assert sink.read_lines() == ["aaaa"] * 5
    await writer.close()


async def test_a_line_longer_than_max_bytes_gets_a_part_file_of_its_own(tmp_path: Path) -> None:
    sink = FileSink(tmp_path, rolling=RollingPolicy(max_part_bytes=4))
    writer = await opened(sink)
    await writer.write(["a", "long line", "b"])
    await checkpoint(writer)

    assert sizes(sink) == [2, 10, 2]
    await writer.close()


async def test_rolled_part_files_read_back_in_the_order_written(tmp_path: Path) -> None:
    sink = FileSink(tmp_path, rolling=RollingPolicy(max_part_bytes=1))
    writer = await opened(sink)
    await writer.write([str(n) for n in range(12)])
    await checkpoint(writer)

    assert sink.read_lines() == [str(n) for n in range(12)]
    await writer.close()


async def test_a_part_file_rolls_once_it_is_max_age_old_on_the_jobs_clock(tmp_path: Path) -> None:
    clock = ManualClock()
    sink = FileSink(tmp_path, rolling=RollingPolicy(max_part_age=10.0))
    writer = await opened(sink, clock)
    await writer.write(["a"])
    clock.advance(9.0)
    await writer.write(["b"])
    clock.advance(1.0)
    await writer.write(["c"])
    await checkpoint(writer)

    assert sizes(sink) == [4, 2]
    await writer.close()


async def test_every_checkpoint_rolls_the_part_file(tmp_path: Path) -> None:
    sink = FileSink(tmp_path)
    writer = await opened(sink)
    await writer.write(["a"])
    await checkpoint(writer, 1)
    await writer.write(["b"])
    await checkpoint(writer, 2)

    assert sizes(sink) == [2, 2]
    await writer.close()


async def test_the_part_files_of_one_transaction_become_visible_together(tmp_path: Path) -> None:
    sink = FileSink(tmp_path, rolling=RollingPolicy(max_part_bytes=2))
    writer = await opened(sink)
    await writer.write(["a", "b", "c"])
    await writer.snapshot_state(1)

    assert sink.part_files() == []
    await writer.notify_checkpoint_complete(1)
    assert sink.read_lines() == ["a", "b", "c"]
    await writer.close()
