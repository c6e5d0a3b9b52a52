"""Simulation: the real engine on virtual time, with the world stood in for by models."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Iterator, Sequence
from typing import Any, Literal, TypeAlias

import anyio
import anyio.to_thread

from lockgate.engine.api.client import JobClient
from lockgate.engine.api.environment import StreamEnvironment
from lockgate.engine.errors import SimulationDeadlock
from lockgate.engine.graph.job_graph import OperatorKind
from lockgate.engine.graph.planning import ExecutionPlan
from lockgate.engine.runtime.job.event_subscription import EventSubscription
from lockgate.engine.simulation.clock import VirtualClock
from lockgate.engine.simulation.faults.fault import Fault, InjectedFault
from lockgate.engine.simulation.faults.injector import FaultInjector
from lockgate.engine.simulation.loop import VirtualTimeLoop
from lockgate.engine.simulation.models.model import Model, ModelContext
from lockgate.engine.simulation.models.service import Service
from lockgate.engine.simulation.models.service_sink import ServiceSink
from lockgate.engine.simulation.recorder import Recorder
from lockgate.engine.simulation.report import SimulationReport
from lockgate.engine.simulation.series import ReportHeader, build_report
from lockgate.engine.time.clock import SystemClock

__all__ = ["Backend", "Simulation"]

Backend: TypeAlias = Literal["asyncio", "trio"]
"""The async library a simulation runs the job on."""


class Simulation:
    """Runs a job of ``env``, unchanged, on virtual time, and reports what happened.

    ``run(job_name)`` starts the job on a ``VirtualTimeLoop`` with the environment's clock
    reading the loop's virtual time, binds every model of the job (``ArrivalSource``,
    ``ServiceSink``, ``Service``, ``CpuCost``) to the one ``seed``, samples the job's live
    metrics every ``report_every`` virtual seconds, and stops the job after ``until``
    virtual seconds (or when it ends first). Virtual time jumps to the next timer whenever
    every task waits, so an hour of a backpressured job takes seconds; the same job, seed
    and options give the same report, byte for byte. A job that fails makes ``run`` raise
    its error, as ``env.execute`` would.

    ``faults`` are injected at their virtual times: ``KillAttempt`` kills the running
    attempt (the restart strategy restores the next one from the latest checkpoint),
    ``FailCheckpoint`` makes the storage refuse a checkpoint, ``SlowStorage`` gives each
    checkpoint write a modelled time (these two keep the run's checkpoints in a
    ``ModelledStorage`` in memory). The report lists each fault, and each outage of the
    models, with the job's recovery and catch-up times.

    ``run`` starts an event loop of its own: call it where no loop runs (a script, a
    synchronous test), not from async code. ``backend="trio"`` runs the job on trio (an
    extra install) with a ``TrioVirtualClock``, by the same rules, trio's scheduler seeded
    from ``seed``; there a job whose threads work (checkpoints) may order the events of
    one virtual instant differently from run to run, as trio takes thread results back in
    real time.
    """

    def __init__(
        self,
        env: StreamEnvironment,
        *,
        seed: int = 0,
        until: float,
        report_every: float = 1.0,
        backend: Backend = "asyncio",
        faults: Sequence[Fault] = (),
    ) -> None:
        if not (until > 0 and math.isfinite(until)):
            raise ValueError(f"until must be a finite number of virtual seconds; got {until}")
        if not (0 < report_every <= until):
            raise ValueError(
                f"report_every must be more than 0 and at most until ({until} s); "
                f"got {report_every}"
            )
        if backend not in ("asyncio", "trio"):
            raise ValueError(f"backend must be 'asyncio' or 'trio'; got {backend!r}")
        self.env = env
        self.seed = seed
        self.until = until
        self.report_every = report_every
        self.backend = backend
        self.faults = tuple(faults)
        self._injector = FaultInjector(self.faults)

    def run(self, job_name: str = "simulation") -> SimulationReport:
        """Run job ``job_name`` for ``until`` virtual seconds and return its report."""
        if self.backend == "trio":
            return self._run_on_trio(job_name)
        with asyncio.Runner(loop_factory=VirtualTimeLoop) as runner:
            return runner.run(self._run_on_asyncio(job_name))

    def run_in_real_time(self, job_name: str = "simulation") -> SimulationReport:
        """Run the same job, models, faults and report in real time, for ``until`` seconds.

        For checking the simulation against the world it stands for
        (``bench/simulation_fidelity.py``): the job runs on asyncio's own loop and the
        system's clock (read from 0 at the start), models sleep for real, and the report
        is built as ``run``'s is. A declared ``CpuCost`` costs nothing more here: the CPU
        the functions use is real. It takes ``until`` seconds of wall time.
        """
        with asyncio.Runner() as runner:
            return runner.run(self._simulate(job_name, _real_time_clock()))

    async def _run_on_asyncio(self, job_name: str) -> SimulationReport:
        loop = asyncio.get_running_loop()
        assert isinstance(loop, VirtualTimeLoop), "run() starts its own VirtualTimeLoop"
        loop.limit_threads(anyio.to_thread.current_default_thread_limiter())
        return await self._simulate(job_name, VirtualClock(loop.time, asyncio.sleep, loop.spend))

    def _run_on_trio(self, job_name: str) -> SimulationReport:
        import trio  # trio is not a dependency: imported only when asked for

        from lockgate.engine.simulation.trio_clock import TrioVirtualClock, seed_scheduler

        clock = TrioVirtualClock()
        deadlocks: list[str] = []

        async def simulate() -> SimulationReport | None:
            clock.limit_threads(anyio.to_thread.current_default_thread_limiter())
            with trio.CancelScope() as scope:

                def deadlocked(message: str) -> None:
                    deadlocks.append(message)
                    scope.cancel()

                clock.on_deadlock(deadlocked)
                virtual = VirtualClock(trio.current_time, trio.sleep, clock.spend)
                try:
                    return await self._simulate(job_name, virtual)
                finally:
                    clock.on_deadlock(None)
            return None

        seed_scheduler(self.seed)
        report = trio.run(simulate, clock=clock)
        if deadlocks or report is None:
            raise SimulationDeadlock(
                deadlocks[0] if deadlocks else "the simulation on trio was cancelled before its end"
            )
        return report

    async def _simulate(self, job_name: str, clock: VirtualClock) -> SimulationReport:
        env, plan = self.env, self.env.plan()
        recorder = Recorder(self.report_every)
        self._bind_models(plan, clock, recorder)
        previous = env.clock, env.checkpoint_storage
        env.clock = clock
        env.checkpoint_storage = self._injector.storage(env.checkpoint_storage, clock, self.seed)
        try:
            async with env.start(job_name) as job:
                await self._record(job, clock, recorder)
        finally:
            env.clock, env.checkpoint_storage = previous
        header = ReportHeader(job_name, self.seed, self.until, self.report_every)
        outages = _outages(plan, until=clock.now())
        faults = sorted([*self._injector.injected(), *outages], key=lambda f: f.at)
        return build_report(header, plan, recorder, _modelled_sinks(plan), faults)

    def _bind_models(self, plan: ExecutionPlan, clock: VirtualClock, recorder: Recorder) -> None:
        for uid, model in _models(plan):
            model.bind(ModelContext(uid, self.seed, clock, recorder))

    async def _record(self, job: JobClient, clock: VirtualClock, recorder: Recorder) -> None:
        """Sample the job's metrics on schedule until ``until``, or until it ends first."""
        ended: list[BaseException | None] = []
        events = job.events()
        async with anyio.create_task_group() as group:
            group.start_soon(_wait_for, job, ended, group.cancel_scope)
            group.start_soon(_observe, events, recorder)
            group.start_soon(self._injector.run, job, clock)
            for time in self._sample_times():
                await clock.sleep(max(0.0, time - clock.now()))
                recorder.sample(time, job.metrics())
            group.cancel_scope.cancel()
        if ended and ended[0] is not None:
            raise ended[0]
        if ended and (not recorder.samples or recorder.samples[-1].time < clock.now()):
            recorder.sample(clock.now(), job.metrics())  # the job ended between two samples

    def _sample_times(self) -> Iterator[float]:
        count = math.ceil(self.until / self.report_every - 1e-9)
        for index in range(1, count + 1):
            yield min(index * self.report_every, self.until)

    def __repr__(self) -> str:
        return f"<Simulation seed={self.seed} until={self.until} report_every={self.report_every}>"


async def _wait_for(job: JobClient, ended: list[BaseException | None], scope: Any) -> None:
    try:
        await job.wait()
    except Exception as error:  # raised by _record, outside the task group
        ended.append(error)
    else:
        ended.append(None)
    scope.cancel()


def _real_time_clock() -> VirtualClock:
    system = SystemClock()
    start = system.now()

    def now() -> float:
        return system.now() - start

    return VirtualClock(now, system.sleep, _no_cost)


def _no_cost(seconds: float) -> None:
    """A declared CPU cost in real time: the CPU is spent for real, nothing to add."""


async def _observe(events: EventSubscription, recorder: Recorder) -> None:
    async for event in events:
        recorder.observe(event)


def _outages(plan: ExecutionPlan, *, until: float) -> list[InjectedFault]:
    """Every outage of the job's modelled services and sinks, as a fault of the run.

    An outage due after the run ended never struck.
    """
    return [
        InjectedFault(
            "outage",
            outage.at,
            outage.at if outage.at <= until else None,
            f"'{uid}' {'stalls' if outage.kind == 'stall' else 'refuses calls'} "
            f"for {outage.duration:g} s",
            ends_at=outage.end,
        )
        for uid, model in _models(plan)
        if isinstance(model, Service | ServiceSink)
        for outage in model.availability.outages
    ]


def _models(plan: ExecutionPlan) -> Iterator[tuple[str, Model]]:
    for node in plan.graph.nodes:
        function = node.function
        if node.kind is OperatorKind.ASYNC_MAP:
            function = function.function
        if isinstance(function, Model):
            yield node.uid, function


def _modelled_sinks(plan: ExecutionPlan) -> list[str]:
    return [
        node.uid
        for node in plan.graph.nodes
        if node.kind is OperatorKind.SINK and isinstance(node.function, ServiceSink)
    ]
