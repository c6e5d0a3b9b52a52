"""A scenario's job in lockgate: the same records, watermarks, steps and job as Flink's side.

Watermarks advance per record as in Flink's run: one subtask everywhere and a punctuated
generator (``PerRecord``, Flink's side has the same) that emits after every record that
advances it (the bounded-out-of-orderness rule), at the default batch size: the watermark
leaves right after its record whatever the batch. Each output stream ends in a
``WatermarkLog``, which sees records and watermarks in arrival order, as Flink's probe does.
"""

from __future__ import annotations

import math
from typing import Any

from lockgate.connectors import CollectionSource
from lockgate.engine import (
    CountTrigger,
    DataStream,
    EventTimeSessionWindows,
    EventTimeTrigger,
    GlobalWindows,
    OutputTag,
    PurgingTrigger,
    SlidingEventTimeWindows,
    StreamEnvironment,
    TumblingEventTimeWindows,
    Watermark,
    WatermarkGenerator,
    WatermarkOutput,
    WatermarkStrategy,
)
from tests.engine.end_to_end.flink import functions as fn
from tests.engine.end_to_end.flink.functions import Event, feature, flink_time, render
from tests.engine.end_to_end.flink.splits import ScriptedSplitsSource
from tests.engine.jobs.event_time import WatermarkLog

LATE = OutputTag[Event]("late")


async def run_in_lockgate(
    job: dict[str, Any], *, timestamps: bool = False
) -> dict[str, list[list[Any]]]:
    """Run a scenario's job; return each output stream as ``[watermark, timestamp, output]``.

    The timestamp is ``None`` unless ``timestamps``: then each output passes a keyed process
    function that reads its timestamp (``ctx.timestamp()``) on the way to its log.
    """
    env = StreamEnvironment(parallelism=1)
    logs: dict[str, WatermarkLog] = {}
    stream = source(env, job)
    for step in job.get("steps", []):
        stream = apply_step(stream, step)
    build_job(stream, job["job"], Probes(logs, timestamps=timestamps))
    await env.execute("scenario")
    return {name: entries(log, timestamps=timestamps) for name, log in logs.items()}


def entries(log: WatermarkLog, *, timestamps: bool) -> list[list[Any]]:
    """Each output of the log with the watermark that came before it (and its timestamp)."""
    watermark: float | None = None
    found = []
    for item in log.logs.get(0, []):
        if isinstance(item, Watermark):
            watermark = item.timestamp
        elif timestamps:
            found.append([flink_time(watermark), flink_time(item[0]), render(item[1])])
        else:
            found.append([flink_time(watermark), None, render(item)])
    return found


class PerRecord(WatermarkGenerator[Event]):
    """Punctuated: after each record, just below the newest time seen minus the delay."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.newest = -math.inf

    def on_event(self, event: Event, timestamp: float, output: WatermarkOutput) -> None:
        if timestamp > self.newest:
            self.newest = timestamp
            output.emit_watermark(Watermark(math.nextafter(timestamp - self.delay, -math.inf)))


def source(env: StreamEnvironment, job: dict[str, Any]) -> DataStream[Event]:
    records = [Event(r[0], float(r[1]), r[2], r[3] if len(r) > 3 else None) for r in job["records"]]
    delay = float(job["watermarks"]["out_of_orderness"])
    strategy = WatermarkStrategy.for_generator(lambda context: PerRecord(delay))
    strategy = strategy.with_timestamp_assigner(lambda e: e.time)
    if "source" in job:
        splits = ScriptedSplitsSource(records, job["source"]["splits"], job["source"]["idle"])
        return env.from_source(splits, uid="records", watermark_strategy=strategy)
    return env.from_source(CollectionSource(records), uid="records", watermark_strategy=strategy)


def apply_step(stream: DataStream[Event], step: dict[str, Any]) -> DataStream[Event]:
    if "map" in step:
        return stream.map(fn.MAPS[step["map"]])
    if "window" in step:  # its reduced events go on, stamped with their windows' max timestamps
        return configured(stream, step["window"]).reduce(fn.add_up)
    branches = []
    for tag, map_name in step["union"].items():
        branch = tagged(stream, tag)
        branches.append(branch if map_name is None else branch.map(fn.MAPS[map_name]))
    return branches[0].union(*branches[1:])


def tagged(stream: DataStream[Event], tag: str) -> DataStream[Event]:
    return stream.filter(lambda e: e.tag == tag)


class Probes:
    """Ends each output stream in a log of its records and watermarks.

    With ``timestamps``, a process function before the log reads each output's timestamp: on
    one key, since ``process`` runs on a keyed stream (Flink's probe is a ``ProcessFunction``
    on the stream as it is; at parallelism 1 the two see the same records and watermarks).
    """

    def __init__(self, logs: dict[str, WatermarkLog], *, timestamps: bool) -> None:
        self.logs = logs
        self.timestamps = timestamps

    def add(self, stream: DataStream[Any], name: str) -> None:
        self.logs[name] = WatermarkLog()
        if self.timestamps:
            keyed = stream.key_by(lambda _: name)
            stream = keyed.process(fn.WithTimestamp(), uid=f"stamp-{name}")
        stream.sink_to(self.logs[name], uid=f"probe-{name}")


def build_job(stream: DataStream[Event], job: dict[str, Any], probes: Probes) -> None:
    if "window" in job:
        build_window(stream, job["window"], probes)
    elif "timers" in job:
        timers = fn.Timers(job["timers"]["offsets"], job["timers"].get("follow_ups", []))
        probes.add(stream.key_by(lambda e: e.key).process(timers, uid="timers"), "main")
    elif "join" in job:
        build_join(stream, job["join"], probes)
    else:
        build_interval_join(stream, job["interval_join"], probes)


def assigner(spec: dict[str, Any]) -> Any:
    kind = spec["kind"]
    if kind == "tumbling":
        return TumblingEventTimeWindows.of(spec["size"], spec.get("offset", 0))
    if kind == "sliding":
        return SlidingEventTimeWindows.of(spec["size"], spec["slide"], spec.get("offset", 0))
    if kind == "session":
        return EventTimeSessionWindows.with_gap(spec["gap"])
    assert kind == "global", spec
    return GlobalWindows.create()


def trigger(spec: dict[str, Any]) -> Any:
    if spec["kind"] in ("count", "event_time"):
        base = CountTrigger.of(spec["count"]) if spec["kind"] == "count" else EventTimeTrigger()
        return PurgingTrigger.of(base) if spec.get("purging") else base
    return fn.every_n_and_end(spec["count"], purge=spec["purge"])


def evictor(spec: dict[str, Any]) -> Any:
    after = spec.get("after", False)
    if spec["kind"] == "count":
        return feature("CountEvictor").of(spec["count"], do_evict_after=after)
    if spec["kind"] == "time":
        return feature("TimeEvictor").of(spec["size"], do_evict_after=after)
    return feature("DeltaEvictor").of(spec["threshold"], fn.value_distance, do_evict_after=after)


def windowed_stream(stream: DataStream[Event], spec: dict[str, Any]) -> Any:
    shape = spec["assigner"]
    if not spec.get("keyed", True):
        return stream.window_all(assigner(shape))
    keyed = stream.key_by(lambda e: e.key)
    if shape["kind"] == "count":
        if "slide" in shape:
            return keyed.count_window(shape["size"], shape["slide"])
        return keyed.count_window(shape["size"])
    return keyed.window(assigner(shape))


def build_window(stream: DataStream[Event], spec: dict[str, Any], probes: Probes) -> None:
    out = window_function(configured(stream, spec), spec["function"])
    probes.add(out, "main")
    if spec.get("late_output"):
        probes.add(out.side_output(LATE), "late")


def configured(stream: DataStream[Event], spec: dict[str, Any]) -> Any:
    """The windowed stream with the spec's trigger, evictor, lateness and late output."""
    windowed = windowed_stream(stream, spec)
    if "trigger" in spec:
        windowed = windowed.trigger(trigger(spec["trigger"]))
    if "evictor" in spec:
        windowed = windowed.evictor(evictor(spec["evictor"]))
    if "allowed_lateness" in spec:
        windowed = windowed.allowed_lateness(spec["allowed_lateness"])
    if spec.get("late_output"):
        windowed = windowed.side_output_late_data(LATE)
    return windowed


def window_function(windowed: Any, style: str) -> DataStream[Any]:
    if style == "reduce":
        return windowed.reduce(fn.add_up, uid="window")  # type: ignore[no-any-return]
    if style == "aggregate":
        return windowed.aggregate(fn.Stats(), uid="window")  # type: ignore[no-any-return]
    if style == "process":
        return windowed.process(fn.Describe(), uid="window")  # type: ignore[no-any-return]
    if style == "reduce+process":
        return windowed.reduce(fn.add_up, fn.DescribeReduced(), uid="window")  # type: ignore[no-any-return]
    assert style == "aggregate+process", style
    return windowed.aggregate(fn.Stats(), fn.DescribeStats(), uid="window")  # type: ignore[no-any-return]


def build_join(stream: DataStream[Event], spec: dict[str, Any], probes: Probes) -> None:
    left, right = tagged(stream, "left"), tagged(stream, "right")
    shape = assigner(spec["assigner"])
    by_key = lambda e: e.key  # noqa: E731 - one selector for both sides
    if spec["kind"] == "join":
        joined = left.join(right).where(by_key).equal_to(by_key).window(shape).apply(fn.pair)
    else:
        joined = left.co_group(right).where(by_key).equal_to(by_key).window(shape).apply(fn.groups)
    probes.add(joined, "main")


def build_interval_join(stream: DataStream[Event], spec: dict[str, Any], probes: Probes) -> None:
    left = tagged(stream, "left").key_by(lambda e: e.key)
    right = tagged(stream, "right").key_by(lambda e: e.key)
    joined = left.interval_join(right).between(spec["lower"], spec["upper"])
    if spec.get("lower_exclusive"):
        joined = joined.lower_bound_exclusive()
    if spec.get("upper_exclusive"):
        joined = joined.upper_bound_exclusive()
    probes.add(joined.process(fn.IntervalPair()), "main")
