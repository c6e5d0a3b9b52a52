"""Simulation speed: virtual seconds per wall second for the issue's 4-operator job.

One virtual hour (``--until``) of ``ArrivalSource(ConstantRate(1,000 ev/s))`` ->
``map(CpuCost(50 µs))`` -> ``async_map(Service(LogNormal(20 ms)), capacity=50)`` ->
``ServiceSink(800 ev/s)``, each operator in a chain of its own (``disable_chaining``) so
every channel is measured. The sink is slower than the source, so the job runs
backpressured, as the scenarios a simulation is for do. The source admits what came every
``--tick`` seconds (10 ms). The goal (issue 16): one virtual hour in at most 60 s of wall
time on this machine. Prints the wall and CPU time, virtual seconds per wall second, the
records committed, and the report's table.
"""

from __future__ import annotations

import argparse
import time

from lockgate.engine import StreamEnvironment
from lockgate.engine.simulation import (
    ArrivalSource,
    Constant,
    ConstantRate,
    CpuCost,
    LogNormal,
    Service,
    ServiceSink,
    Simulation,
)

GOAL = 60.0  # wall seconds for one virtual hour


def four_operators(*, tick: float) -> StreamEnvironment:
    env = StreamEnvironment()
    (
        env.from_source(ArrivalSource(ConstantRate(1_000.0), tick=tick), uid="events")
        .map(CpuCost(50e-6), uid="parse")
        .disable_chaining()
        .async_map(Service(LogNormal(0.020)), capacity=50, uid="enrich")
        .disable_chaining()
        .sink_to(ServiceSink(Constant(1 / 800)), uid="store")
        .disable_chaining()
    )
    return env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--until", type=float, default=3_600.0, help="virtual seconds")
    parser.add_argument("--tick", type=float, default=0.01, help="the source's tick, seconds")
    parser.add_argument("--seed", type=int, default=7)
    options = parser.parse_args()

    simulation = Simulation(
        four_operators(tick=options.tick), seed=options.seed, until=options.until
    )
    wall, cpu = time.perf_counter(), time.process_time()
    report = simulation.run("four-operators")
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu

    scaled = wall * 3_600.0 / options.until
    verdict = "met" if scaled <= GOAL else "NOT met"
    print(f"{options.until:g} virtual s in {wall:.1f} s wall ({cpu:.1f} s CPU)")
    print(f"{options.until / wall:,.0f} virtual seconds per wall second")
    print(f"one virtual hour in {scaled:.1f} s of wall time: goal <= {GOAL:.0f} s {verdict}")
    print(f"{report.sink('store').records:,} records committed")
    print()
    print(report.to_table())


if __name__ == "__main__":
    main()
