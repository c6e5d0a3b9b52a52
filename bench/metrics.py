"""Metrics: what watching a running job costs, and what recording one latency costs.

(a) The keyed running sum of ``keyed_sum.py`` into a counting sink, unwatched, against the
same job while a task on its event loop reads ``job.metrics()`` and
``prometheus_text([job])`` every 100 ms (a dashboard and a scraper polling at once), in the
same process, rounds interleaved; the ratios are printed by wall clock and by the process's
CPU time (steadier on a shared machine, and what polling costs is CPU), with the goal
(watched at least 0.95 of unwatched by CPU time, issue 15). The counters themselves are
always on: a subtask counts records per batch and reads its clock once per wait, so there
is no "collection off" to compare with; what watching adds is the reading. (b) Nanoseconds
per duration recorded by ``LatencyHistogram`` (the DDSketch every ``async_map`` call
records into) against appending it to a list, the cheapest possible record. Run with
``--help`` for flags. (c) What one read costs: ``job.metrics()`` and ``prometheus_text``
timed on a running keyed sum, as a share of the 100 ms between two polls.
"""

from __future__ import annotations

import gc
import math
import sys
import time
from collections.abc import Callable
from typing import Any

import anyio
import keyed_sum
from harness import COUNTING, ResultMismatch, best_seconds, freeze_input, parser

from lockgate.engine import JobClient, StreamEnvironment
from lockgate.engine.runtime.metrics.latency import LatencyHistogram
from lockgate.engine.web.prometheus import prometheus_text

POLL_EVERY = 0.1  # seconds between two reads of the metrics, as the issue asks
GOAL = 0.95  # watched throughput at least 95% of unwatched


async def _poll(job: JobClient, reads: list[int]) -> None:
    while True:
        await anyio.sleep(POLL_EVERY)
        job.metrics()
        prometheus_text([job])
        reads[0] += 1


def run_keyed_sum(parallelism: int, events: int, *, watched: bool, reads: list[int]) -> None:
    """Run the keyed sum once; with ``watched``, poll its metrics meanwhile."""
    workload = keyed_sum.workload(events)

    async def main() -> None:
        env = StreamEnvironment(parallelism=parallelism)
        sink = COUNTING.create(None)
        workload.build(env, sink)
        async with env.start(workload.title) as job, anyio.create_task_group() as group:
            if watched:
                group.start_soon(_poll, job, reads)
            await job.wait()
            group.cancel_scope.cancel()
        if COUNTING.count(sink) != events:
            raise ResultMismatch(f"the sink got {COUNTING.count(sink):,} of {events:,} records")

    anyio.run(main)


def timed(action: Callable[[], object]) -> tuple[float, float]:
    """Wall and CPU seconds of one run of ``action`` (CPU: this process's, all threads)."""
    gc.collect()
    wall, cpu = time.perf_counter(), time.process_time()
    action()
    return time.perf_counter() - wall, time.process_time() - cpu


def measure_watching(parallelisms: list[int], events: int, repeat: int) -> None:
    reads = [0]
    contenders: dict[tuple[int, bool], Callable[[], object]] = {}
    for parallelism in parallelisms:
        for watched in (False, True):
            contenders[parallelism, watched] = lambda p=parallelism, w=watched: run_keyed_sum(
                p, events, watched=w, reads=reads
            )
    for action in contenders.values():
        action()  # warm up, and check the counts once
    reads[0] = 0
    best = dict.fromkeys(contenders, (math.inf, math.inf))
    for _ in range(repeat):  # rounds interleave the contenders, as harness.best_seconds does
        for name, action in contenders.items():
            wall, cpu = timed(action)
            best[name] = (min(best[name][0], wall), min(best[name][1], cpu))
    print(f"(a) keyed running sum, {events:,} events, counting sink, best of {repeat}")
    for parallelism in parallelisms:
        (plain, plain_cpu), (watched, watched_cpu) = (
            best[parallelism, False],
            best[parallelism, True],
        )
        print(
            f"  parallelism={parallelism} unwatched          {events / plain:>10,.0f} ev/s "
            f"({events / plain_cpu:>10,.0f} per CPU second)"
        )
        print(
            f"  parallelism={parallelism} polled every {POLL_EVERY * 1000:.0f} ms "
            f"{events / watched:>10,.0f} ev/s ({events / watched_cpu:>10,.0f} per CPU second)"
            f"   {plain / watched:.3f} x unwatched by wall clock, "
            f"{plain_cpu / watched_cpu:.3f} x by CPU time"
        )
        verdict = "met" if plain_cpu / watched_cpu >= GOAL else "NOT met"
        print(f"  goal at parallelism={parallelism}: at least {GOAL:.2f} x by CPU time: {verdict}")
    print(f"  reads of job.metrics() + prometheus_text during the timed runs: {reads[0]:,}")


def measure_one_read(parallelisms: list[int], events: int, reads: int = 200) -> None:
    """Time ``reads`` calls of each kind of read on a keyed sum that is running."""
    print(f"(c) one read of a running keyed sum, mean of {reads}")
    for parallelism in parallelisms:
        metrics, text = anyio.run(_time_reads, parallelism, events, reads)
        share = (metrics + text) / POLL_EVERY * 100
        print(
            f"  parallelism={parallelism} job.metrics() {metrics * 1e6:>6.0f} µs, "
            f"prometheus_text {text * 1e6:>6.0f} µs: {share:.2f}% of each "
            f"{POLL_EVERY * 1000:.0f} ms"
        )


async def _time_reads(parallelism: int, events: int, reads: int) -> tuple[float, float]:
    workload = keyed_sum.workload(events)
    env = StreamEnvironment(parallelism=parallelism)
    workload.build(env, COUNTING.create(None))
    async with env.start(workload.title) as job:
        await anyio.sleep(0.2)  # every subtask deployed and running
        started = time.perf_counter()
        for _ in range(reads):
            job.metrics()
        metrics = (time.perf_counter() - started) / reads
        started = time.perf_counter()
        for _ in range(reads):
            prometheus_text([job])
        text = (time.perf_counter() - started) / reads
        job.cancel()
    return metrics, text


def measure_recording(durations: int, repeat: int) -> None:
    values = [0.0005 + (i % 1000) * 1e-5 for i in range(durations)]

    def to_list() -> Any:
        kept: list[float] = []
        append = kept.append
        for value in values:
            append(value)
        return kept

    def to_sketch() -> Any:
        histogram = LatencyHistogram()
        record = histogram.record
        for value in values:
            record(value)
        return histogram

    best = best_seconds(repeat, {"list": to_list, "sketch": to_sketch})
    per = {name: seconds / durations * 1e9 for name, seconds in best.items()}
    print(f"(b) recording {durations:,} latencies, best of {repeat}")
    print(f"  list.append (floor)        {per['list']:>8.1f} ns per duration")
    print(
        f"  LatencyHistogram.record    {per['sketch']:>8.1f} ns per duration   "
        f"{per['sketch'] / per['list']:.1f} x floor, {per['sketch'] - per['list']:.0f} ns more"
    )


def main() -> int:
    flags = parser(
        __doc__.splitlines()[0],
        size_flag="--events",
        size_default=2_000_000,
        size_help="input events of the keyed sum",
        parallelisms=(1,),
    )
    flags.add_argument("--durations", type=int, default=1_000_000, help="latencies recorded")
    args = flags.parse_args()
    freeze_input()
    started = time.perf_counter()
    try:
        measure_watching(args.parallelism, args.events, args.repeat)
    except ResultMismatch as mismatch:
        print(f"wrong result: {mismatch}", file=sys.stderr)
        return 1
    measure_recording(args.durations, args.repeat)
    measure_one_read(args.parallelism, args.events)
    print(f"({time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
