"""A CommitRecord remembers which parts of a writer were committed, however often it grows."""

import itertools
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from lockgate.connectors.files.commit_record import CommitRecord, merged_ranges

some_ranges = st.lists(
    st.tuples(st.integers(0, 60), st.integers(0, 6)).map(lambda r: (r[0], sum(r)))
)


def test_merged_ranges_join_overlapping_and_adjacent_ranges() -> None:
    merged = merged_ranges([(5, 6), (0, 2), (3, 3), (8, 9), (9, 12), (10, 11)])
    assert merged == [(0, 3), (5, 6), (8, 12)]


@given(some_ranges)
def test_merged_ranges_cover_exactly_the_parts_of_the_ranges_given(
    ranges: list[tuple[int, int]],
) -> None:
    merged = merged_ranges(ranges)
    covered = {part for first, last in merged for part in range(first, last + 1)}

    assert covered == {part for first, last in ranges for part in range(first, last + 1)}
    assert all(after[0] > before[1] + 1 for before, after in itertools.pairwise(merged))


def test_a_record_covers_the_parts_added_and_no_others(tmp_path: Path) -> None:
    record = CommitRecord(tmp_path / ".part-out-0-0123456789ab.committed")
    record.add([0, 1])
    record.add([4])

    assert [part for part in range(6) if record.covers(part)] == [0, 1, 4]


def test_no_record_covers_nothing(tmp_path: Path) -> None:
    assert not CommitRecord(tmp_path / "missing.committed").covers(0)


def test_a_torn_last_line_of_a_killed_process_is_skipped(tmp_path: Path) -> None:
    record = CommitRecord(tmp_path / ".part-out-0-0123456789ab.committed")
    record.add([0])
    with record.path.open("a") as file:
        file.write("1 ")

    assert (record.covers(0), record.covers(1)) == (True, False)


def test_compacting_keeps_every_part_in_one_line(tmp_path: Path) -> None:
    record = CommitRecord(tmp_path / ".part-out-0-0123456789ab.committed")
    for part in range(1_000):
        record.add([part], compact=True)

    assert record.ranges() == [(0, 999)]
    assert len(record.path.read_text().splitlines()) < 500
