"""Windows: per-key tumbling event-time windows against a plain loop and a running reduce.

Events ``(key, time, value)``: 100 keys, 10,000 events per second of event time, in order;
1-second tumbling windows sum the values per key (10,000 window results per 1,000,000
events). Contenders, timed in interleaved rounds, best of ``--repeat``:

- ``floor``: a plain loop adding each event to a dict under ``(key, window start)``.
- ``running reduce``: the same events through ``key_by().reduce()`` with no windows (one
  result per event): the keyed path without windows, for scale.
- ``window aggregate``: ``key_by().window(TumblingEventTimeWindows.of(1)).aggregate()``,
  in event time with a watermark strategy at the source.
- ``window process``: the same windows with a ``ProcessWindowFunction``, which keeps every
  record until the window fires.
- ``aggregate + window function``: ``aggregate(Sum(), WithWindow())``, the accumulator
  with a ``ProcessWindowFunction`` that gets the key, the window and the result.
- ``custom trigger``: ``aggregate`` with a ``Trigger`` of the job's own that fires at the
  window's end, as the built-in event-time trigger does: what the trigger contract costs.

The window join has a floor of its own. Its events ``(key, time, value)``, 10,000 per second
of event time, alternate between the left and the right input, and 5,000 keys give each key
one left and one right record per second: 1-second tumbling windows join them into 500,000
pairs per 1,000,000 events. Contenders, in the same rounds:

- ``join floor``: a plain loop putting each event in its side's list under its key, and
  calling the join function on every pair of each key as soon as the next window starts.
- ``window join``: one source split by ``filter`` into both inputs,
  ``left.join(right).where(key).equal_to(key).window(TumblingEventTimeWindows.of(1))
  .apply(fn)``.

Every window run's results are checked against the floor's. No goal is set (no issue asks
one yet); the ratio to the floor says what windows cost. Run with ``--help`` for flags.
"""

from __future__ import annotations

import functools
import operator
import sys
from collections.abc import Iterator

from harness import CountingSink, best_seconds, freeze_input, parser

from lockgate.connectors import CollectionSource
from lockgate.engine import (
    AggregateFunction,
    ProcessWindowFunction,
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
    if how == "reduce":
        stream = keyed.reduce(lambda a, b: (a[0], a[1], a[2] + b[2]), uid="sums")
    elif how == "aggregate":
        stream = windowed.aggregate(Sum(), uid="sums")
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


def main() -> int:
    flags = parser(
        __doc__.splitlines()[0],
        size_flag="--events",
        size_default=1_000_000,
        size_help="input events",
        parallelisms=None,
    )
    args = flags.parse_args()
    all_events, pairs = events(args.events), join_events(args.events)
    freeze_input()
    expected, expected_pairs = floor(all_events), join_floor(pairs)
    for how in ("aggregate", "process", "window function", "trigger"):
        checked(all_events, how, expected)
    checked_join(pairs, expected_pairs)
    seconds = best_seconds(
        args.repeat,
        {
            "floor (plain Python loop)": functools.partial(floor, all_events),
            "running reduce (no windows)": functools.partial(run, job, all_events, "reduce"),
            "window aggregate": functools.partial(run, job, all_events, "aggregate"),
            "window process": functools.partial(run, job, all_events, "process"),
            "aggregate + window function": functools.partial(
                run, job, all_events, "window function"
            ),
            "custom trigger": functools.partial(run, job, all_events, "trigger"),
            "join floor (plain Python loop)": functools.partial(join_floor, pairs),
            "window join": functools.partial(run, join_job, pairs),
        },
    )
    joins = {name: seconds.pop(name) for name in list(seconds) if "join" in name}
    print(
        f"1 s tumbling event-time windows, {args.events:,} events, {KEYS} keys, "
        f"{len(expected):,} windows, parallelism 1, best of {args.repeat}"
    )
    baseline = seconds["floor (plain Python loop)"]
    for name, taken in seconds.items():
        print(f"{name:<30} {args.events / taken:>12,.0f} ev/s   {baseline / taken:.2f} x floor")
    print(
        f"1 s tumbling window join, {args.events:,} events, {JOIN_KEYS:,} keys, "
        f"{len(expected_pairs):,} pairs, parallelism 1, best of {args.repeat}"
    )
    baseline = joins["join floor (plain Python loop)"]
    for name, taken in joins.items():
        rate = f"{args.events / taken:>12,.0f} ev/s {len(expected_pairs) / taken:>11,.0f} pairs/s"
        print(f"{name:<30} {rate}   {baseline / taken:.2f} x floor")
    return 0


if __name__ == "__main__":
    sys.exit(main())
