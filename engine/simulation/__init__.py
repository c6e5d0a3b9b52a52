"""lockgate.engine.simulation: the real engine on virtual time, to predict backpressure.

``VirtualTimeLoop`` is asyncio's event loop with a virtual clock that jumps to the next
timer whenever every task waits; ``VirtualClock`` is the job's clock reading it. Models
stand in for the world: ``ArrivalSource`` (arrival processes ``ConstantRate``,
``Poisson``; keys ``UniformKeys``, ``ZipfKeys``), ``ServiceSink`` and ``Service`` (service
times ``Constant``, ``Exponential``, ``LogNormal``, with concurrency limits) and
``CpuCost``, all seeded from one seed through ``ModelContext``.
"""

from lockgate.engine.simulation.arrival import Arrival
from lockgate.engine.simulation.arrival_source import ArrivalSource
from lockgate.engine.simulation.arrivals import ArrivalProcess, ConstantRate, Poisson
from lockgate.engine.simulation.clock import VirtualClock
from lockgate.engine.simulation.cpu_cost import CpuCost
from lockgate.engine.simulation.distributions import Constant, Distribution, Exponential, LogNormal
from lockgate.engine.simulation.keys import KeyDistribution, UniformKeys, ZipfKeys
from lockgate.engine.simulation.loop import VirtualTimeLoop
from lockgate.engine.simulation.model import Model, ModelContext
from lockgate.engine.simulation.service import Service
from lockgate.engine.simulation.service_sink import ServiceSink

__all__ = [
    "Arrival",
    "ArrivalProcess",
    "ArrivalSource",
    "Constant",
    "ConstantRate",
    "CpuCost",
    "Distribution",
    "Exponential",
    "KeyDistribution",
    "LogNormal",
    "Model",
    "ModelContext",
    "Poisson",
    "Service",
    "ServiceSink",
    "UniformKeys",
    "VirtualClock",
    "VirtualTimeLoop",
    "ZipfKeys",
]
