"""Triggers as Flink has them: custom ones fire and purge, built-ins follow the same contract."""

from __future__ import annotations

from typing import Any

import pytest

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import (
    ContinuousEventTimeTrigger,
    EventTimeSessionWindows,
    EventTimeTrigger,
    GlobalWindows,
    GraphError,
    ProcessingTimeTrigger,
    PurgingTrigger,
    SlidingEventTimeWindows,
    StreamEnvironment,
    TimeWindow,
    Trigger,
    TriggerContext,
    TriggerResult,
    TumblingEventTimeWindows,
    WatermarkStrategy,
)
from tests.engine.jobs.windows import MONOTONOUS, Event, EveryThirdAndAtEnd, Seen


def watermark_per_record() -> StreamEnvironment:
    return StreamEnvironment(parallelism=1, batch_size=1, auto_watermark_interval=0.0)


async def fired(
    records: list[Event], windowed: Any, strategy: WatermarkStrategy = MONOTONOUS
) -> list[Any]:
    """What ``windowed(keyed)`` emits for ``records``, a watermark after each."""
    env, sink = watermark_per_record(), CollectSink[Any]()
    keyed = env.from_source(
        CollectionSource(records), uid="events", watermark_strategy=strategy
    ).key_by(lambda event: event[0])
    windowed(keyed).process(Seen(), uid="windows").sink_to(sink, uid="out")
    await env.execute("triggers")
    return list(sink.results)


SEVEN = [("a", float(n), n) for n in range(1, 8)] + [("a", 12.0, 8)]


async def test_a_custom_trigger_fires_every_third_record_and_at_the_window_end() -> None:
    results = await fired(
        SEVEN,
        lambda keyed: keyed.window(TumblingEventTimeWindows.of(10.0)).trigger(EveryThirdAndAtEnd()),
    )

    assert results == [
        ("a", 0.0, 10.0, [1, 2, 3]),
        ("a", 0.0, 10.0, [1, 2, 3, 4, 5, 6]),  # FIRE keeps what the window holds
        ("a", 0.0, 10.0, [1, 2, 3, 4, 5, 6, 7]),  # at the end: everything
        ("a", 10.0, 20.0, [8]),
    ]


async def test_fire_and_purge_empties_the_window_so_its_end_emits_only_the_rest() -> None:
    records = [("b", 1.0, 1), ("b", 2.0, 2), ("b", 3.0, 3), *SEVEN]

    results = await fired(
        sorted(records, key=lambda event: event[1]),
        lambda keyed: keyed.window(TumblingEventTimeWindows.of(10.0)).trigger(
            EveryThirdAndAtEnd(purging=True)
        ),
    )

    assert sorted(results) == sorted(
        [
            ("a", 0.0, 10.0, [1, 2, 3]),
            ("a", 0.0, 10.0, [4, 5, 6]),
            ("a", 0.0, 10.0, [7]),
            ("a", 10.0, 20.0, [8]),
            ("b", 0.0, 10.0, [1, 2, 3]),  # purged at its third record: nothing at its end
        ]
    )


async def test_purging_trigger_turns_a_custom_triggers_firings_into_fire_and_purge() -> None:
    results = await fired(
        SEVEN,
        lambda keyed: keyed.window(TumblingEventTimeWindows.of(10.0)).trigger(
            PurgingTrigger.of(EveryThirdAndAtEnd())
        ),
    )

    assert results == [
        ("a", 0.0, 10.0, [1, 2, 3]),
        ("a", 0.0, 10.0, [4, 5, 6]),
        ("a", 0.0, 10.0, [7]),
        ("a", 10.0, 20.0, [8]),
    ]


async def test_a_continuous_event_time_trigger_fires_every_interval_and_at_the_end() -> None:
    records = [("a", t, int(t)) for t in (1.0, 2.0, 4.0, 5.0, 8.0, 12.0)]

    results = await fired(
        records,
        lambda keyed: keyed.window(TumblingEventTimeWindows.of(10.0)).trigger(
            ContinuousEventTimeTrigger.of(3.0)
        ),
    )

    assert results == [
        ("a", 0.0, 10.0, [1, 2, 4]),  # at 3: the watermark after the record at 4 passed it
        ("a", 0.0, 10.0, [1, 2, 4, 5, 8]),  # at 6
        ("a", 0.0, 10.0, [1, 2, 4, 5, 8]),  # at 9
        ("a", 0.0, 10.0, [1, 2, 4, 5, 8]),  # at the end
        ("a", 10.0, 20.0, [12]),  # at 15: the first multiple after its first record, 12
        ("a", 10.0, 20.0, [12]),  # at 18
        ("a", 10.0, 20.0, [12]),  # at the end (its next time, 21, would be past it)
    ]


class FiresOnItsTimer(Trigger[Event, TimeWindow]):
    """Sets a timer at 7 in windows starting at 0 only; fires on every timer it is told of."""

    def on_element(
        self, element: Event, timestamp: float | None, window: TimeWindow, ctx: TriggerContext
    ) -> TriggerResult:
        if window.start == 0.0:
            ctx.register_event_time_timer(7.0)
        return TriggerResult.CONTINUE

    def on_event_time(self, time: float, window: TimeWindow, ctx: TriggerContext) -> TriggerResult:
        return TriggerResult.FIRE


async def test_a_timer_reaches_only_the_window_that_set_it_and_the_cleanup_timer_too() -> None:
    records = [("a", 6.0, 1), ("a", 30.0, 2)]

    results = await fired(
        records,
        lambda keyed: keyed.window(SlidingEventTimeWindows.of(10.0, 5.0)).trigger(
            FiresOnItsTimer()
        ),
    )

    assert results[:3] == [
        ("a", 0.0, 10.0, [1]),  # its own timer at 7
        ("a", 0.0, 10.0, [1]),  # its cleanup timer (the trigger sees it, as in Flink)
        ("a", 5.0, 15.0, [1]),  # the other window: only its cleanup timer
    ]


async def test_session_windows_merge_a_custom_triggers_state_and_timers() -> None:
    # The sessions [1, 6) and [10, 15) merge into [1, 15) on the record at 5.5: their
    # counts merge (1 + 1, + 1 for that record: its third, so it fires), and the merged
    # window's end timer fires it again once the watermark passes 15.
    records = [("a", 1.0, 1), ("a", 10.0, 10), ("a", 5.5, 5), ("a", 30.0, 30)]
    late_by_ten = WatermarkStrategy.for_bounded_out_of_orderness(10.0).with_timestamp_assigner(
        lambda event: event[1]
    )

    results = await fired(
        records,
        lambda keyed: keyed.window(EventTimeSessionWindows.with_gap(5.0)).trigger(
            EveryThirdAndAtEnd()
        ),
        late_by_ten,
    )

    assert results == [
        ("a", 1.0, 15.0, [1, 10, 5]),
        ("a", 1.0, 15.0, [1, 10, 5]),
        ("a", 30.0, 35.0, [30]),
    ]


async def test_a_global_window_fires_by_a_custom_trigger() -> None:
    records = [("a", float(n), n) for n in range(1, 8)]

    results = await fired(
        records,
        lambda keyed: keyed.window(GlobalWindows.create()).trigger(
            PurgingTrigger.of(EveryThirdAndAtEnd())
        ),
    )

    # the global window ends at the end of time: its timer there fires when the input ends
    assert results == [
        ("a", -1.0, -1.0, [1, 2, 3]),
        ("a", -1.0, -1.0, [4, 5, 6]),
        ("a", -1.0, -1.0, [7]),
    ]


class NeverMerges(Trigger[Any, Any]):
    """A trigger without merging support."""

    def on_element(
        self, element: Any, timestamp: float | None, window: Any, ctx: TriggerContext
    ) -> TriggerResult:
        return TriggerResult.CONTINUE


def test_session_windows_refuse_a_trigger_that_cannot_merge() -> None:
    env = StreamEnvironment()
    keyed = env.from_source(
        CollectionSource(SEVEN), uid="events", watermark_strategy=MONOTONOUS
    ).key_by(lambda event: event[0])

    with pytest.raises(GraphError, match=r"window 'sessions'.*NeverMerges cannot merge"):
        keyed.window(EventTimeSessionWindows.with_gap(5.0)).trigger(NeverMerges()).process(
            Seen(), uid="sessions"
        )


def test_the_built_in_triggers_are_triggers_that_merge() -> None:
    built_in = [
        EventTimeTrigger.create(),
        ProcessingTimeTrigger.create(),
        ContinuousEventTimeTrigger.of(1.0),
        PurgingTrigger.of(EventTimeTrigger.create()),
    ]

    assert all(isinstance(t, Trigger) and t.can_merge() for t in built_in)
    assert not NeverMerges().can_merge()
    assert ContinuousEventTimeTrigger.of(0).problems() != []


def test_trigger_results_say_whether_they_fire_and_purge() -> None:
    flags = {result.name: (result.is_fire, result.is_purge) for result in TriggerResult}

    assert flags == {
        "CONTINUE": (False, False),
        "FIRE": (True, False),
        "PURGE": (False, True),
        "FIRE_AND_PURGE": (True, True),
    }


class PurgesOnNegatives(Trigger[Event, TimeWindow]):
    """Purges the window on a negative value; fires at the window's end."""

    def on_element(
        self, element: Event, timestamp: float | None, window: TimeWindow, ctx: TriggerContext
    ) -> TriggerResult:
        ctx.register_event_time_timer(window.max_timestamp)
        return TriggerResult.PURGE if element[2] < 0 else TriggerResult.CONTINUE

    def on_event_time(self, time: float, window: TimeWindow, ctx: TriggerContext) -> TriggerResult:
        return TriggerResult.FIRE if time == window.max_timestamp else TriggerResult.CONTINUE


async def test_purge_empties_the_window_without_firing_it() -> None:
    records = [("a", 1.0, 1), ("a", 2.0, 2), ("a", 3.0, -1), ("a", 4.0, 3), ("a", 12.0, 4)]

    results = await fired(
        records,
        lambda keyed: keyed.window(TumblingEventTimeWindows.of(10.0)).trigger(PurgesOnNegatives()),
    )

    assert results == [("a", 0.0, 10.0, [3]), ("a", 10.0, 20.0, [4])]
