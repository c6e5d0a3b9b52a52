"""StreamEnvironment: where a job is configured, built from sources, and run."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import anyio

from lockgate.engine.client import JobClient, JobResult
from lockgate.engine.clock import Clock, SystemClock
from lockgate.engine.graph import Edge, JobGraph, OperatorKind, OperatorNode, Partitioning
from lockgate.engine.planning import ExecutionPlan, plan_job
from lockgate.engine.runtime.deployment import RuntimeOptions
from lockgate.engine.runtime.job_master import JobMaster
from lockgate.engine.sources import Source
from lockgate.engine.stream import DataStream

__all__ = ["StreamEnvironment"]

T = TypeVar("T")


class StreamEnvironment:
    """Builds a job with the fluent API and runs it on this event loop.

    Options:
        parallelism: default number of subtasks per operator.
        max_parallelism: number of key groups; the upper bound of any operator's
            parallelism, fixed for the life of a job's state (Flink's default, 128).
        batch_size: records per batch on a channel.
        channel_capacity: records a channel holds before its sender waits (backpressure);
            at least ``batch_size``.
        buffer_timeout: seconds a partly filled batch may wait before it is sent anyway.
        clock: where time is read; a ``ManualClock`` or a simulator's clock in tests.

    The graph is validated when a job is planned, started or executed, before any record
    flows. The same environment can run its graph again.
    """

    def __init__(
        self,
        *,
        parallelism: int = 1,
        max_parallelism: int = 128,
        batch_size: int = 512,
        channel_capacity: int = 2048,
        buffer_timeout: float = 0.1,
        clock: Clock | None = None,
    ) -> None:
        _check_options(parallelism, max_parallelism, batch_size, channel_capacity)
        self.parallelism = parallelism
        self.max_parallelism = max_parallelism
        self.batch_size = batch_size
        self.channel_capacity = channel_capacity
        self.buffer_timeout = buffer_timeout
        self.clock: Clock = clock or SystemClock()
        self._graph = JobGraph(max_parallelism)
        self._ids = itertools.count()

    def from_source(
        self,
        source: Source[T],
        *,
        uid: str | None = None,
        name: str | None = None,
        parallelism: int | None = None,
    ) -> DataStream[T]:
        """Start a stream that reads ``source``."""
        node = self._add_operator(OperatorKind.SOURCE, source, uid, name, parallelism)
        return DataStream(self, (node,))

    def plan(self) -> ExecutionPlan:
        """Validate the graph and return its plan: chains, edges and channels."""
        self._graph.max_parallelism = self.max_parallelism
        return plan_job(self._graph)

    async def execute(self, name: str = "job") -> JobResult:
        """Run the job to its end and return its result; raise its error if it fails."""
        async with self.start(name) as job:
            return await job.wait()

    @asynccontextmanager
    async def start(self, name: str = "job") -> AsyncIterator[JobClient]:
        """Start the job and yield its ``JobClient`` at once.

        Leaving the block cancels the job if it is still running, and raises the job's
        error if it failed and ``wait`` did not already raise it.
        """
        options = RuntimeOptions(
            self.batch_size,
            self.channel_capacity,
            self.buffer_timeout,
            self.max_parallelism,
            self.clock,
        )
        client = JobClient(JobMaster(name, self.plan(), options), self.clock)
        body_error: Exception | None = None
        async with anyio.create_task_group() as group:
            group.start_soon(client.run)
            try:
                yield client
            except Exception as error:  # raised again below, outside the task group
                body_error = error
            finally:
                client.cancel()
        if body_error is not None:
            raise body_error
        if client.failure is not None and not client.error_observed:
            raise client.failure

    def _add_operator(
        self,
        kind: OperatorKind,
        function: Any,
        uid: str | None,
        name: str | None,
        parallelism: int | None,
    ) -> OperatorNode:
        node_id = next(self._ids)
        resolved = uid or f"{kind.value}-{node_id}"
        node = OperatorNode(
            node_id=node_id,
            uid=resolved,
            name=name or resolved,
            kind=kind,
            function=function,
            parallelism=self.parallelism if parallelism is None else parallelism,
            uid_is_explicit=uid is not None,
        )
        return self._graph.add(node)

    def _connect(
        self,
        source: OperatorNode,
        target: OperatorNode,
        partitioning: Partitioning,
        key_selector: Any,
    ) -> None:
        self._graph.connect(Edge(source, target, partitioning, key_selector))

    def __repr__(self) -> str:
        return (
            f"<StreamEnvironment parallelism={self.parallelism} operators={len(self._graph.nodes)}>"
        )


def _check_options(
    parallelism: int, max_parallelism: int, batch_size: int, channel_capacity: int
) -> None:
    if not 1 <= parallelism <= max_parallelism:
        raise ValueError(
            f"parallelism must be between 1 and max_parallelism ({max_parallelism}); "
            f"got {parallelism}"
        )
    if not 1 <= batch_size <= channel_capacity:
        raise ValueError(
            f"batch_size ({batch_size}) must be at least 1 and at most channel_capacity "
            f"({channel_capacity}), so that a full batch always fits in a channel"
        )
