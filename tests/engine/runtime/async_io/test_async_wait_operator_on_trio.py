"""async_map runs on trio as on asyncio (the host's loop may be either, through anyio),
exactly-once across a restart from a completed checkpoint."""

from __future__ import annotations

from pathlib import Path

import anyio
import anyio.lowlevel

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import JobResult, RestartStrategy, StreamEnvironment
from lockgate.engine.testing import AwaitCheckpoint, FailOnce


async def doubled(number: int) -> int:
    await anyio.lowlevel.checkpoint()
    return 2 * number


def test_an_async_map_job_on_trio_restarts_from_its_checkpoint_to_exact_results(
    tmp_path: Path,
) -> None:
    fail, sink = FailOnce(), CollectSink[int]()
    env = StreamEnvironment(batch_size=16)
    env.enable_checkpointing(0.01)
    env.set_checkpoint_storage(tmp_path.as_uri())
    env.set_restart_strategy(RestartStrategy.fixed_delay(attempts=1, delay=0.0))
    numbers = [*range(300), AwaitCheckpoint(), *range(300, 400), fail, *range(400, 500)]
    env.from_source(CollectionSource(numbers), uid="numbers").async_map(
        doubled, capacity=20, uid="doubled"
    ).sink_to(sink, uid="out")

    async def execute() -> JobResult:
        with anyio.fail_after(10):
            return await env.execute("doubled")

    result = anyio.run(execute, backend="trio")

    assert fail.fired, "the injected failure never fired"
    assert result.metrics.attempt == 1
    assert sink.results == [2 * number for number in range(500)]
