"""RecordBytes: records counted at the pickled size of sampled batches, without an event loop."""

from __future__ import annotations

import pickle
import threading
from typing import Any

from lockgate.engine.runtime.metrics.record_bytes import SAMPLE_EVERY, RecordBytes


def pickled(records: list[Any]) -> int:
    return len(pickle.dumps(records, protocol=5))


class Counting:
    """A caller as the engine is one: it counts records and samples when it is time."""

    def __init__(self) -> None:
        self.count = 0
        self.bytes = RecordBytes()

    def add(self, records: list[Any]) -> None:
        self.count += len(records)
        if self.count >= self.bytes.next_sample:
            self.bytes.sample(records, self.count)

    @property
    def total(self) -> int | None:
        return self.bytes.total(self.count)


def test_batches_of_one_shape_count_exactly_their_pickled_size() -> None:
    batch = [(key, key * 2) for key in range(100)]
    counted = Counting()

    for _ in range(3 * SAMPLE_EVERY // 100):
        counted.add(batch)

    assert counted.total == 3 * SAMPLE_EVERY // 100 * pickled(batch)


def test_a_batch_between_samples_counts_at_the_sampled_size_per_record() -> None:
    small, large = [0] * 10, ["x" * 1000] * 10
    counted = Counting()

    counted.add(small)  # the first batch is sampled
    counted.add(large)  # the next is not: it counts as ten small records

    assert counted.total == 2 * pickled(small)


def test_the_batch_that_reaches_sample_every_more_records_is_sampled() -> None:
    small, large = [0] * 16, ["x" * 1000] * 16
    counted = Counting()
    for _ in range(SAMPLE_EVERY // 16):
        counted.add(small)

    counted.add(large)  # count 16 + SAMPLE_EVERY: the next sample

    per_record = (pickled(small) + pickled(large)) / 32
    assert counted.total == round(SAMPLE_EVERY // 16 * pickled(small) + 16 * per_record)


def test_the_first_batch_after_empty_ones_is_sampled() -> None:
    counted = Counting()

    counted.add([])
    counted.add([1, 2, 3])

    assert counted.total == pickled([1, 2, 3])


def test_the_total_never_decreases_when_larger_records_are_sampled() -> None:
    counted = Counting()
    counted.add(["x" * 1000] * 10)
    for _ in range(SAMPLE_EVERY // 16):
        counted.add([0] * 16)
    before = counted.total

    counted.add([0] * 16)

    assert before is not None
    assert counted.total is not None
    assert counted.total >= before


def test_records_pickle_refuses_make_the_size_unknown() -> None:
    counted = Counting()
    counted.add([1, 2, 3])

    for _ in range(SAMPLE_EVERY):
        counted.add([threading.Lock()])

    assert counted.total is None
