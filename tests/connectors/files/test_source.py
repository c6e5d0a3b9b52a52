from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lockgate.connectors import FileSource
from lockgate.connectors.errors import InputNotFound, InvalidSplit, UndecodableInput
from lockgate.engine.io.sources import SourceContext, SourceReader, SourceSplit, assign_splits
from lockgate.engine.time.clock import SystemClock


def context(subtask_index: int = 0, parallelism: int = 1) -> SourceContext:
    return SourceContext("src", subtask_index, parallelism, SystemClock())


def write(path: Path, data: str | bytes) -> Path:
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


async def drain(reader: SourceReader[Any], max_records: int = 512) -> list[Any]:
    records: list[Any] = []
    try:
        while batch := await reader.read(max_records):
            records.extend(batch)
    finally:
        await reader.close()
    return records


async def read_all(source: FileSource) -> list[str]:
    return await drain(source.create_reader(source.create_splits(1), context()))


async def read_from(path: Path, offset: int) -> list[str]:
    return await drain(FileSource(path).create_reader([SourceSplit(str(path), offset)], context()))


async def test_lines_come_without_their_newline(tmp_path):
    assert await read_all(FileSource(write(tmp_path / "a.txt", "one\ntwo\n"))) == ["one", "two"]


async def test_a_last_line_without_a_newline_is_still_read(tmp_path):
    assert await read_all(FileSource(write(tmp_path / "a.txt", "one\ntwo"))) == ["one", "two"]


async def test_an_empty_file_has_no_lines(tmp_path):
    assert await read_all(FileSource(write(tmp_path / "a.txt", ""))) == []


async def test_empty_lines_are_records(tmp_path):
    assert await read_all(FileSource(write(tmp_path / "a.txt", "a\n\nb\n"))) == ["a", "", "b"]


async def test_crlf_line_endings_are_stripped(tmp_path):
    assert await read_all(FileSource(write(tmp_path / "a.txt", "a\r\nb\r\n"))) == ["a", "b"]


async def test_text_is_decoded_with_the_given_encoding(tmp_path):
    path = write(tmp_path / "a.txt", "café\n".encode("latin-1"))
    assert await read_all(FileSource(path, encoding="latin-1")) == ["café"]


async def test_a_read_returns_up_to_max_records_lines_at_once(tmp_path):
    path = write(tmp_path / "a.txt", "x\n" * 1000)
    reader = FileSource(path).create_reader(FileSource(path).create_splits(1), context())
    assert len(await reader.read(600)) == 600
    await reader.close()


async def test_a_line_longer_than_the_read_buffer_is_read_whole(tmp_path):
    long_line = "x" * (3 << 20)
    path = write(tmp_path / "a.txt", f"{long_line}\nend\n")
    assert await read_all(FileSource(path)) == [long_line, "end"]


async def test_multiple_files_are_read_in_the_order_given(tmp_path):
    paths = [write(tmp_path / "b.txt", "b1\nb2\n"), write(tmp_path / "a.txt", "a1\n")]
    assert await read_all(FileSource(paths)) == ["b1", "b2", "a1"]


def test_each_file_is_one_split_named_by_its_path_at_offset_zero(tmp_path):
    paths = [str(write(tmp_path / name, "x\n")) for name in ("a.txt", "b.txt")]
    assert FileSource(paths).create_splits(4) == [SourceSplit(p, 0) for p in paths]


async def test_files_spread_over_subtasks_are_each_read_once(tmp_path):
    source = FileSource([write(tmp_path / f"{i}.txt", f"{i}\n") for i in range(5)])
    splits = source.create_splits(2)
    read = [line for i in (0, 1) for line in await drain(subtask_reader(source, splits, i))]
    assert sorted(read) == ["0", "1", "2", "3", "4"]


def subtask_reader(source: FileSource, splits: list[SourceSplit], index: int) -> SourceReader[str]:
    return source.create_reader(assign_splits(splits, index, 2), context(index, 2))


async def test_a_snapshot_holds_the_byte_offset_of_the_next_line(tmp_path):
    path = write(tmp_path / "a.txt", "ab\r\ncd\n")
    reader = FileSource(path).create_reader(FileSource(path).create_splits(1), context())
    await reader.read(1)
    assert reader.snapshot_splits() == [SourceSplit(str(path), 4)]
    await reader.close()


async def test_a_reader_resumes_mid_file_from_a_byte_offset(tmp_path):
    assert await read_from(write(tmp_path / "a.txt", "ab\ncd\nef"), 3) == ["cd", "ef"]


async def test_a_reader_resumes_at_the_end_of_a_file_without_trailing_newline(tmp_path):
    assert await read_from(write(tmp_path / "a.txt", "ab\ncd"), 5) == []


async def test_a_reader_built_from_a_snapshot_resumes_after_the_last_line(tmp_path):
    paths = [write(tmp_path / "a.txt", "1\n2\n3\n"), write(tmp_path / "b.txt", "4\n")]
    source = FileSource(paths)
    first = source.create_reader(source.create_splits(1), context())
    await first.read(2)
    await first.close()
    assert await drain(source.create_reader(first.snapshot_splits(), context())) == ["3", "4"]


lines = st.lists(
    st.text(st.characters(exclude_characters="\r\n", exclude_categories=("Cs",)), max_size=5),
    max_size=12,
)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=lines, newline=st.sampled_from(["\n", "\r\n"]), final=st.booleans(), data=st.data())
async def test_resuming_from_snapshots_at_any_points_reads_each_line_once(
    tmp_path, lines, newline, final, data
):
    text = "".join(line + newline for line in lines)
    if not final and lines and lines[-1]:
        text = text.removesuffix(newline)
    source = FileSource(write(tmp_path / "a.txt", text))
    reader = source.create_reader(source.create_splits(1), context())
    read: list[str] = []
    try:  # hypothesis may stop an example inside draw()
        while batch := await reader.read(data.draw(st.integers(1, 4))):
            read += batch
            if data.draw(st.booleans()):
                await reader.close()
                reader = source.create_reader(reader.snapshot_splits(), context())
    finally:
        await reader.close()
    assert read == lines


def test_a_missing_file_raises_input_not_found_when_splitting(tmp_path):
    with pytest.raises(InputNotFound, match=r"missing\.txt"):
        FileSource(tmp_path / "missing.txt").create_splits(1)


async def test_a_file_gone_at_restore_raises_input_not_found_on_read(tmp_path):
    with pytest.raises(InputNotFound, match="file source 'src'"):
        await read_from(tmp_path / "gone.txt", 0)


@pytest.mark.parametrize("offset", [1, 2, 99])
async def test_an_offset_that_is_not_a_line_start_raises_invalid_split(tmp_path, offset):
    with pytest.raises(InvalidSplit, match="changed since the checkpoint"):
        await read_from(write(tmp_path / "a.txt", "abc\n"), offset)


@pytest.mark.parametrize("position", [None, "3", -1, 1.5, True])
def test_a_position_that_is_not_a_byte_offset_raises_invalid_split(tmp_path, position):
    source = FileSource(write(tmp_path / "a.txt", "a\n"))
    with pytest.raises(InvalidSplit, match="byte offset"):
        source.create_reader([SourceSplit(str(tmp_path / "a.txt"), position)], context())


async def test_undecodable_bytes_raise_undecodable_input_at_their_offset(tmp_path):
    path = write(tmp_path / "a.txt", b"ok\nbad \xff\n")
    with pytest.raises(UndecodableInput, match="at byte 7 as 'utf-8'"):
        await read_all(FileSource(path))


def test_an_encoding_without_a_one_byte_newline_is_rejected(tmp_path):
    with pytest.raises(ValueError, match="utf-16"):
        FileSource(tmp_path / "a.txt", encoding="utf-16")


@pytest.mark.parametrize("paths", [[], ["a.txt", "a.txt"]])
def test_no_paths_or_a_repeated_path_is_rejected(paths):
    with pytest.raises(ValueError, match="FileSource"):
        FileSource(paths)
