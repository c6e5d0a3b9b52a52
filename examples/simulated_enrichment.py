"""An enrichment job built from a simulation scenario's models: ``lockgate simulate``'s example.

``simulated_enrichment.toml`` beside this file describes the world (arrivals with hot keys,
a remote service, a store with an outage), a killed attempt, and the run; ``build`` wires
those models into the job. Run it with the command:

    lockgate simulate examples/simulated_enrichment.toml --html report.html --json series.json

or as a script, which does the same and writes nothing but the table.
"""

from __future__ import annotations

import sys
from pathlib import Path

from lockgate.engine import AsyncRetry, RestartStrategy, StreamEnvironment
from lockgate.engine.simulation import ArrivalSource, CpuCost, Service, ServiceSink
from lockgate.engine.simulation.cli import simulate_main

SCENARIO = Path(__file__).with_suffix(".toml")


def build(
    *,
    events: ArrivalSource,
    enrich: Service,
    store: ServiceSink,
    capacity: int = 32,
    parse_cost: float = 0.0005,
    checkpoint_interval: float = 5.0,
) -> StreamEnvironment:
    """events -> parse (a CPU cost) -> enrich (a remote call, retried) -> store, each in its
    own chain, so that the report shows every channel between them."""
    env = StreamEnvironment(batch_size=64, channel_capacity=256)
    env.enable_checkpointing(checkpoint_interval)
    env.set_restart_strategy(RestartStrategy.fixed_delay(attempts=3, delay=1.0))
    (
        env.from_source(events, uid="events")
        .map(CpuCost(parse_cost), uid="parse")
        .disable_chaining()
        .async_map(enrich, capacity=capacity, retry=AsyncRetry(attempts=5, seed=1), uid="enrich")
        .disable_chaining()
        .sink_to(store, uid="store")
        .disable_chaining()
    )
    return env


if __name__ == "__main__":
    sys.exit(simulate_main([str(SCENARIO), *sys.argv[1:]]))
