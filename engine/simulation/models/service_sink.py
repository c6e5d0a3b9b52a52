"""ServiceSink: a modelled sink that takes a service time per record, as a slow store does."""

from __future__ import annotations

import heapq
import random
from typing import Any

from lockgate.engine.io.sinks import Sink, SinkContext, SinkWriter
from lockgate.engine.simulation.models.arrival import Arrival
from lockgate.engine.simulation.models.distributions import Distribution
from lockgate.engine.simulation.models.model import CommitListener, Model
from lockgate.engine.time.clock import Clock

__all__ = ["ServiceSink"]


class ServiceSink(Sink[Any], Model):
    """A sink whose writes take time: ``service`` seconds per record, ``concurrency`` at once.

    Each subtask's writer serves a batch's records in order, each on the first of
    ``concurrency`` servers to be free (one: a FIFO single server, M/M/1's with an
    exponential ``service``), and returns once the last is served: a sink of 100 records
    per second backpressures a faster job. A record commits when its service ends; the
    sink reports each ``Arrival`` with that time to the simulation, which measures
    in-engine latency and event-time lag from it. Records of other types are written
    without being measured.
    """

    def __init__(self, service: Distribution, *, concurrency: int = 1) -> None:
        if not (isinstance(concurrency, int) and concurrency >= 1):
            raise ValueError(f"ServiceSink: concurrency must be 1 or more; got {concurrency}")
        self.service = service
        self.concurrency = concurrency

    def create_writer(self, context: SinkContext) -> SinkWriter[Any]:
        """A writer with its own servers and its own draws of the seed."""
        model = self.context_for(context.uid)
        rng = model.random("writer", context.subtask_index)
        return _ServiceWriter(self, context.uid, rng, context.clock, model.commits)

    def __repr__(self) -> str:
        return f"<ServiceSink {self.service!r} concurrency={self.concurrency}>"


class _ServiceWriter(SinkWriter[Any]):
    def __init__(
        self,
        sink: ServiceSink,
        uid: str,
        rng: random.Random,
        clock: Clock,
        commits: CommitListener | None,
    ) -> None:
        self.sink = sink
        self.uid = uid
        self.rng = rng
        self.clock = clock
        self.commits = commits

    async def write(self, records: list[Any]) -> None:
        start = self.clock.now()
        done = self._serve(len(records), start)
        last = max(done, default=start)
        if last > start:
            await self.clock.sleep(last - start)
        if self.commits is not None:
            measured = [(r, t) for r, t in zip(records, done, strict=True) if type(r) is Arrival]
            self.commits.committed(self.uid, [r for r, _ in measured], [t for _, t in measured])

    def _serve(self, count: int, start: float) -> list[float]:
        draw, rng = self.sink.service.draw, self.rng
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
