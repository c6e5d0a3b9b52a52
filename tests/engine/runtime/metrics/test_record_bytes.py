"""RecordBytes: batches counted at the pickled size of sampled batches, without an event loop."""

from __future__ import annotations

import pickle
import threading

from lockgate.engine.runtime.metrics.record_bytes import SAMPLE_EVERY, RecordBytes


def pickled(records: list[object]) -> int:
    return len(pickle.dumps(records, protocol=5))


def test_batches_of_one_shape_count_exactly_their_pickled_size() -> None:
    batch = [(key, key * 2) for key in range(100)]
    counted = RecordBytes()

    for _ in range(3 * SAMPLE_EVERY):
        counted.count(batch)

    assert counted.total == 3 * SAMPLE_EVERY * pickled(batch)


def test_a_batch_between_samples_counts_at_the_sampled_size_per_record() -> None:
    small, large = [0] * 10, ["x" * 1000] * 10
    counted = RecordBytes()

    counted.count(small)  # the first batch is sampled
    counted.count(large)  # the next is not: it counts as ten small records

    assert counted.total == 2 * pickled(small)


def test_the_batch_after_every_sample_every_batches_is_sampled_again() -> None:
    small, large = [0] * 10, ["x" * 1000] * 10
    counted = RecordBytes()
    for _ in range(SAMPLE_EVERY):
        counted.count(small)

    counted.count(large)

    per_record = (pickled(small) + pickled(large)) / 20
    assert counted.total == round(SAMPLE_EVERY * pickled(small) + 10 * per_record)


def test_empty_batches_count_nothing_and_take_no_sample() -> None:
    counted = RecordBytes()

    counted.count([])
    counted.count([1, 2, 3])

    assert counted.total == pickled([1, 2, 3])


def test_records_pickle_refuses_make_the_size_unknown() -> None:
    counted = RecordBytes()
    counted.count([1, 2, 3])

    for _ in range(SAMPLE_EVERY):
        counted.count([threading.Lock()])

    assert counted.total is None
