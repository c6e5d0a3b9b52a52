"""Windows: per-key tumbling, sliding and session windows against plain loops, and a join.

Events ``(key, time, value)``: 100 keys, 10,000 events per second of event time, in order;
1-second tumbling windows sum the values per key (10,000 window results per 1,000,000
events). Contenders, timed in interleaved rounds, best of ``--repeat``:

- ``floor``: a plain loop adding each event to a dict under ``(key, window start)``.
- ``running reduce``: the same events through ``key_by().reduce()`` with no windows (one
  result per event): the keyed path without windows, for scale.
- ``window aggregate``: ``key_by().window(TumblingEventTimeWindows.of(1)).aggregate()``,
  in event time with a watermark strategy at the source: the aligned path.
- ``window aggregate, general path``: the same with ``.trigger(ByHand())``, a subclass of
  the built-in ``EventTimeTrigger`` that changes nothing but its class, which the
  aligned path does not take: the general path, record by record (the window operator
  before the aligned path), in the same run.
- ``window process``: the same windows with a ``ProcessWindowFunction``, which keeps every
  record until the window fires (on the aligned path; and on the general path, ``ByHand``).
- ``aggregate + window function``: ``aggregate(Sum(), WithWindow())``, the accumulator
  with a ``ProcessWindowFunction`` that gets the key, the window and the result.
- ``custom trigger``: ``aggregate`` with a ``Trigger`` of the job's own that fires at the
  window's end, as the built-in event-time trigger does: what the trigger contract costs.

**Goal: the tumbling window aggregate at least 0.30 x its floor.**

With many keys, 10,000 keys each get one event per second, and 10-second tumbling windows
sum them (10 records per window, 100,000 windows per 1,000,000 events): the floor with 10 s
windows, ``aggregate(Total(), Started())`` on the aligned path and on the general path.
Here the costs of a window's life (opening it, its timers, firing and cleaning it up) are
spread over 10 records instead of 100.

Sliding windows, 4 seconds every second, over the same events (each event in 4 windows),
against a floor of their own (a plain loop adding each event to each of its windows):
``aggregate(Total(), Started())`` on the aligned path and on the general path
(``ByHand``). Sessions with a 1-second gap, over events with a 5-second pause after every
second of event time (a session per key and second), against a loop that extends or
closes each key's session: ``aggregate(Total(), Started())``, which merging windows run on
the general path.

The window join has a floor of its own. Its events ``(key, time, value)``, 10,000 per second
of event time, alternate between the left and the right input, and 5,000 keys give each key
one left and one right record per second: 1-second tumbling windows join them into 500,000
pairs per 1,000,000 events. Contenders, in the same rounds:

- ``join floor``: a plain loop putting each event in its side's list under its key, and
  calling the join function on every pair of each key as soon as the next window starts.
- ``window join``: one source split by ``filter`` into both inputs,
  ``left.join(right).where(key).equal_to(key).window(TumblingEventTimeWindows.of(1))
  .apply(fn)``.

Every window run's results are checked against its floor's. Run with ``--help`` for flags.
"""

from __future__ import annotations

import functools
import operator
import sys
from collections.abc import Callable, Iterator
from typing import Any

from harness import CountingSink, best_seconds, freeze_input, parser

from lockgate.connectors import CollectionSource
from lockgate.engine import (
    AggregateFunction,
    EventTimeSessionWindows,
    EventTimeTrigger,
    ProcessWindowFunction,
    SlidingEventTimeWindows,
    StreamEnvironment,
    TimeWindow,
    Trigger,
    TriggerContext,
    TriggerResult,
    TumblingEventTimeWindows,
    WatermarkStrategy,
    WindowContext,
    run,
)

KEYS = 100
PER_SECOND = 10_000
GOAL = 0.30  # the tumbling window aggregate, against its floor
SIZE, SLIDE = 4.0, 1.0  # sliding windows
GAP, PAUSE = 1.0, 5.0  # sessions: the gap, and the pause after every second of event time
MANY_KEYS, LONG = 10_000, 10.0  # many keys: a record per key and second, 10 s windows
Event = tuple[int, float, int]
Result = tuple[int, float, int]  # (key, window start, sum)


def events(count: int) -> list[Event]:
    """``count`` events in time order, ``PER_SECOND`` per second over ``KEYS`` keys."""
    return [(i % KEYS, i / PER_SECOND, i % 100) for i in range(count)]


def floor(all_events: list[Event]) -> dict[tuple[int, float], int]:
    """Per (key, 1-second window start), the sum of values: a plain loop."""
    sums: dict[tuple[int, float], int] = {}
    get = sums.get
    for key, time, value in all_events:
        window = (key, time - time % 1.0)
        sums[window] = get(window, 0) + value
    return sums


class Sum(AggregateFunction[Event, tuple[int, float, int], Result]):
    """``(key, window start, sum)``; the window start from the first event's time."""

    def create_accumulator(self) -> tuple[int, float, int]:
        return (-1, 0.0, 0)

    def add(self, value: Event, accumulator: tuple[int, float, int]) -> tuple[int, float, int]:
        key, time, amount = value
        return (key, time - time % 1.0, accumulator[2] + amount)

    def get_result(self, accumulator: tuple[int, float, int]) -> Result:
        return accumulator


class SumAll(ProcessWindowFunction[Event, Result, int]):
    """``(key, window start, sum)`` from every record of the window."""

    def process(self, key: int, context: WindowContext, elements: list[Event]) -> Iterator[Result]:
        window = context.window
        assert isinstance(window, TimeWindow)
        yield (key, window.start, sum(event[2] for event in elements))


class WithWindow(ProcessWindowFunction[Result, Result, int]):
    """``(key, window start, sum)`` from the one pre-aggregated result."""

    def process(self, key: int, context: WindowContext, elements: list[Result]) -> list[Result]:
        window = context.window
        assert isinstance(window, TimeWindow)
        return [(key, window.start, elements[0][2])]


class ByHand(EventTimeTrigger):
    """The built-in event-time trigger under a class of the job's own: the general path."""


class Total(AggregateFunction[Event, int, int]):
    """The sum of the values; sessions merge sums."""

    def create_accumulator(self) -> int:
        return 0

    def add(self, value: Event, accumulator: int) -> int:
        return accumulator + value[2]

    def get_result(self, accumulator: int) -> int:
        return accumulator

    def merge(self, a: int, b: int) -> int:
        return a + b


class Started(ProcessWindowFunction[int, Result, int]):
    """``(key, window start, sum)`` from the one pre-aggregated sum."""

    def process(self, key: int, context: WindowContext, elements: list[int]) -> list[Result]:
        window = context.window
        assert isinstance(window, TimeWindow)
        return [(key, window.start, elements[0])]


def many_keys(count: int) -> list[Event]:
    """``count`` events in time order, ``PER_SECOND`` per second over ``MANY_KEYS`` keys."""
    return [(i % MANY_KEYS, i / PER_SECOND, i % 100) for i in range(count)]


def long_floor(all_events: list[Event]) -> dict[tuple[int, float], int]:
    """Per (key, 10-second window start), the sum of values: a plain loop."""
    sums: dict[tuple[int, float], int] = {}
    get = sums.get
    for key, time, value in all_events:
        window = (key, time - time % LONG)
        sums[window] = get(window, 0) + value
    return sums


def sliding_floor(all_events: list[Event]) -> dict[tuple[int, float], int]:
    """Per (key, sliding window start), the sum of values: a plain loop over each window."""
    sums: dict[tuple[int, float], int] = {}
    get = sums.get
    for key, time, value in all_events:
        start = time - time % SLIDE
        while start + SIZE > time:
            window = (key, start)
            sums[window] = get(window, 0) + value
            start -= SLIDE
    return sums


def paused(count: int) -> list[Event]:
    """``count`` events as ``events`` gives them, with a pause after every second."""
    return [
        (key, time + (i // PER_SECOND) * PAUSE, value)
        for i, (key, time, value) in enumerate(events(count))
    ]


def session_floor(all_events: list[Event]) -> dict[tuple[int, float], int]:
    """Per (key, session start), the sum of values: each key's session extended or closed."""
    sums: dict[tuple[int, float], int] = {}
    open_sessions: dict[int, list[Any]] = {}  # key -> [start, end, sum]
    for key, time, value in all_events:
        session = open_sessions.get(key)
        if session is not None and time <= session[1]:  # [time, time + GAP) touches it
            session[1] = max(session[1], time + GAP)
            session[2] += value
            continue
        if session is not None:
            sums[key, session[0]] = session[2]
        open_sessions[key] = [time, time + GAP, value]
    for key, (start, _, total) in open_sessions.items():
        sums[key, start] = total
    return sums


class AtTheEnd(Trigger[Event, TimeWindow]):
    """Fires at the window's end: the event-time trigger, written by a user."""

    def on_element(
        self, element: Event, timestamp: float | None, window: TimeWindow, ctx: TriggerContext
    ) -> TriggerResult:
        ctx.register_event_time_timer(window.max_timestamp)
        return TriggerResult.CONTINUE

    def on_event_time(self, time: float, window: TimeWindow, ctx: TriggerContext) -> TriggerResult:
        return TriggerResult.FIRE if time == window.max_timestamp else TriggerResult.CONTINUE

    def clear(self, window: TimeWindow, ctx: TriggerContext) -> None:
        ctx.delete_event_time_timer(window.max_timestamp)


BY_TIME = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(
    operator.itemgetter(1)
)


async def job(all_events: list[Event], how: str) -> CountingSink:
    """Run one lockgate contender; return its sink (results by (key, window start))."""
    env = StreamEnvironment(parallelism=1)
    sink = CountingSink(latest_by=lambda result: (result[0], result[1]))
    strategy = None if how == "reduce" else BY_TIME
    keyed = env.from_source(
        CollectionSource(all_events), uid="events", watermark_strategy=strategy
    ).key_by(operator.itemgetter(0))
    windowed = keyed.window(TumblingEventTimeWindows.of(1.0))
    if how.startswith("sliding"):
        windowed = keyed.window(SlidingEventTimeWindows.of(SIZE, SLIDE))
    elif how.startswith("many"):
        windowed = keyed.window(TumblingEventTimeWindows.of(LONG))
    elif how == "sessions":
        windowed = keyed.window(EventTimeSessionWindows.with_gap(GAP))
    if how.endswith("general"):
        windowed = windowed.trigger(ByHand())
    if how == "reduce":
        stream = keyed.reduce(lambda a, b: (a[0], a[1], a[2] + b[2]), uid="sums")
    elif how in ("aggregate", "aggregate general"):
        stream = windowed.aggregate(Sum(), uid="sums")
    elif how in ("sliding", "sliding general", "sessions", "many", "many general"):
        stream = windowed.aggregate(Total(), Started(), uid="sums")
    elif how == "window function":
        stream = windowed.aggregate(Sum(), WithWindow(), uid="sums")
    elif how == "trigger":
        stream = windowed.trigger(AtTheEnd()).aggregate(Sum(), uid="sums")
    else:
        stream = windowed.process(SumAll(), uid="sums")
    stream.sink_to(sink, uid="count")
    await env.execute("windows")
    return sink


JOIN_KEYS = 5_000


def join_events(count: int) -> list[Event]:
    """``count`` events in time order; even ones left, odd ones right, a key per pair."""
    return [((i // 2) % JOIN_KEYS, i / PER_SECOND, i % 100) for i in range(count)]


def joined(left: Event, right: Event) -> Result:
    """The join function: ``(key, window start, left value * 100 + right value)``."""
    time = left[1]
    return (left[0], time - time % 1.0, left[2] * 100 + right[2])


def join_floor(all_events: list[Event]) -> dict[tuple[int, float], Result]:
    """Per (key, 1-second window start), each side's events, joined pair by pair.

    Events come in time order, so a window's sides are joined and dropped as soon as the
    next window starts, as the join operator drops them when the watermark passes.
    """
    results: dict[tuple[int, float], Result] = {}
    sides: dict[int, tuple[list[Event], list[Event]]] = {}
    current = 0.0
    for index, event in enumerate(all_events):
        start = event[1] - event[1] % 1.0
        if start != current:
            _join_window(sides, current, results)
            sides, current = {}, start
        pair = sides.get(event[0])
        if pair is None:
            pair = sides[event[0]] = ([], [])
        pair[index % 2].append(event)
    _join_window(sides, current, results)
    return results


def _join_window(
    sides: dict[int, tuple[list[Event], list[Event]]],
    start: float,
    results: dict[tuple[int, float], Result],
) -> None:
    for key, (lefts, rights) in sides.items():
        for left in lefts:
            for right in rights:
                results[key, start] = joined(left, right)


def is_left(event: Event) -> bool:
    return event[2] % 2 == 0  # i % 100 keeps i's parity


async def join_job(all_events: list[Event]) -> CountingSink:
    """The window join of both halves of one source; its sink (results by (key, window))."""
    env = StreamEnvironment(parallelism=1)
    sink = CountingSink(latest_by=lambda result: (result[0], result[1]))
    events = env.from_source(CollectionSource(all_events), uid="events", watermark_strategy=BY_TIME)
    left, right = events.filter(is_left), events.filter(lambda event: not is_left(event))
    key = operator.itemgetter(0)
    windows = left.join(right).where(key).equal_to(key).window(TumblingEventTimeWindows.of(1.0))
    windows.apply(joined, uid="pairs").sink_to(sink, uid="count")
    await env.execute("window join")
    return sink


def checked_join(all_events: list[Event], expected: dict[tuple[int, float], Result]) -> None:
    sink = run(join_job, all_events)
    if sink.latest != expected or sink.count != len(expected):
        raise SystemExit("window join: results differ from the plain loop's")


def checked(all_events: list[Event], how: str, expected: dict[tuple[int, float], int]) -> None:
    sink = run(job, all_events, how)
    found = {window: result[2] for window, result in sink.latest.items()}
    if found != expected:
        raise SystemExit(f"window {how}: results differ from the plain loop's")


TUMBLING = {
    "running reduce (no windows)": "reduce",
    "window aggregate": "aggregate",
    "window aggregate, general path": "aggregate general",
    "window process": "process",
    "window process, general path": "process general",
    "aggregate + window function": "window function",
    "custom trigger": "trigger",
}
SLIDING = {"sliding aggregate": "sliding", "sliding aggregate, general path": "sliding general"}
SESSIONS = {"session aggregate (general path)": "sessions"}
MANY = {"window aggregate, 10,000 keys": "many", "the same, general path": "many general"}


def main() -> int:
    flags = parser(
        __doc__.splitlines()[0],
        size_flag="--events",
        size_default=1_000_000,
        size_help="input events",
        parallelisms=None,
    )
    args = flags.parse_args()
    all_events, pairs, pausing = events(args.events), join_events(args.events), paused(args.events)
    spread = many_keys(args.events)
    freeze_input()
    expected, expected_pairs, expected_spread = (
        floor(all_events),
        join_floor(pairs),
        long_floor(spread),
    )
    expected_sliding, expected_sessions = sliding_floor(all_events), session_floor(pausing)
    for how in TUMBLING.values():
        if how != "reduce":
            checked(all_events, how, expected)
    for how in SLIDING.values():
        checked(all_events, how, expected_sliding)
    checked(pausing, "sessions", expected_sessions)
    for how in MANY.values():
        checked(spread, how, expected_spread)
    checked_join(pairs, expected_pairs)
    contenders: dict[str, Callable[[], object]] = {
        "floor (plain Python loop)": functools.partial(floor, all_events)
    }
    contenders.update(
        {name: functools.partial(run, job, all_events, how) for name, how in TUMBLING.items()}
    )
    contenders["10 s floor (plain Python loop)"] = functools.partial(long_floor, spread)
    contenders.update(
        {name: functools.partial(run, job, spread, how) for name, how in MANY.items()}
    )
    contenders["sliding floor (plain Python loop)"] = functools.partial(sliding_floor, all_events)
    contenders.update(
        {name: functools.partial(run, job, all_events, how) for name, how in SLIDING.items()}
    )
    contenders["session floor (plain Python loop)"] = functools.partial(session_floor, pausing)
    contenders.update(
        {name: functools.partial(run, job, pausing, how) for name, how in SESSIONS.items()}
    )
    contenders["join floor (plain Python loop)"] = functools.partial(join_floor, pairs)
    contenders["window join"] = functools.partial(run, join_job, pairs)
    seconds = best_seconds(args.repeat, contenders)
    rounds = f"parallelism 1, best of {args.repeat}"
    print(
        f"1 s tumbling event-time windows, {args.events:,} events, {KEYS} keys, "
        f"{len(expected):,} windows, {rounds}"
    )
    _table(args.events, seconds, "floor (plain Python loop)", TUMBLING)
    ratio = seconds["floor (plain Python loop)"] / seconds["window aggregate"]
    verdict = "met" if ratio >= GOAL else "NOT met"
    general = seconds["window aggregate, general path"] / seconds["window aggregate"]
    print(
        f"goal: window aggregate >= {GOAL:.2f} x floor: {ratio:.2f} x, {verdict}; "
        f"{general:.1f} x the general path"
    )
    print(
        f"{LONG:g} s tumbling event-time windows, {args.events:,} events, {MANY_KEYS:,} keys, "
        f"{len(expected_spread):,} windows, {rounds}"
    )
    _table(args.events, seconds, "10 s floor (plain Python loop)", MANY)
    print(
        f"{SIZE:g} s sliding windows every {SLIDE:g} s, {args.events:,} events, "
        f"{len(expected_sliding):,} windows, {rounds}"
    )
    _table(args.events, seconds, "sliding floor (plain Python loop)", SLIDING)
    print(
        f"sessions with a {GAP:g} s gap, a {PAUSE:g} s pause after every second, "
        f"{args.events:,} events, {len(expected_sessions):,} sessions, {rounds}"
    )
    _table(args.events, seconds, "session floor (plain Python loop)", SESSIONS)
    print(
        f"1 s tumbling window join, {args.events:,} events, {JOIN_KEYS:,} keys, "
        f"{len(expected_pairs):,} pairs, {rounds}"
    )
    baseline = seconds["join floor (plain Python loop)"]
    for name in ("join floor (plain Python loop)", "window join"):
        taken = seconds[name]
        rate = f"{args.events / taken:>12,.0f} ev/s {len(expected_pairs) / taken:>11,.0f} pairs/s"
        print(f"{name:<34} {rate}   {baseline / taken:.2f} x floor")
    return 0


def _table(count: int, seconds: dict[str, float], floor_name: str, names: dict[str, str]) -> None:
    baseline = seconds[floor_name]
    for name in (floor_name, *names):
        taken = seconds[name]
        print(f"{name:<34} {count / taken:>12,.0f} ev/s   {baseline / taken:.2f} x floor")


if __name__ == "__main__":
    sys.exit(main())
