from collections.abc import Sequence
from typing import Any

import orjson
import pytest

from lockgate.connectors import FileSink
from lockgate.connectors.errors import UnencodableRecord
from lockgate.engine.clock import SystemClock
from lockgate.engine.sinks import SinkContext


def context(subtask_index: int = 0, parallelism: int = 1, uid: str = "out") -> SinkContext:
    return SinkContext(uid, subtask_index, parallelism, SystemClock())


async def write_all(sink: FileSink, batches: Sequence[list[Any]], **where: Any) -> None:
    writer = sink.create_writer(context(**where))
    await writer.open()
    try:
        for batch in batches:
            await writer.write(batch)
        await writer.finish()
    finally:
        await writer.close()


async def test_text_format_writes_each_record_as_its_str_on_a_line(tmp_path):
    sink = FileSink(tmp_path)
    await write_all(sink, [["a", 1], [(2, 3)]])
    assert sink.read_lines() == ["a", "1", "(2, 3)"]


async def test_jsonl_format_round_trips_records(tmp_path):
    records = [{"word": "café", "count": 2}, [1, None, True], "text", 1.5]
    sink = FileSink(tmp_path, format="jsonl")
    await write_all(sink, [records[:2], records[2:]])
    assert [orjson.loads(line) for line in sink.read_lines()] == records


async def test_each_subtask_appends_to_its_own_part_file(tmp_path):
    sink = FileSink(tmp_path, format="jsonl")
    for index in (0, 1):
        await write_all(sink, [[index]], subtask_index=index, parallelism=2)
    assert [path.name for path in sink.part_files()] == ["part-out-0.jsonl", "part-out-1.jsonl"]


async def test_read_lines_reads_part_files_in_name_order(tmp_path):
    sink = FileSink(tmp_path)
    await write_all(sink, [["second"]], subtask_index=1, parallelism=2)
    await write_all(sink, [["first"]], subtask_index=0, parallelism=2)
    assert sink.read_lines() == ["first", "second"]


async def test_open_creates_the_directory_with_its_parents_and_an_empty_part_file(tmp_path):
    sink = FileSink(tmp_path / "deep" / "out")
    await write_all(sink, [])
    assert [path.read_bytes() for path in sink.part_files()] == [b""]


async def test_a_restarted_writer_appends_to_its_existing_part_file(tmp_path):
    sink = FileSink(tmp_path)
    await write_all(sink, [["before"]])
    await write_all(sink, [["after"]])
    assert sink.read_lines() == ["before", "after"]


async def test_finished_records_are_on_disk_before_close(tmp_path):
    sink = FileSink(tmp_path)
    writer = sink.create_writer(context())
    await writer.write(["x"])
    await writer.finish()
    assert (tmp_path / "part-out-0.txt").read_text() == "x\n"
    await writer.close()


async def test_characters_of_the_uid_unsafe_in_a_file_name_become_underscores(tmp_path):
    sink = FileSink(tmp_path)
    await write_all(sink, [["x"]], uid="../sums 1")
    assert [path.name for path in sink.part_files()] == ["part-.._sums_1-0.txt"]


async def test_a_record_json_cannot_encode_raises_unencodable_record(tmp_path):
    writer = FileSink(tmp_path, format="jsonl").create_writer(context())
    with pytest.raises(UnencodableRecord, match="file sink 'out' \\(subtask 1/1\\)"):
        await writer.write([{1, 2}])
    await writer.close()


def test_an_unknown_format_is_rejected(tmp_path):
    with pytest.raises(ValueError, match="'csv'"):
        FileSink(tmp_path, format="csv")  # type: ignore[arg-type]
