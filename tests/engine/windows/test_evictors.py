"""Evictors as Flink has them: before or after the function, and the window keeps the rest."""

from __future__ import annotations

from typing import Any

import pytest

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import (
    CountEvictor,
    CountTrigger,
    DeltaEvictor,
    EvictorContext,
    GlobalWindows,
    StreamEnvironment,
    TimeEvictor,
    TimestampedValue,
    TumblingEventTimeWindows,
    TumblingProcessingTimeWindows,
)
from lockgate.engine.time.clock import ManualClock
from tests.engine.jobs.windows import MONOTONOUS, Event, Seen

VALUES = [("a", float(n), v) for n, v in enumerate([1, 5, 6, 2, 9, 10], start=1)]


async def seen_by_function(records: list[Event], windowed: Any) -> list[Any]:
    """What a process function saw at each firing of ``windowed(keyed)`` (the clock stands)."""
    env = StreamEnvironment(
        parallelism=1, batch_size=1, auto_watermark_interval=0.0, clock=ManualClock()
    )
    sink = CollectSink[Any]()
    keyed = env.from_source(
        CollectionSource(records), uid="events", watermark_strategy=MONOTONOUS
    ).key_by(lambda event: event[0])
    windowed(keyed).process(Seen(), uid="windows").sink_to(sink, uid="out")
    await env.execute("evictors")
    return [values for _, _, _, values in sink.results]


def every_three(evictor: Any) -> Any:
    return lambda keyed: (
        keyed.window(GlobalWindows.create()).trigger(CountTrigger.of(3)).evictor(evictor)
    )


@pytest.mark.parametrize(
    ("evictor", "seen"),
    [
        # the window holds 1 5 6, fires; keeps 5 6; gets 2 9 10, fires on 5 6 2 9 10
        (CountEvictor.of(2), [[5, 6], [9, 10]]),
        (CountEvictor.of(2, do_evict_after=True), [[1, 5, 6], [5, 6, 2, 9, 10]]),
        (DeltaEvictor.of(3.0, lambda a, b: abs(a[2] - b[2])), [[5, 6], [9, 10]]),
        (
            DeltaEvictor.of(3.0, lambda a, b: abs(a[2] - b[2]), do_evict_after=True),
            [[1, 5, 6], [5, 6, 2, 9, 10]],
        ),
    ],
    ids=["count-before", "count-after", "delta-before", "delta-after"],
)
async def test_an_evictor_removes_records_before_or_after_the_function(
    evictor: Any, seen: list[list[int]]
) -> None:
    assert await seen_by_function(VALUES, every_three(evictor)) == seen


@pytest.mark.parametrize(
    ("evictor", "seen"),
    [
        # event times 1..6; at each firing the newest is 3, then 6: keep what is within 1.5 s
        (TimeEvictor.of(1.5), [[5, 6], [9, 10]]),
        (TimeEvictor.of(1.5, do_evict_after=True), [[1, 5, 6], [5, 6, 2, 9, 10]]),
    ],
    ids=["time-before", "time-after"],
)
async def test_a_time_evictor_keeps_the_records_near_the_newest_event_time(
    evictor: Any, seen: list[list[int]]
) -> None:
    def windowed(keyed: Any) -> Any:
        return (
            keyed.window(TumblingEventTimeWindows.of(100.0))
            .trigger(CountTrigger.of(3))
            .evictor(evictor)
        )

    assert (await seen_by_function(VALUES, windowed))[:2] == seen


@pytest.mark.parametrize(
    "assigner",
    [GlobalWindows.create(), TumblingProcessingTimeWindows.of(100.0)],
    ids=["global", "processing-time"],
)
async def test_a_time_evictor_reads_the_timestamps_records_carry_in_any_window(
    assigner: Any,
) -> None:
    def windowed(keyed: Any) -> Any:
        return keyed.window(assigner).trigger(CountTrigger.of(3)).evictor(TimeEvictor.of(1.5))

    # the window follows the clock, which stands; the records carry event times 1..6
    assert (await seen_by_function(VALUES, windowed))[:2] == [[5, 6], [9, 10]]


async def test_with_an_evictor_reduce_folds_the_records_that_remain_each_firing() -> None:
    env, sink = StreamEnvironment(parallelism=1), CollectSink[Any]()
    (
        env.from_source(CollectionSource(VALUES), uid="events")
        .key_by(lambda event: event[0])
        .window(GlobalWindows.create())
        .trigger(CountTrigger.of(3))
        .evictor(CountEvictor.of(2))
        .reduce(lambda a, b: (a[0], b[1], a[2] + b[2]), uid="sums")
        .sink_to(sink, uid="out")
    )

    await env.execute("evicting-reduce")

    assert [total for _, _, total in sink.results] == [5 + 6, 9 + 10]


def test_evictors_remove_from_the_list_in_place() -> None:
    elements = [TimestampedValue(v, float(t)) for t, v in enumerate([1, 5, 6, 2, 9])]
    context = EvictorContext(watermark=0.0, processing_time=0.0)

    CountEvictor.of(3).evict_before(elements, len(elements), None, context)
    assert [e.value for e in elements] == [6, 2, 9]
    TimeEvictor.of(1.0).evict_before(elements, len(elements), None, context)
    assert [e.value for e in elements] == [9]  # newest at 4: at or before 3 goes


def test_a_time_evictor_leaves_records_without_event_time_alone() -> None:
    elements = [TimestampedValue(v, None) for v in (1, 2, 3)]

    TimeEvictor.of(0.0).evict_before(elements, 3, None, EvictorContext(0.0, 0.0))

    assert [e.value for e in elements] == [1, 2, 3]
