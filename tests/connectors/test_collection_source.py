import tracemalloc
from collections.abc import Sequence
from typing import Any, overload

import anyio
import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lockgate.connectors import CollectionSource
from lockgate.connectors.errors import InvalidSplit
from lockgate.engine import JobStatus, SinkContext, StreamEnvironment
from lockgate.engine.io.sources import SourceContext, SourceReader, SourceSplit, assign_splits
from lockgate.engine.time.clock import SystemClock
from tests.engine.jobs.basic import CallbackSink


def context(subtask_index: int = 0, parallelism: int = 1) -> SourceContext:
    return SourceContext("src", subtask_index, parallelism, SystemClock())


async def drain(reader: SourceReader[Any], max_records: int = 512) -> list[Any]:
    records: list[Any] = []
    while batch := await reader.read(max_records):
        records.extend(batch)
    return records


def reader_of(source: CollectionSource[Any], parallelism: int = 1) -> SourceReader[Any]:
    return source.create_reader(source.create_splits(parallelism), context())


class SliceCounter(Sequence[int]):
    """A sequence that counts how it is indexed."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.slices = 0
        self.items = 0

    @overload
    def __getitem__(self, index: int) -> int: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[int]: ...
    def __getitem__(self, index: int | slice) -> int | Sequence[int]:
        if isinstance(index, slice):
            self.slices += 1
            return range(self.size)[index]
        self.items += 1
        return index

    def __len__(self) -> int:
        return self.size


async def test_a_list_is_read_in_order():
    assert await drain(reader_of(CollectionSource(["a", "b", "c"]))) == ["a", "b", "c"]


async def test_a_read_returns_at_most_max_records():
    assert await reader_of(CollectionSource(range(10))).read(3) == [0, 1, 2]


async def test_a_reader_returns_nothing_once_its_splits_ended():
    reader = reader_of(CollectionSource([1]))
    await reader.read(10)
    assert await reader.read(10) == []


async def test_a_read_takes_one_slice_of_the_sequence():
    elements = SliceCounter(2048)
    reader = reader_of(CollectionSource(elements))
    await reader.read(512)
    assert (elements.slices, elements.items) == (1, 0)


def test_splits_are_contiguous_index_ranges():
    splits = CollectionSource(range(10)).create_splits(3)
    assert splits == [
        SourceSplit("0", {"next": 0, "end": 3}),
        SourceSplit("1", {"next": 3, "end": 6}),
        SourceSplit("2", {"next": 6, "end": 10}),
    ]


def test_fewer_elements_than_parallelism_give_one_split_per_element():
    assert len(CollectionSource([1, 2]).create_splits(4)) == 2


async def test_an_empty_collection_still_has_one_split_that_reads_nothing():
    source: CollectionSource[int] = CollectionSource([])
    assert len(source.create_splits(4)) == 1
    assert await drain(reader_of(source)) == []


def test_create_splits_rejects_a_parallelism_below_one():
    with pytest.raises(ValueError, match="parallelism"):
        CollectionSource([1]).create_splits(0)


@pytest.mark.parametrize("parallelism", [1, 2, 3, 4])
@pytest.mark.parametrize("size", [0, 1, 3, 10, 17])
async def test_subtasks_together_read_every_element_exactly_once(parallelism, size):
    source = CollectionSource(range(size))
    splits = source.create_splits(parallelism)
    read: list[int] = []
    for index in range(parallelism):
        assigned = assign_splits(splits, index, parallelism)
        read += await drain(source.create_reader(assigned, context(index, parallelism)))
    assert sorted(read) == list(range(size))


async def test_a_reader_moves_to_its_next_split_once_one_ends():
    source = CollectionSource(range(4))
    reader = source.create_reader(source.create_splits(2), context())
    assert [await reader.read(10), await reader.read(10)] == [[0, 1], [2, 3]]


async def test_a_snapshot_holds_the_index_after_the_last_record():
    reader = reader_of(CollectionSource(range(10)))
    await reader.read(4)
    assert reader.snapshot_splits() == [SourceSplit("0", {"next": 4, "end": 10})]


async def test_a_snapshot_lists_ended_splits_too():
    source = CollectionSource(range(4))
    reader = source.create_reader(source.create_splits(2), context())
    await reader.read(10)
    assert [split.position for split in reader.snapshot_splits()] == [
        {"next": 2, "end": 2},
        {"next": 2, "end": 4},
    ]


async def test_a_reader_built_from_a_snapshot_resumes_after_the_last_record():
    source = CollectionSource(range(10))
    first = reader_of(source)
    await first.read(4)
    resumed = source.create_reader(first.snapshot_splits(), context())
    assert await drain(resumed) == [4, 5, 6, 7, 8, 9]


async def test_snapshotted_positions_survive_a_json_round_trip():
    source = CollectionSource("abcdef")
    first = reader_of(source)
    await first.read(2)
    stored = orjson.loads(orjson.dumps([[s.split_id, s.position] for s in first.snapshot_splits()]))
    resumed = source.create_reader([SourceSplit(i, p) for i, p in stored], context())
    assert await drain(resumed) == ["c", "d", "e", "f"]


@given(size=st.integers(0, 40), parallelism=st.integers(1, 4), data=st.data())
async def test_resuming_from_snapshots_at_any_points_reads_each_element_once(
    size, parallelism, data
):
    source = CollectionSource(range(size))
    splits = source.create_splits(parallelism)
    read: list[int] = []
    for index in range(parallelism):
        reader = source.create_reader(assign_splits(splits, index, parallelism), context())
        while batch := await reader.read(data.draw(st.integers(1, 7))):
            read += batch
            if data.draw(st.booleans()):
                reader = source.create_reader(reader.snapshot_splits(), context())
    assert read == list(range(size))


async def test_a_generator_is_materialised_once_and_replays():
    source = CollectionSource(x * x for x in range(4))
    assert [await drain(reader_of(source)), await drain(reader_of(source))] == [[0, 1, 4, 9]] * 2


async def test_streaming_a_million_elements_of_a_range_keeps_memory_flat():
    reader = reader_of(CollectionSource(range(1_000_000)))
    count = 0
    tracemalloc.start()
    try:
        while batch := await reader.read(512):
            count += len(batch)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == 1_000_000
    assert peak < 1 << 20


@pytest.mark.parametrize(
    "position",
    [None, 3, {"next": 0}, {"next": "0", "end": 2}, {"next": 3, "end": 2}, {"next": 0, "end": 9}],
)
def test_a_position_it_cannot_resume_from_raises_invalid_split(position):
    source = CollectionSource([1, 2, 3])
    with pytest.raises(InvalidSplit, match="collection source 'src'"):
        source.create_reader([SourceSplit("0", position)], context())


async def test_read_rejects_max_records_below_one():
    with pytest.raises(ValueError, match="max_records"):
        await reader_of(CollectionSource([1])).read(0)


async def test_reading_a_collection_lets_no_other_task_run_meanwhile() -> None:
    # The subtask's fetch task yields once it holds its batches ahead, not at every read.
    reader = reader_of(CollectionSource(range(10)))
    others: list[str] = []

    async def other() -> None:
        others.append("ran")

    async with anyio.create_task_group() as group:
        group.start_soon(other)
        batches = [await reader.read(2) for _ in range(5)]
        ran_meanwhile = list(others)

    assert (batches, ran_meanwhile) == ([[0, 1], [2, 3], [4, 5], [6, 7], [8, 9]], [])


async def test_a_job_reading_a_billion_elements_in_one_subtask_is_cancelled_part_way() -> None:
    seen = anyio.Event()
    received = 0

    def count(context: SinkContext, records: list[Any]) -> None:
        nonlocal received
        received += len(records)
        if received >= 10_000:
            seen.set()

    env = StreamEnvironment(parallelism=1)
    env.from_source(CollectionSource(range(10**9))).sink_to(CallbackSink(count))

    with anyio.fail_after(10):
        async with env.start("billion") as job:
            await seen.wait()
            job.cancel()
            result = await job.wait()

    assert result.status is JobStatus.CANCELED
