"""Source.progress() of the bounded sources that know their size: records, and file bytes."""

from __future__ import annotations

from pathlib import Path

from lockgate.connectors import CollectionSource, FileSource
from lockgate.engine import SourceProgress
from lockgate.engine.io.sources import SourceContext, SourceSplit, assign_splits
from lockgate.engine.time.clock import SystemClock


def context(subtask_index: int = 0, parallelism: int = 1) -> SourceContext:
    return SourceContext("src", subtask_index, parallelism, SystemClock())


def test_a_collection_source_before_any_reader_has_read_none_of_its_elements() -> None:
    assert CollectionSource(range(10)).progress() == SourceProgress(0, 10, "records")


async def test_a_collection_source_counts_what_every_subtask_s_reader_returned() -> None:
    source = CollectionSource(range(100))
    splits = source.create_splits(2)
    first = source.create_reader(assign_splits(splits, 0, 2), context(0, 2))
    second = source.create_reader(assign_splits(splits, 1, 2), context(1, 2))

    await first.read(30)
    await second.read(5)

    assert source.progress() == SourceProgress(35, 100, "records")


async def test_a_new_reader_of_a_subtask_replaces_the_old_one_from_its_restored_position() -> None:
    source = CollectionSource(range(10))
    old = source.create_reader(source.create_splits(1), context())
    await old.read(8)
    restored = old.snapshot_splits()
    await old.read(2)  # read past the restored position, then the attempt failed

    source.create_reader(restored, context())

    assert source.progress() == SourceProgress(8, 10, "records")


async def test_a_file_source_counts_the_bytes_its_readers_read_of_all_its_files(
    tmp_path: Path,
) -> None:
    one, two = tmp_path / "one.txt", tmp_path / "two.txt"
    one.write_text("a\nbb\n")
    two.write_text("ccc\n")
    source = FileSource([one, two])
    reader = source.create_reader(source.create_splits(1), context())

    await reader.read(1)

    assert source.progress() == SourceProgress(2, 9, "bytes")
    await reader.close()


def test_a_file_source_with_a_missing_file_knows_no_progress(tmp_path: Path) -> None:
    source = FileSource(tmp_path / "missing.txt")
    source.create_reader([SourceSplit(str(tmp_path / "missing.txt"), 0)], context())

    assert source.progress() is None
