"""ServiceSink: a modelled sink that takes a service time per record, as a slow store does."""

from __future__ import annotations

import heapq
import random
from collections.abc import Sequence
from typing import Any, Literal

from lockgate.engine.functions.async_io import AsyncRetry
from lockgate.engine.io.sinks import Sink, SinkContext, SinkWriter
from lockgate.engine.simulation.models.arrival import Arrival
from lockgate.engine.simulation.models.availability import Availability, Outage
from lockgate.engine.simulation.models.distributions import Distribution
from lockgate.engine.simulation.models.model import CommitListener, Model, ModelContext
from lockgate.engine.simulation.models.service_errors import ServiceError
from lockgate.engine.time.clock import Clock

__all__ = ["ServiceSink"]


class ServiceSink(Sink[Any], Model):
    """A sink whose writes take time: ``service`` seconds per record, ``concurrency`` at once.

    Each subtask's writer serves a batch's records in order, each on the first of
    ``concurrency`` servers to be free (one: a FIFO single server, M/M/1's with an
    exponential ``service``), and returns once the last is served: a sink of 100 records
    per second backpressures a faster job. With ``per="batch"`` one draw of ``service``
    serves a whole batch (a store written in bulk). A record commits when its service ends;
    the sink reports each ``Arrival`` with that time to the simulation, which measures
    in-engine latency and event-time lag from it. Records of other types are written
    without being measured.

    A write may fail, as the sink's ``Availability`` decides when it starts (one write is
    one request): during one of ``outages``, over ``rate_limit`` writes per second, or at
    the error rate ``errors``. Without ``retry`` the error fails the job's attempt (the
    restart strategy restores it from the latest checkpoint); with it the writer tries the
    write again after ``retry``'s backoff, on the virtual clock, up to its attempts.
    """

    def __init__(
        self,
        service: Distribution,
        *,
        concurrency: int = 1,
        per: Literal["record", "batch"] = "record",
        errors: float = 0.0,
        outages: Sequence[Outage] = (),
        rate_limit: float | None = None,
        retry: AsyncRetry | None = None,
    ) -> None:
        if not (isinstance(concurrency, int) and concurrency >= 1):
            raise ValueError(f"ServiceSink: concurrency must be 1 or more; got {concurrency}")
        if per not in ("record", "batch"):
            raise ValueError(f"ServiceSink: per must be 'record' or 'batch'; got {per!r}")
        if retry is not None and (problems := retry.problems()):
            raise ValueError(f"ServiceSink: retry: {problems[0]}")
        self.service = service
        self.concurrency = concurrency
        self.per = per
        self.retry = retry
        self.availability = Availability(
            "ServiceSink", errors=errors, outages=outages, rate_limit=rate_limit
        )

    def bind(self, context: ModelContext) -> None:
        """Take the simulation's context; forget the writes of an earlier run."""
        super().bind(context)
        self.availability.name = f"ServiceSink '{context.uid}'"
        self.availability.reset()

    def create_writer(self, context: SinkContext) -> SinkWriter[Any]:
        """A writer with its own servers and its own draws of the seed."""
        model = self.context_for(context.uid)
        rngs = (
            model.random("writer", context.subtask_index),
            model.random("faults", context.subtask_index, context.attempt),
        )
        return _ServiceWriter(self, context.uid, rngs, context.clock, model.commits)

    def __repr__(self) -> str:
        return f"<ServiceSink {self.service!r} concurrency={self.concurrency} per={self.per}>"


class _ServiceWriter(SinkWriter[Any]):
    def __init__(
        self,
        sink: ServiceSink,
        uid: str,
        rngs: tuple[random.Random, random.Random],
        clock: Clock,
        commits: CommitListener | None,
    ) -> None:
        self.sink = sink
        self.uid = uid
        self.rng, self.faults = rngs
        self.clock = clock
        self.commits = commits

    async def write(self, records: list[Any]) -> None:
        if not self.sink.availability.always:
            await self._admitted()
        start = self.clock.now()
        done = self._serve(len(records), start)
        last = max(done, default=start)
        if last > start:
            await self.clock.sleep(last - start)
        if self.commits is not None:
            measured = [(r, t) for r, t in zip(records, done, strict=True) if type(r) is Arrival]
            self.commits.committed(self.uid, [r for r, _ in measured], [t for _, t in measured])

    async def _admitted(self) -> None:
        """Wait until the store takes the write: held, or retried after refusals."""
        retry, attempt = self.sink.retry, 1
        while True:
            try:
                held = self.sink.availability.admit(self.clock.now(), self.faults)
            except ServiceError as error:
                if retry is None or not retry.retries(error, attempt):
                    raise
                await self.clock.sleep(retry.backoff(attempt, self.faults.random()))
                attempt += 1
                continue
            if held:
                await self.clock.sleep(held)
            return

    def _serve(self, count: int, start: float) -> list[float]:
        draw, rng = self.sink.service.draw, self.rng
        if self.sink.per == "batch":
            return [start + draw(rng)] * count if count else []
        if self.sink.concurrency == 1:
            done, at = [], start
            for _ in range(count):
                at += draw(rng)
                done.append(at)
            return done
        free = [start] * self.sink.concurrency
        ends = []
        for _ in range(count):
            end = heapq.heappop(free) + draw(rng)
            heapq.heappush(free, end)
            ends.append(end)
        return ends
