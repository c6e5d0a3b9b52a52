"""The result queues of async_map, without an event loop: ordered, unordered, watermarks."""

from __future__ import annotations

import random

import pytest

from lockgate.engine import Watermark
from lockgate.engine.runtime.async_io.result_queue import (
    OrderedResultQueue,
    UnorderedResultQueue,
    result_queue,
)


def test_ordered_queue_holds_a_completed_result_until_every_earlier_one_completed() -> None:
    queue = OrderedResultQueue()
    first, second = queue.add("a"), queue.add("b")

    queue.complete(second, ["B"])
    held = queue.pop_ready()
    queue.complete(first, ["A"])

    assert held == ([], None)
    assert queue.pop_ready() == (["A", "B"], None)
    assert len(queue) == 0


@pytest.mark.parametrize("seed", range(20))
def test_ordered_queue_emits_in_input_order_whatever_the_completion_order(seed: int) -> None:
    queue = OrderedResultQueue()
    entries = [queue.add(n) for n in range(50)]
    emitted: list[int] = []

    for entry in random.Random(seed).sample(entries, len(entries)):
        queue.complete(entry, [entry.input])
        emitted += queue.pop_ready()[0]

    assert emitted == list(range(50))


def test_unordered_queue_emits_results_as_they_complete() -> None:
    queue = UnorderedResultQueue()
    first, second, third = queue.add(1), queue.add(2), queue.add(3)

    queue.complete(third, [30])
    queue.complete(first, [10])

    assert queue.pop_ready() == ([30, 10], None)
    assert queue.inputs() == [2]
    queue.complete(second, [20])
    assert queue.pop_ready() == ([20], None)


def test_unordered_queue_never_emits_a_result_across_a_watermark() -> None:
    queue = UnorderedResultQueue()
    before = queue.add("before")
    queue.add_watermark(Watermark(5.0))
    after = queue.add("after")

    queue.complete(after, ["AFTER"])
    held = queue.pop_ready()
    queue.complete(before, ["BEFORE"])

    assert held == ([], None)
    assert queue.pop_ready() == (["BEFORE"], Watermark(5.0))
    assert queue.pop_ready() == (["AFTER"], None)


def test_ordered_queue_passes_a_watermark_after_the_records_before_it() -> None:
    queue = OrderedResultQueue()
    entry = queue.add("x")
    queue.add_watermark(Watermark(1.0))

    assert queue.pop_ready() == ([], None)
    queue.complete(entry, ["X"])
    assert queue.pop_ready() == (["X"], Watermark(1.0))


def test_a_watermark_with_nothing_before_it_passes_at_once() -> None:
    queue = UnorderedResultQueue()
    queue.add_watermark(Watermark(1.0))
    queue.add_watermark(Watermark(2.0))

    assert queue.pop_ready() == ([], Watermark(1.0))
    assert queue.pop_ready() == ([], Watermark(2.0))
    assert queue.pop_ready() == ([], None)


@pytest.mark.parametrize("ordered", [True, False])
def test_inputs_lists_every_record_not_yet_emitted_in_input_order(ordered: bool) -> None:
    queue = result_queue(ordered=ordered)
    entries = [queue.add(n) for n in range(6)]
    for entry in (entries[0], entries[3], entries[4]):
        queue.complete(entry, [entry.input])

    queue.pop_ready()

    expected = [1, 2, 3, 4, 5] if ordered else [1, 2, 5]
    assert queue.inputs() == expected
    assert len(queue) == len(expected)


@pytest.mark.parametrize("ordered", [True, False])
def test_a_fallback_may_emit_several_records_or_none_for_one_input(ordered: bool) -> None:
    queue = result_queue(ordered=ordered)
    first, second = queue.add("a"), queue.add("b")

    queue.complete(first, [])
    queue.complete(second, ["b1", "b2"])

    assert queue.pop_ready() == (["b1", "b2"], None)


def test_completing_an_entry_twice_is_refused() -> None:
    queue = OrderedResultQueue()
    entry = queue.add("a")
    queue.complete(entry, ["A"])

    with pytest.raises(ValueError, match="completed twice"):
        queue.complete(entry, ["A"])
