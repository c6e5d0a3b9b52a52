"""lockgate.engine.simulation: the real engine on virtual time, to predict backpressure.

``Simulation(env, seed=..., until=..., report_every=...).run(job_name)`` runs a job of
``env`` unchanged on a ``VirtualTimeLoop``, whose clock jumps to the next timer whenever
every task waits, and returns a ``SimulationReport``: per subtask and per second busy,
backpressured and idle time, traffic and channel fill; per sink in-engine latency and
event-time lag; the bottleneck; as a table and JSON. Models stand in for the world:
``ArrivalSource`` (arrival processes ``ConstantRate``, ``Poisson``, ``RateSchedule``,
``OnOff`` bursts, the ``Replay`` of a recorded trace; keys ``UniformKeys``, ``ZipfKeys``),
``ServiceSink`` and ``Service`` (service times ``Constant``, ``Exponential``,
``LogNormal``, ``Empirical``; concurrency limits, rate limits, error rates and
``Outage``s, failing with ``ServiceError``s) and ``CpuCost``, all seeded from the
simulation's one seed through ``ModelContext``. Faults come at given virtual times
(``KillAttempt``, ``FailCheckpoint``, ``SlowStorage``); the report's ``FaultReport``s
say how long the job took to recover and to catch up. A ``Sweep`` runs a scenario over a
grid of parameters and answers capacity questions (``p99_latency_below``,
``sustainable``, ``recovers_within``) with the smallest or largest setting that holds.
"""

from lockgate.engine.simulation.bottleneck import Bottleneck
from lockgate.engine.simulation.capacity import (
    Criterion,
    p99_latency_below,
    recovers_within,
    sustainable,
)
from lockgate.engine.simulation.clock import VirtualClock
from lockgate.engine.simulation.exactly_once import (
    CrashScenario,
    ExactlyOnceSearch,
    SearchResult,
    SeedOutcome,
)
from lockgate.engine.simulation.faults.fault import FailCheckpoint, Fault, KillAttempt, SlowStorage
from lockgate.engine.simulation.faults.recovery import FaultReport
from lockgate.engine.simulation.faults.storage import ModelledStorage
from lockgate.engine.simulation.loop import VirtualTimeLoop
from lockgate.engine.simulation.models.arrival import Arrival
from lockgate.engine.simulation.models.arrival_source import ArrivalSource
from lockgate.engine.simulation.models.arrivals import ArrivalProcess, ConstantRate, Poisson
from lockgate.engine.simulation.models.availability import Availability, Outage
from lockgate.engine.simulation.models.cpu_cost import CpuCost
from lockgate.engine.simulation.models.distributions import (
    Constant,
    Distribution,
    Empirical,
    Exponential,
    LogNormal,
)
from lockgate.engine.simulation.models.keys import KeyDistribution, UniformKeys, ZipfKeys
from lockgate.engine.simulation.models.model import Model, ModelContext
from lockgate.engine.simulation.models.replay import Replay
from lockgate.engine.simulation.models.schedules import OnOff, RateSchedule
from lockgate.engine.simulation.models.service import Service
from lockgate.engine.simulation.models.service_errors import (
    RateLimited,
    ServiceError,
    ServiceUnavailable,
)
from lockgate.engine.simulation.models.service_sink import ServiceSink
from lockgate.engine.simulation.report import SimulationReport
from lockgate.engine.simulation.sections import (
    AsyncIoReport,
    CheckpointReport,
    LatencySummary,
    SinkReport,
    SubtaskReport,
)
from lockgate.engine.simulation.simulation import Simulation
from lockgate.engine.simulation.sweep import CapacityAnswer, Sweep, SweepResult, SweepRun

__all__ = [
    "Arrival",
    "ArrivalProcess",
    "ArrivalSource",
    "AsyncIoReport",
    "Availability",
    "Bottleneck",
    "CapacityAnswer",
    "CheckpointReport",
    "Constant",
    "ConstantRate",
    "CpuCost",
    "CrashScenario",
    "Criterion",
    "Distribution",
    "Empirical",
    "ExactlyOnceSearch",
    "Exponential",
    "FailCheckpoint",
    "Fault",
    "FaultReport",
    "KeyDistribution",
    "KillAttempt",
    "LatencySummary",
    "LogNormal",
    "Model",
    "ModelContext",
    "ModelledStorage",
    "OnOff",
    "Outage",
    "Poisson",
    "RateLimited",
    "RateSchedule",
    "Replay",
    "SearchResult",
    "SeedOutcome",
    "Service",
    "ServiceError",
    "ServiceSink",
    "ServiceUnavailable",
    "Simulation",
    "SimulationReport",
    "SinkReport",
    "SlowStorage",
    "SubtaskReport",
    "Sweep",
    "SweepResult",
    "SweepRun",
    "UniformKeys",
    "VirtualClock",
    "VirtualTimeLoop",
    "ZipfKeys",
    "p99_latency_below",
    "recovers_within",
    "sustainable",
]
