import subprocess
import sys
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lockgate.connectors import CollectionSource
from lockgate.engine.io.sources import SourceContext, SourceReader, SourceSplit
from lockgate.engine.testing import FailOnce, InjectedFailure
from lockgate.engine.time.clock import SystemClock


def context() -> SourceContext:
    return SourceContext("src", 0, 1, SystemClock())


def reader_of(source: CollectionSource[Any], splits: list[SourceSplit] | None = None) -> Any:
    return source.create_reader(splits or source.create_splits(1), context())


async def drain(reader: SourceReader[Any], max_records: int = 512) -> list[Any]:
    records: list[Any] = []
    while batch := await reader.read(max_records):
        records.extend(batch)
    return records


async def test_the_records_before_an_unfired_sentinel_are_returned_first():
    reader = reader_of(CollectionSource([1, 2, FailOnce(), 3]))

    assert await reader.read(10) == [1, 2]


async def test_reaching_an_unfired_sentinel_raises_injected_failure():
    fail = FailOnce()
    reader = reader_of(CollectionSource([1, 2, fail, 3]))
    await reader.read(10)

    with pytest.raises(InjectedFailure):
        await reader.read(10)
    assert fail.fired


async def test_a_reader_restored_from_the_snapshot_before_the_failure_reads_the_rest_once():
    fail = FailOnce()
    source = CollectionSource([1, 2, fail, 3, 4])
    failed = reader_of(source)
    before = await failed.read(10)
    snapshot = failed.snapshot_splits()
    with pytest.raises(InjectedFailure):
        await failed.read(10)

    after = await drain(reader_of(source, snapshot))

    assert fail.fired
    assert before + after == [1, 2, 3, 4]


async def test_a_sentinel_takes_a_position_like_any_element():
    reader = reader_of(CollectionSource([1, 2, FailOnce(), 3]))
    await reader.read(10)

    assert reader.snapshot_splits() == [SourceSplit("0", {"next": 2, "end": 4})]


async def test_a_fired_sentinel_is_skipped():
    fail = FailOnce()
    with pytest.raises(InjectedFailure):
        fail.maybe_fire()

    assert await drain(reader_of(CollectionSource([1, fail, 2]))) == [1, 2]


async def test_a_batch_of_only_fired_sentinels_does_not_end_the_input():
    fired = [FailOnce(), FailOnce()]
    for fail in fired:
        with pytest.raises(InjectedFailure):
            fail.maybe_fire()
    reader = reader_of(CollectionSource([*fired, 1]))

    assert await reader.read(2) == [1]


async def test_two_sentinels_fire_one_per_attempt():
    first, second = FailOnce("first"), FailOnce("second")
    source = CollectionSource(["a", first, "b", second, "c"])
    read: list[str] = []
    splits = source.create_splits(1)
    for _ in range(2):
        reader = reader_of(source, splits)
        with pytest.raises(InjectedFailure):
            while batch := await reader.read(10):
                read += batch
                splits = reader.snapshot_splits()

    assert read + await drain(reader_of(source, splits)) == ["a", "b", "c"]


async def test_sentinels_in_an_iterable_are_found_once_it_is_materialised():
    fail = FailOnce()

    reader = reader_of(CollectionSource(iter([1, fail, 2])))

    with pytest.raises(InjectedFailure):
        await drain(reader)


async def test_a_collection_without_sentinels_reads_by_slicing_as_before():
    assert await reader_of(CollectionSource([1, 2, 3])).read(10) == [1, 2, 3]


def test_the_source_repr_says_it_holds_failure_sentinels():
    assert repr(CollectionSource([1, FailOnce()])) == (
        "<CollectionSource elements=2 with failure sentinels>"
    )


@given(
    size=st.integers(0, 30),
    failure_at=st.integers(0, 30),
    data=st.data(),
)
async def test_replaying_from_the_last_snapshot_after_the_failure_reads_each_record_once(
    size, failure_at, data
):
    elements: list[Any] = list(range(size))
    fail = FailOnce()
    elements.insert(min(failure_at, size), fail)
    source = CollectionSource(elements)
    read: list[int] = []
    splits = source.create_splits(data.draw(st.integers(1, 3)))
    reader = source.create_reader(splits, context())
    with pytest.raises(InjectedFailure):
        while batch := await reader.read(data.draw(st.integers(1, 5))):
            read += batch
            splits = reader.snapshot_splits()

    read += await drain(source.create_reader(splits, context()))

    assert fail.fired
    assert read == list(range(size))


UNSCANNED_SCRIPT = """
from lockgate.connectors import CollectionSource

class Unscannable(list):
    def __iter__(self):
        raise AssertionError("the collection was scanned for sentinels")

print(repr(CollectionSource(Unscannable([1, 2, 3]))))
"""


def test_a_process_that_never_made_a_sentinel_builds_a_source_without_scanning_it():
    completed = subprocess.run(
        [sys.executable, "-c", UNSCANNED_SCRIPT], capture_output=True, text=True, check=False
    )

    assert (completed.returncode, completed.stdout) == (0, "<CollectionSource elements=3>\n")
