"""S3FileSink across savepoints: its multipart uploads travel in the canonical format, so a job
restored from a savepoint, by a new sink object as a new process would, leaves every number
once in the bucket's objects and no upload open."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import pytest
from botocore.config import Config
from botocore.session import get_session

from lockgate.connectors.s3 import S3FileSink
from lockgate.engine import StreamEnvironment
from tests.connectors.savepoint_jobs import Progress
from tests.engine.jobs.savepoints import Topic, TopicSource

pytestmark = pytest.mark.asyncio_only(reason="aiobotocore runs on asyncio only")

OPTIONS = {"region_name": "us-east-1", "aws_access_key_id": "x", "aws_secret_access_key": "x"}
FIRST, MORE = 600, 400


@pytest.fixture
def s3(s3_endpoint: str) -> Iterator[Any]:
    """A blocking botocore client for arranging and inspecting the bucket."""
    config = Config(signature_version="s3v4", s3={"addressing_style": "path"})
    client = get_session().create_client("s3", endpoint_url=s3_endpoint, config=config, **OPTIONS)
    yield client
    client.close()


@pytest.fixture
def bucket(s3: Any) -> str:
    name = f"lockgate-{uuid.uuid4().hex[:16]}"
    s3.create_bucket(Bucket=name)
    return name


def open_uploads(s3: Any, bucket: str) -> list[str]:
    return [upload["Key"] for upload in s3.list_multipart_uploads(Bucket=bucket).get("Uploads", [])]


def numbers_job(
    topic: Topic, progress: Progress, bucket: str, endpoint: str
) -> tuple[StreamEnvironment, S3FileSink]:
    env = StreamEnvironment(parallelism=2, batch_size=50)
    env.enable_checkpointing(None)
    sink = S3FileSink(bucket, "out", endpoint_url=endpoint, **OPTIONS)
    numbers = env.from_source(TopicSource(topic), uid="numbers")
    numbers.map(progress, uid="progress").sink_to(sink, uid="out")
    return env, sink


def append(topic: Topic, numbers: range) -> None:
    topic.append(numbers, partition_of=lambda n: n)


async def committed(sink: S3FileSink) -> list[int]:
    return sorted(int(line) for line in await sink.read_lines())


async def test_an_s3_job_stopped_with_a_savepoint_and_restored_writes_every_line_once(
    s3: Any, bucket: str, s3_endpoint: str, tmp_path: Path
) -> None:
    topic, progress = Topic(4), Progress()
    job_of = partial(numbers_job, topic, progress, bucket, s3_endpoint)
    append(topic, range(FIRST))
    env, sink = job_of()
    with anyio.fail_after(30):
        async with env.start("numbers") as job:
            await progress.wait_passed(FIRST)
            savepoint = await job.stop_with_savepoint(tmp_path.as_uri())
    first = await committed(sink)

    append(topic, range(FIRST, FIRST + MORE))
    topic.close()
    env, sink = job_of()
    with anyio.fail_after(30):
        await env.execute("numbers", restore_from=savepoint)

    assert first == list(range(FIRST))  # the stop committed everything before it
    assert await committed(sink) == list(range(FIRST + MORE))
    assert open_uploads(s3, bucket) == []


async def test_a_restore_completes_the_uploads_an_intermediate_savepoint_left_open(
    s3: Any, bucket: str, s3_endpoint: str, tmp_path: Path
) -> None:
    topic, progress = Topic(4), Progress()
    job_of = partial(numbers_job, topic, progress, bucket, s3_endpoint)
    append(topic, range(FIRST))
    env, sink = job_of()
    with anyio.fail_after(30):
        async with env.start("numbers") as job:
            await progress.wait_passed(FIRST)
            savepoint = await job.trigger_savepoint(tmp_path.as_uri())
            job.cancel()  # before any checkpoint completes what the savepoint pre-committed
    left_open = open_uploads(s3, bucket)

    topic.close()
    env, sink = job_of()
    with anyio.fail_after(30):
        await env.execute("numbers", restore_from=savepoint)

    assert left_open, "the savepoint pre-committed no upload: the test proves nothing"
    assert await committed(sink) == list(range(FIRST))
    assert open_uploads(s3, bucket) == []
