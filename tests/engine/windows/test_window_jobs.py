"""Windows in running jobs: exact results against plain loops, lateness, recovery, rescaling."""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import (
    AggregateFunction,
    CountTrigger,
    EventTimeSessionWindows,
    GlobalWindows,
    GraphError,
    OutputTag,
    ProcessingTimeSessionWindows,
    ProcessWindowFunction,
    RestartStrategy,
    SlidingEventTimeWindows,
    StreamEnvironment,
    TimeWindow,
    TumblingEventTimeWindows,
    TumblingProcessingTimeWindows,
    WatermarkStrategy,
    WindowContext,
)
from lockgate.engine.testing import AwaitCheckpoint, FailOnce
from lockgate.engine.time.clock import ManualClock
from tests.engine.jobs.event_time import WatermarkLog
from tests.engine.jobs.savepoints import Topic, TopicSource

Event = tuple[str, float, int]  # (key, event time, value)
DISORDER = 3.0
BY_TIME = WatermarkStrategy.for_bounded_out_of_orderness(DISORDER).with_timestamp_assigner(
    lambda event: event[1]
)


def events(count: int, *, keys: int = 4, seed: int = 1, start: float = 0.0) -> list[Event]:
    """Events 0.25 s apart over ``keys`` keys, shuffled by less than ``DISORDER`` seconds."""
    draw = random.Random(seed)
    timed = [
        (start + n * 0.25 + draw.uniform(0, DISORDER - 0.01), (f"k{n % keys}", start + n * 0.25, n))
        for n in range(count)
    ]
    return [event for _, event in sorted(timed)]


class SumPerWindow(ProcessWindowFunction[Event, tuple[str, float, float, int, int], str]):
    """Emits ``(key, start, end, sum of values, count)`` per firing."""

    def process(
        self, key: str, context: WindowContext, elements: list[Event]
    ) -> Iterator[tuple[str, float, float, int, int]]:
        window = context.window
        assert isinstance(window, TimeWindow)
        yield (key, window.start, window.end, sum(e[2] for e in elements), len(elements))


def plain_windows(
    all_events: list[Event], windows_of: Any
) -> Counter[tuple[str, float, float, int, int]]:
    """What every window holds, by a plain loop: ``(key, start, end, sum, count)``."""
    held: dict[tuple[str, float, float], list[int]] = defaultdict(list)
    for key, time, value in all_events:
        for window in windows_of(time):
            held[(key, window.start, window.end)].append(value)
    return Counter((key, s, e, sum(v), len(v)) for (key, s, e), v in held.items())


def event_time_env(parallelism: int = 2, **options: Any) -> StreamEnvironment:
    return StreamEnvironment(parallelism=parallelism, auto_watermark_interval=0.0, **options)


@pytest.mark.parametrize(
    "assigner", [TumblingEventTimeWindows.of(5.0), SlidingEventTimeWindows.of(6.0, 2.0)]
)
async def test_time_windows_hold_exactly_the_records_of_their_time(assigner: Any) -> None:
    env, sink = event_time_env(), CollectSink[Any]()
    (
        env.from_source(CollectionSource(events(2_000)), uid="events", watermark_strategy=BY_TIME)
        .key_by(lambda event: event[0])
        .window(assigner)
        .process(SumPerWindow(), uid="sums")
        .sink_to(sink, uid="out")
    )

    await env.execute("windows")

    assert Counter(sink.results) == plain_windows(events(2_000), assigner.assign_windows)


def sessions(all_events: list[Event], gap: float) -> Counter[tuple[str, float, float, int, int]]:
    """Sessions by a plain loop: per key, times sorted, a new session after a gap."""
    by_key: dict[str, list[tuple[float, int]]] = defaultdict(list)
    for key, time, value in all_events:
        by_key[key].append((time, value))
    found: Counter[tuple[str, float, float, int, int]] = Counter()
    for key, timed in by_key.items():
        timed.sort()
        run = [timed[0]]
        for time, value in timed[1:]:
            if time > run[-1][0] + gap:
                found[(key, run[0][0], run[-1][0] + gap, sum(v for _, v in run), len(run))] += 1
                run = []
            run.append((time, value))
        found[(key, run[0][0], run[-1][0] + gap, sum(v for _, v in run), len(run))] += 1
    return found


def bursts(count: int, seed: int = 2) -> list[Event]:
    """Events in bursts with pauses of 1 to 12 s per key, out of order by up to DISORDER."""
    draw = random.Random(seed)
    clock: dict[str, float] = defaultdict(float)
    timed = []
    for n in range(count):
        key = f"k{draw.randrange(3)}"
        clock[key] += draw.choice((0.5, 1.0, 12.0))
        timed.append((clock[key] + draw.uniform(0, DISORDER - 0.01), (key, clock[key], n)))
    return [event for _, event in sorted(timed)]


class SumAndCount(AggregateFunction[Event, list[int], tuple[int, int]]):
    """(sum, count) of values; changes its accumulator in place; merges for sessions."""

    def create_accumulator(self) -> list[int]:
        return [0, 0]

    def add(self, value: Event, accumulator: list[int]) -> list[int]:
        accumulator[0] += value[2]
        accumulator[1] += 1
        return accumulator

    def get_result(self, accumulator: list[int]) -> tuple[int, int]:
        return (accumulator[0], accumulator[1])

    def merge(self, a: list[int], b: list[int]) -> list[int]:
        a[0] += b[0]
        a[1] += b[1]
        return a


async def test_session_windows_merge_into_the_sessions_a_plain_loop_finds() -> None:
    env, by_process, by_aggregate = event_time_env(), CollectSink[Any](), CollectSink[Any]()
    keyed = env.from_source(
        CollectionSource(bursts(1_500)), uid="events", watermark_strategy=BY_TIME
    ).key_by(lambda event: event[0])
    gap = EventTimeSessionWindows.with_gap(5.0)
    keyed.window(gap).process(SumPerWindow(), uid="sessions").sink_to(by_process, uid="out")
    keyed.window(gap).aggregate(SumAndCount(), uid="totals").sink_to(by_aggregate, uid="totals-out")

    await env.execute("sessions")

    expected = sessions(bursts(1_500), 5.0)
    assert Counter(by_process.results) == expected
    totals: Counter[tuple[int, int]] = Counter()
    for (_, _, _, total, count), times in expected.items():
        totals[(total, count)] += times
    assert Counter(by_aggregate.results) == totals
    assert len(expected) > 50


LATE = OutputTag[Event]("late")


async def test_late_records_fire_their_window_again_within_lateness_then_go_aside() -> None:
    # One record per batch and a watermark after each: the order of events is exact.
    env = event_time_env(parallelism=1, batch_size=1)
    monotonous = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(
        lambda event: event[1]
    )
    main, late = CollectSink[Any](), CollectSink[Event]()
    stream = [
        ("a", 1.0, 1),
        ("a", 5.0, 2),
        ("a", 12.0, 3),  # watermark ~12: [0, 10) fires with 1 + 2
        ("a", 8.0, 4),  # late, within 5 s of lateness: [0, 10) fires again with 1 + 2 + 4
        ("a", 16.0, 5),  # watermark ~16: [0, 10) is cleaned up (its end + 5 s passed)
        ("a", 9.0, 6),  # too late for [0, 10): to the side output
    ]
    windowed = (
        env.from_source(CollectionSource(stream), uid="events", watermark_strategy=monotonous)
        .key_by(lambda event: event[0])
        .window(TumblingEventTimeWindows.of(10.0))
        .allowed_lateness(5.0)
        .side_output_late_data(LATE)
        .process(SumPerWindow(), uid="sums")
    )
    windowed.sink_to(main, uid="out")
    windowed.side_output(LATE).sink_to(late, uid="late-out")

    await env.execute("lateness")

    assert main.results == [("a", 0.0, 10.0, 3, 2), ("a", 0.0, 10.0, 7, 3), ("a", 10.0, 20.0, 8, 2)]
    assert late.results == [("a", 9.0, 6)]


async def test_count_windows_emit_every_n_records_of_a_key() -> None:
    env, sink = StreamEnvironment(parallelism=2), CollectSink[Any]()
    numbers = [(f"k{n % 3}", float(n), n) for n in range(100)]
    (
        env.from_source(CollectionSource(numbers), uid="numbers", parallelism=1)
        .key_by(lambda event: event[0])
        .count_window(4)
        .reduce(lambda a, b: (a[0], b[1], a[2] + b[2]), uid="fours")
        .sink_to(sink, uid="out")
    )

    await env.execute("count-windows")

    expected = []
    for key in range(3):
        values = [n for n in range(100) if n % 3 == key]
        for i in range(0, len(values) - 3, 4):  # an incomplete last window is not emitted
            four = values[i : i + 4]
            expected.append((f"k{key}", float(four[-1]), sum(four)))
    assert sorted(sink.results) == sorted(expected)


async def test_a_global_window_with_a_count_trigger_fires_on_everything_so_far() -> None:
    env, sink = StreamEnvironment(parallelism=1), CollectSink[Any]()
    (
        env.from_source(CollectionSource([("k", 0.0, n) for n in range(10)]), uid="numbers")
        .key_by(lambda event: event[0])
        .window(GlobalWindows.create())
        .trigger(CountTrigger.of(3))
        .aggregate(SumAndCount(), uid="running")
        .sink_to(sink, uid="out")
    )

    await env.execute("global")

    assert sink.results == [(3, 3), (15, 6), (36, 9)]


@pytest.mark.parametrize("backend", ["memory", "rocksdb"])
async def test_a_failure_restores_open_windows_and_loses_or_repeats_nothing(
    backend: str, tmp_path: Path
) -> None:
    fail = FailOnce()
    first, rest = events(3_000), events(3_000, start=750.0)
    elements: list[Any] = [*first[:2_000], AwaitCheckpoint(), *first[2_000:], fail, *rest]
    env = event_time_env(batch_size=64)
    env.enable_checkpointing(0.01)
    env.set_restart_strategy(RestartStrategy.fixed_delay(attempts=2, delay=0.0))
    env.set_state_backend(backend, path=tmp_path if backend == "rocksdb" else None)
    sink = CollectSink[Any]()
    source = CollectionSource(elements)  # one subtask: the failure comes after the checkpoint
    (
        env.from_source(source, uid="events", parallelism=1, watermark_strategy=BY_TIME)
        .key_by(lambda event: event[0])
        .window(SlidingEventTimeWindows.of(8.0, 4.0))
        .process(SumPerWindow(), uid="sums")
        .sink_to(sink, uid="out")
    )

    await env.execute("windows")

    assert fail.fired
    windows_of = SlidingEventTimeWindows.of(8.0, 4.0).assign_windows
    assert Counter(sink.results) == plain_windows(first + rest, windows_of)


def windows_job(topic: Topic, sink: CollectSink[Any], parallelism: int) -> StreamEnvironment:
    env = event_time_env(parallelism=parallelism, max_parallelism=16)
    (
        env.from_source(TopicSource(topic), uid="events")
        .map(topic.passed, uid="passed")
        .assign_timestamps_and_watermarks(BY_TIME, uid="event-time")
        .key_by(lambda event: event[0])
        .window(TumblingEventTimeWindows.of(1_000.0))
        .aggregate(SumAndCount(), uid="totals")
        .sink_to(sink, uid="out")
    )
    return env


async def test_open_windows_move_with_their_keys_to_another_parallelism(tmp_path: Path) -> None:
    topic, first, second = Topic(partitions=1), CollectSink[Any](), CollectSink[Any]()
    everything = events(1_200, keys=7)  # all within the first 1,000 s window
    topic.append(everything[:700], partition_of=lambda _: 0)
    async with windows_job(topic, first, parallelism=2).start("before") as job:
        await topic.all_read.wait()
        savepoint = await job.stop_with_savepoint(tmp_path.as_uri())
    topic.append(everything[700:], partition_of=lambda _: 0)
    topic.close()

    await windows_job(topic, second, parallelism=3).execute("after", restore_from=savepoint)

    assert first.results == []  # stopped without draining: no window ended
    per_key: dict[str, list[int]] = defaultdict(list)
    for key, _, value in everything:
        per_key[key].append(value)
    assert sorted(second.results) == sorted((sum(v), len(v)) for v in per_key.values())


async def test_processing_time_windows_fire_on_the_jobs_clock() -> None:
    clock, topic = ManualClock(), Topic(partitions=1)
    env = StreamEnvironment(clock=clock)
    log = WatermarkLog()
    (
        env.from_source(TopicSource(topic), uid="numbers")
        .map(topic.passed)
        .key_by(lambda n: n % 2)
        .window(TumblingProcessingTimeWindows.of(10.0))
        .reduce(lambda a, b: a + b, uid="sums")
        .sink_to(log, uid="out")
    )

    async with env.start("processing-time") as job:
        topic.append(range(6), partition_of=lambda _: 0)
        await topic.all_read.wait()
        clock.advance(9.9)
        assert log.records() == []
        clock.advance(0.1)
        await log.changes.wait_until(lambda: len(log.records()) == 2)
        topic.append(range(6, 8), partition_of=lambda _: 0)  # in [10, 20)
        await topic.all_read.wait()
        clock.advance(10.0)
        await log.changes.wait_until(lambda: len(log.records()) == 4)
        topic.close()
        await job.wait()

    assert sorted(log.records()) == sorted([0 + 2 + 4, 1 + 3 + 5, 6, 7])


def test_event_time_windows_need_records_that_carry_timestamps() -> None:
    env = StreamEnvironment()
    unstamped = env.from_source(CollectionSource(events(10)), uid="raw").key_by(lambda e: e[0])

    with pytest.raises(GraphError, match=r"window 'sums' in event time: the records of 'raw' "):
        unstamped.window(TumblingEventTimeWindows.of(5)).reduce(max, uid="sums")
    with pytest.raises(GraphError, match=r"needs a keyed stream"):
        env.from_source(CollectionSource(events(3)), uid="x").window(TumblingEventTimeWindows.of(5))


def test_a_snapshot_keeps_window_contents_as_they_were_when_it_was_taken() -> None:
    # The aggregate and the process window function change their contents in place; a
    # capture taken before more records arrive must not see them.
    from lockgate.engine import RuntimeContext
    from lockgate.engine.graph.job_graph import OperatorKind, OperatorNode
    from lockgate.engine.runtime.operators.kinds import create_operator
    from lockgate.engine.windows.spec import WindowFunctionKind, WindowSpec

    for kind, function in [
        (WindowFunctionKind.AGGREGATE, SumAndCount()),
        (WindowFunctionKind.PROCESS, SumPerWindow()),
    ]:
        spec = WindowSpec(assigner=TumblingEventTimeWindows.of(10.0), kind=kind, function=function)
        node = OperatorNode(0, "w", "w", OperatorKind.WINDOW, spec, 1, True, lambda e: e[0])
        node.timestamped = True
        operator = create_operator(node, clock=ManualClock())
        operator.open(RuntimeContext("w", 0, 1, 128, ManualClock(), operator.keyed_state))
        operator.process_batch([(1.0, ("a", 1.0, 1)), (2.0, ("a", 2.0, 2))])
        capture = operator.capture(1)
        operator.process_batch([(3.0, ("a", 3.0, 4))])

        snapshot = capture.materialize(128)
        [contents] = [
            g["window-contents"] for g in snapshot.keyed.values() if "window-contents" in g
        ]
        expected = (
            [3, 2] if kind is WindowFunctionKind.AGGREGATE else [("a", 1.0, 1), ("a", 2.0, 2)]
        )
        assert contents == {"a": {(0.0, 10.0): expected}}, kind


def test_a_window_has_no_side_output_but_its_late_data() -> None:
    env = StreamEnvironment()
    windowed = (
        env.from_source(CollectionSource(events(10)), uid="events", watermark_strategy=BY_TIME)
        .key_by(lambda event: event[0])
        .window(TumblingEventTimeWindows.of(5))
        .reduce(max, uid="sums")
    )

    with pytest.raises(
        GraphError,
        match=r"window 'sums' sends nothing to side output.*"
        r"side_output_late_data is None; give it \.side_output_late_data",
    ):
        windowed.side_output(LATE)


async def test_event_time_reaches_a_window_through_filters_and_a_union() -> None:
    env, sink = event_time_env(), CollectSink[Any]()
    odd = env.from_source(
        CollectionSource(events(400)[1::2]), uid="odd", watermark_strategy=BY_TIME
    ).filter(lambda event: event[2] % 3 != 0, uid="no-threes")
    even = env.from_source(
        CollectionSource(events(400)[::2]), uid="even", watermark_strategy=BY_TIME
    )
    (
        odd.union(even)
        .key_by(lambda event: event[0])
        .window(TumblingEventTimeWindows.of(5.0))
        .process(SumPerWindow(), uid="sums")
        .sink_to(sink, uid="out")
    )

    await env.execute("filtered")

    kept = [e for e in events(400)[1::2] if e[2] % 3 != 0] + events(400)[::2]
    assert Counter(sink.results) == plain_windows(
        kept, TumblingEventTimeWindows.of(5.0).assign_windows
    )


async def test_window_all_sees_every_record_in_one_subtask() -> None:
    env, sink = event_time_env(parallelism=3), CollectSink[Any]()
    (
        env.from_source(CollectionSource(events(600)), uid="events", watermark_strategy=BY_TIME)
        .window_all(TumblingEventTimeWindows.of(10.0))
        .process(SumPerWindow(), uid="sums")
        .sink_to(sink, uid="out")
    )

    await env.execute("all")

    everything = [(None, time, value) for _, time, value in events(600)]
    windows_of = TumblingEventTimeWindows.of(10.0).assign_windows
    assert Counter(sink.results) == plain_windows(everything, windows_of)
    assert env.plan().chain_of("sums").parallelism == 1


def test_window_all_runs_in_one_subtask_only() -> None:
    stream = StreamEnvironment().from_source(
        CollectionSource(events(5)), uid="events", watermark_strategy=BY_TIME
    )

    with pytest.raises(GraphError, match=r"window 'sums' runs in one subtask.*parallelism=2"):
        stream.window_all(TumblingEventTimeWindows.of(5)).reduce(max, uid="sums", parallelism=2)


async def test_processing_time_sessions_merge_and_fire_when_the_clock_passes_their_end() -> None:
    clock, topic = ManualClock(), Topic(partitions=1)
    env = StreamEnvironment(clock=clock)
    log = WatermarkLog()
    (
        env.from_source(TopicSource(topic), uid="numbers")
        .map(topic.passed)
        .key_by(lambda n: "all")
        .window(ProcessingTimeSessionWindows.with_gap(5.0))
        .reduce(lambda a, b: a + b, uid="sums")
        .sink_to(log, uid="out")
    )

    async with env.start("sessions") as job:
        topic.append([1], partition_of=lambda _: 0)  # [0, 5)
        await topic.all_read.wait()
        clock.advance(3.0)
        topic.append([2], partition_of=lambda _: 0)  # [3, 8): merges into [0, 8)
        await topic.all_read.wait()
        clock.advance(4.9)  # 7.9: the merged session is still open
        topic.append([4], partition_of=lambda _: 0)  # [7.9, 12.9): merges into [0, 12.9)
        await topic.all_read.wait()
        clock.advance(5.0)  # 12.9: it ends
        await log.changes.wait_until(lambda: len(log.records()) == 1)
        topic.close()
        await job.wait()

    assert log.records() == [1 + 2 + 4]
