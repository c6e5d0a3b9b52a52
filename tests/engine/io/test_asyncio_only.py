"""require_asyncio: silent on asyncio and outside any loop; on trio an ``AsyncioRequired``
naming the part, the library and what to do. A job on trio whose checkpoint storage is S3
(aiobotocore) fails at its first checkpoint, once, instead of declining checkpoints forever."""

from __future__ import annotations

import anyio
import pytest

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import AsyncioRequired, JobClient, JobStatus, StreamEnvironment
from lockgate.engine.io.asyncio_only import require_asyncio
from lockgate.engine.io.sinks import SinkContext
from lockgate.engine.testing import AwaitCheckpoint
from lockgate.engine.time.clock import SystemClock


async def check() -> None:
    require_asyncio("Kafka sink", "aiokafka", context=SinkContext("out", 2, 3, SystemClock()))


def test_require_asyncio_is_silent_on_asyncio_and_outside_any_loop() -> None:
    require_asyncio("Kafka sink", "aiokafka")

    anyio.run(check, backend="asyncio")


def test_require_asyncio_on_trio_names_the_part_its_subtask_the_library_and_the_way_out() -> None:
    with pytest.raises(AsyncioRequired) as failure:
        anyio.run(check, backend="trio")

    message = str(failure.value)
    assert message.startswith("Kafka sink 'out' (subtask 3/3) needs asyncio: aiokafka runs")
    assert "backend='asyncio'" in message and "FileSink" in message


def test_a_job_on_trio_checkpointing_to_s3_fails_once_naming_the_storage() -> None:
    env = StreamEnvironment()
    env.enable_checkpointing(0.01)
    env.set_checkpoint_storage("s3://bucket/checkpoints")
    source = CollectionSource([1, 2, AwaitCheckpoint(), 3])
    env.from_source(source, uid="numbers").sink_to(CollectSink(), uid="out")
    started: list[JobClient] = []

    async def main() -> None:
        with anyio.fail_after(10):
            async with env.start("on-trio") as job:
                started.append(job)
                await job.wait()

    with pytest.raises(AsyncioRequired, match="S3 checkpoint storage 's3://bucket/checkpoints'"):
        anyio.run(main, backend="trio")
    assert started[0].status is JobStatus.FAILED
    assert len(started[0].failures) == 1  # no restart: it would fail the same way
