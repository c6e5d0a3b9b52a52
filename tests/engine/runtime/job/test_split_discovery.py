"""A job awaits ``Source.discover_splits`` on its loop before it builds a source's splits:
once per fresh start, never for a source restored from a checkpoint, and ``cancel`` ends a
discovery that waits at once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import JobStatus, RestartStrategy, SourceSplit, StreamEnvironment
from lockgate.engine.testing import AwaitCheckpoint, FailOnce


class DiscoveringSource(CollectionSource[Any]):
    """A collection source that logs its discovery and its split making, in order."""

    def __init__(self, elements: list[Any]) -> None:
        super().__init__(elements)
        self.calls: list[str] = []
        self.asking = anyio.Event()
        self.answer = anyio.Event()
        self.answer.set()

    async def discover_splits(self) -> None:
        self.calls.append("discover_splits")
        self.asking.set()
        await self.answer.wait()
        await anyio.lowlevel.checkpoint()

    def create_splits(self, parallelism: int) -> list[SourceSplit]:
        self.calls.append("create_splits")
        return super().create_splits(parallelism)


def job(source: DiscoveringSource, sink: CollectSink[Any]) -> StreamEnvironment:
    env = StreamEnvironment()
    env.from_source(source, uid="numbers").sink_to(sink, uid="out")
    return env


async def test_a_fresh_job_discovers_a_sources_splits_before_it_makes_them() -> None:
    source, sink = DiscoveringSource(list(range(10))), CollectSink[int]()

    await job(source, sink).execute("fresh")

    assert source.calls == ["discover_splits", "create_splits"]
    assert sink.results == list(range(10))


async def test_a_source_restored_from_a_checkpoint_is_not_asked_to_discover(
    tmp_path: Path,
) -> None:
    fail, sink = FailOnce(), CollectSink[int]()
    source = DiscoveringSource([0, 1, AwaitCheckpoint(), 2, fail, 3])
    env = job(source, sink)
    env.enable_checkpointing(0.01)
    env.set_checkpoint_storage(tmp_path.as_uri())
    env.set_restart_strategy(RestartStrategy.fixed_delay(attempts=1, delay=0.0))

    result = await env.execute("restored")

    assert fail.fired, "the injected failure never fired"
    assert result.metrics.attempt == 1
    assert source.calls == ["discover_splits", "create_splits"]  # attempt 1 restored them
    assert sink.results == [0, 1, 2, 3]


async def test_cancelling_a_job_ends_a_discovery_that_waits_at_once() -> None:
    source, sink = DiscoveringSource([0, 1]), CollectSink[int]()
    source.answer = anyio.Event()  # the server never answers

    with anyio.fail_after(10):
        async with job(source, sink).start("stuck") as client:
            await source.asking.wait()
            client.cancel()

    assert client.status is JobStatus.CANCELED
    assert source.calls == ["discover_splits"]  # no splits, no subtask deployed
