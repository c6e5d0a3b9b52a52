"""Simulation fidelity: the same I/O-bound job run in real time and simulated, compared.

``ArrivalSource(Poisson(200 ev/s))`` -> ``async_map(Service(Exponential(10 ms mean)))`` ->
``ServiceSink`` writing 5 ms per batch (a chain of its own), for ``--seconds`` (30): once in
real time (``Simulation.run_in_real_time``: asyncio's loop, the system clock, the models
sleeping for real) and once on virtual time (``Simulation.run``), same seed, same models,
same report. The goal (issue 16): throughput within 5%, in-engine latency p50 and p99
within 10%. Prints both runs' figures, their ratios (simulated / real), and the verdicts.
The real run is the baseline, measured in the same process; on a loaded machine its
timers fire late, which the ratios show.
"""

from __future__ import annotations

import argparse
import time

from lockgate.engine import StreamEnvironment
from lockgate.engine.simulation import (
    ArrivalSource,
    Constant,
    Exponential,
    Poisson,
    Service,
    ServiceSink,
    Simulation,
    SimulationReport,
)

GOALS = {"throughput": 0.05, "latency p50": 0.10, "latency p99": 0.10}


def io_bound(*, rate: float, capacity: int) -> StreamEnvironment:
    env = StreamEnvironment()
    (
        env.from_source(ArrivalSource(Poisson(rate)), uid="events")
        .async_map(Service(Exponential(100.0)), capacity=capacity, uid="call")
        .sink_to(ServiceSink(Constant(0.005), per="batch"), uid="store")
        .disable_chaining()
    )
    return env


def figures(report: SimulationReport) -> dict[str, float]:
    store = report.sink("store")
    latency = store.in_engine_latency
    assert latency.p50 is not None and latency.p99 is not None
    return {"throughput": store.throughput, "latency p50": latency.p50, "latency p99": latency.p99}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=30.0, help="real and virtual seconds")
    parser.add_argument("--rate", type=float, default=200.0, help="events per second")
    parser.add_argument("--capacity", type=int, default=100, help="the async_map's capacity")
    parser.add_argument("--seed", type=int, default=7)
    options = parser.parse_args()

    def simulation() -> Simulation:
        env = io_bound(rate=options.rate, capacity=options.capacity)
        return Simulation(env, seed=options.seed, until=options.seconds)

    wall = time.perf_counter()
    simulated = figures(simulation().run("fidelity"))
    simulated_wall = time.perf_counter() - wall
    wall = time.perf_counter()
    real = figures(simulation().run_in_real_time("fidelity"))
    real_wall = time.perf_counter() - wall

    print(
        f"{options.seconds:g} s of the job: simulated in {simulated_wall:.1f} s of wall time, "
        f"real in {real_wall:.1f} s"
    )
    print(f"{'':14}{'real':>12}{'simulated':>12}{'sim/real':>10}  goal")
    for name, goal in GOALS.items():
        ratio = simulated[name] / real[name]
        verdict = "met" if abs(ratio - 1.0) <= goal else "NOT met"
        unit = "/s" if name == "throughput" else " ms"
        scale = 1.0 if name == "throughput" else 1000.0
        print(
            f"{name:14}{real[name] * scale:>10.2f}{unit:2}{simulated[name] * scale:>10.2f}{unit:2}"
            f"{ratio:>10.3f}  within {goal:.0%}: {verdict}"
        )


if __name__ == "__main__":
    main()
