"""FileSink writes lines into part files that become visible only when a checkpoint completes."""

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson
import pytest

from lockgate.connectors import FileSink
from lockgate.connectors.errors import UnencodableRecord
from lockgate.connectors.files import RollingPolicy
from lockgate.engine import SinkContext, SinkWriter, SystemClock


def context(subtask_index: int = 0, parallelism: int = 1, uid: str = "out") -> SinkContext:
    return SinkContext(uid, subtask_index, parallelism, SystemClock())


async def write_and_commit(sink: FileSink, batches: Sequence[list[Any]], **where: Any) -> None:
    """Open a writer, write ``batches``, and complete checkpoint 1 at the end of input."""
    writer = sink.create_writer(context(**where))
    await writer.open()
    try:
        for batch in batches:
            await writer.write(batch)
        await writer.finish()
        await writer.snapshot_state(1)
        await writer.notify_checkpoint_complete(1)
    finally:
        await writer.close()


def names(directory: Path) -> list[str]:
    return sorted(path.name for path in directory.iterdir())


def part_file_names(directory: Path) -> list[str]:
    """The names in ``directory`` but an open writer's lock and commit record."""
    return [name for name in names(directory) if not name.endswith((".lock", ".committed"))]


async def opened(sink: FileSink, **where: Any) -> SinkWriter[Any]:
    writer = sink.create_writer(context(**where))
    await writer.open()
    return writer


async def test_text_format_writes_each_record_as_its_str_on_a_line(tmp_path: Path) -> None:
    sink = FileSink(tmp_path)
    await write_and_commit(sink, [["a", 1], [(2, 3)]])
    assert sink.read_lines() == ["a", "1", "(2, 3)"]


async def test_jsonl_format_round_trips_records(tmp_path: Path) -> None:
    records = [{"word": "café", "count": 2}, [1, None, True], "text", 1.5]
    sink = FileSink(tmp_path, format="jsonl")
    await write_and_commit(sink, [records[:2], records[2:]])
    assert [orjson.loads(line) for line in sink.read_lines()] == records


async def test_written_lines_are_invisible_until_their_checkpoint_completes(tmp_path: Path) -> None:
    sink = FileSink(tmp_path)
    writer = await opened(sink)
    await writer.write(["a"])
    await writer.snapshot_state(1)

    assert sink.read_lines() == []
    await writer.notify_checkpoint_complete(1)
    assert sink.read_lines() == ["a"]
    await writer.close()


async def test_a_written_part_is_in_progress_then_pending_then_visible(tmp_path: Path) -> None:
    writer = await opened(FileSink(tmp_path))
    await writer.write(["a"])
    in_progress = part_file_names(tmp_path)
    await writer.snapshot_state(1)
    pending = part_file_names(tmp_path)
    await writer.notify_checkpoint_complete(1)

    assert [name.rsplit(".", 1)[-1] for name in in_progress + pending] == ["inprogress", "pending"]
    assert part_file_names(tmp_path) == [pending[0].removeprefix(".").removesuffix(".pending")]
    await writer.close()


async def test_records_after_the_barrier_wait_for_the_next_checkpoint(tmp_path: Path) -> None:
    sink = FileSink(tmp_path)
    writer = await opened(sink)
    await writer.write(["a"])
    await writer.snapshot_state(1)
    await writer.write(["b"])
    await writer.notify_checkpoint_complete(1)

    assert sink.read_lines() == ["a"]
    await writer.close()


async def test_closing_without_a_checkpoint_deletes_the_in_progress_file(tmp_path: Path) -> None:
    writer = await opened(FileSink(tmp_path))
    await writer.write(["lost"])
    await writer.close()
    assert names(tmp_path) == []


async def test_committing_a_committed_transaction_again_changes_nothing(tmp_path: Path) -> None:
    sink = FileSink(tmp_path)
    writer = await opened(sink)
    await writer.write(["once"])
    state = await writer.snapshot_state(1)
    await writer.notify_checkpoint_complete(1)

    await sink.commit(state[0]["transaction"])

    assert sink.read_lines() == ["once"]
    await writer.close()


async def test_each_subtask_writes_part_files_named_for_its_index(tmp_path: Path) -> None:
    sink = FileSink(tmp_path, format="jsonl")
    for index in (0, 1):
        await write_and_commit(sink, [[index]], subtask_index=index, parallelism=2)
    assert [path.name.split("-")[:3] for path in sink.part_files()] == [
        ["part", "out", "0"],
        ["part", "out", "1"],
    ]
    assert all(path.suffix == ".jsonl" for path in sink.part_files())


async def test_read_lines_reads_part_files_in_subtask_order(tmp_path: Path) -> None:
    sink = FileSink(tmp_path)
    await write_and_commit(sink, [["second"]], subtask_index=1, parallelism=2)
    await write_and_commit(sink, [["first"]], subtask_index=0, parallelism=2)
    assert sink.read_lines() == ["first", "second"]


async def test_a_restarted_writer_adds_part_files_beside_the_committed_ones(tmp_path: Path) -> None:
    sink = FileSink(tmp_path)
    await write_and_commit(sink, [["before"]])
    await write_and_commit(sink, [["after"]])
    assert sorted(sink.read_lines()) == ["after", "before"]
    assert len(sink.part_files()) == 2


async def test_open_creates_the_directory_and_an_empty_transaction_no_file(tmp_path: Path) -> None:
    sink = FileSink(tmp_path / "deep" / "out")
    await write_and_commit(sink, [])
    assert names(tmp_path / "deep" / "out") == []


async def test_characters_of_the_uid_unsafe_in_a_file_name_become_underscores(
    tmp_path: Path,
) -> None:
    sink = FileSink(tmp_path)
    await write_and_commit(sink, [["x"]], uid="../sums 1")
    assert [path.name.startswith("part-.._sums_1-0-") for path in sink.part_files()] == [True]


async def test_a_record_json_cannot_encode_raises_unencodable_record(tmp_path: Path) -> None:
    writer = await opened(FileSink(tmp_path, format="jsonl"))
    with pytest.raises(UnencodableRecord, match="file sink 'out' \\(subtask 1/1\\)"):
        await writer.write([{1, 2}])
    await writer.close()


def test_an_unknown_format_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="'csv'"):
        FileSink(tmp_path, format="csv")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("options", "message"),
    [({"max_part_bytes": 0}, "max_part_bytes"), ({"max_part_age": 0.0}, "max_part_age")],
)
def test_a_rolling_policy_without_room_is_rejected(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        RollingPolicy(**options)
