"""S3CheckpointStorage against the moto S3 server: every shared storage behaviour, then a job
that checkpoints to S3, is cancelled, and resumes in a new environment with exact results."""

from __future__ import annotations

import subprocess
import sys
import uuid
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

import pytest
from botocore.config import Config
from botocore.session import get_session

from lockgate.connectors import CollectSink
from lockgate.engine import StreamEnvironment
from lockgate.engine.checkpointing.storage import storage_for
from lockgate.engine.checkpointing.storage.job_lock import JobLock
from lockgate.engine.checkpointing.storage.s3 import S3CheckpointStorage
from lockgate.engine.errors import CheckpointStorageError, JobError, UnsupportedCheckpointStorage
from lockgate.engine.io.s3_client import split_s3_url
from tests.engine.checkpointing.test_storage import *  # noqa: F403 - every shared behaviour
from tests.engine.checkpointing.test_storage import JOB, Backend, checkpoint
from tests.engine.jobs.checkpoints import Gate, GatedSource

pytestmark = pytest.mark.asyncio_only(reason="aiobotocore runs on asyncio only")

CREDENTIALS = {"aws_access_key_id": "lockgate", "aws_secret_access_key": "lockgate"}
OPTIONS = {"region_name": "us-east-1", **CREDENTIALS}


@pytest.fixture(scope="module")
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


@pytest.fixture
def backend(s3: Any, bucket: str, s3_endpoint: str) -> Backend:  # replaces the shared fixture
    def flip_last_byte(location: str) -> None:
        bucket, key = split_s3_url(location)
        data = s3.get_object(Bucket=bucket, Key=key)["Body"].read()
        s3.put_object(Bucket=bucket, Key=key, Body=data[:-1] + bytes([data[-1] ^ 0xFF]))

    storage = S3CheckpointStorage(f"s3://{bucket}/checkpoints", endpoint_url=s3_endpoint, **OPTIONS)
    return Backend(storage, flip_last_byte)


@pytest.fixture
def s3_storage(backend: Backend) -> S3CheckpointStorage:
    assert isinstance(backend.storage, S3CheckpointStorage)
    return backend.storage


async def test_objects_follow_the_checkpoint_layout(
    s3_storage: S3CheckpointStorage, s3: Any
) -> None:
    await checkpoint(s3_storage, 7)

    listed = s3.list_objects_v2(Bucket=s3_storage.bucket)["Contents"]
    keys = sorted(item["Key"] for item in listed)
    assert keys == [f"checkpoints/{JOB}/chk-7/_metadata", f"checkpoints/{JOB}/chk-7/sums-0"]


async def test_discard_leaves_a_checkpoint_with_a_longer_id_alone(
    s3_storage: S3CheckpointStorage,
) -> None:
    await checkpoint(s3_storage, 1)
    await checkpoint(s3_storage, 10)
    await s3_storage.discard(JOB, 1)
    assert await s3_storage.completed(JOB) == [10]


async def test_a_second_run_of_a_job_on_the_same_s3_url_is_refused_in_this_process(
    s3_storage: S3CheckpointStorage, s3_endpoint: str
) -> None:
    same_url = S3CheckpointStorage(s3_storage.url, endpoint_url=s3_endpoint, **OPTIONS)
    async with JobLock(s3_storage, JOB, run_id="first"):
        with pytest.raises(JobError, match=f"job '{JOB}' is already running .*run first"):
            async with JobLock(same_url, JOB, run_id="second"):
                pass


async def test_a_missing_bucket_is_named_in_the_error(s3_endpoint: str) -> None:
    storage = S3CheckpointStorage("s3://no-such-bucket/x", endpoint_url=s3_endpoint, **OPTIONS)
    with pytest.raises(CheckpointStorageError, match="bucket 'no-such-bucket'"):
        await storage.completed(JOB)


async def test_each_operation_closes_its_client(s3_storage: S3CheckpointStorage) -> None:
    await checkpoint(s3_storage, 1)
    await s3_storage.latest(JOB)

    statistics = s3_storage.connection.statistics()
    assert (statistics.clients_opened, statistics.holders) == (3, 0)


async def test_a_held_storage_reuses_one_client(s3_storage: S3CheckpointStorage) -> None:
    async with s3_storage:
        await checkpoint(s3_storage, 1)
        await s3_storage.latest(JOB)
        await s3_storage.discard(JOB, 1)

    statistics = s3_storage.connection.statistics()
    assert (statistics.clients_opened, statistics.holders) == (1, 0)


def test_an_s3_url_gives_s3_storage_at_the_endpoint_of_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("LOCKGATE_S3_ENDPOINT", "http://127.0.0.1:9")
    storage = storage_for("s3://bucket/some/prefix/")
    assert isinstance(storage, S3CheckpointStorage)
    assert (storage.url, storage.connection.endpoint_url) == (
        "s3://bucket/some/prefix",
        "http://127.0.0.1:9",
    )


def test_aws_endpoint_url_is_the_fallback_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LOCKGATE_S3_ENDPOINT", raising=False)
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:8")
    storage = storage_for("s3://bucket")
    assert isinstance(storage, S3CheckpointStorage)
    assert storage.connection.endpoint_url == "http://127.0.0.1:8"


def test_an_s3_url_without_the_extra_says_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "lockgate.engine.checkpointing.storage.s3")
    monkeypatch.delitem(sys.modules, "lockgate.engine.io.s3_client")
    monkeypatch.setitem(sys.modules, "aiobotocore.session", None)
    with pytest.raises(UnsupportedCheckpointStorage, match="'s3' extra"):
        storage_for("s3://bucket/checkpoints")


@pytest.mark.parametrize("url", ["s3://", "s3:///prefix", "gs://bucket"])
def test_a_url_that_is_not_s3_with_a_bucket_is_refused(url: str) -> None:
    with pytest.raises(ValueError, match="s3://bucket/prefix"):
        S3CheckpointStorage(url)


def test_importing_the_engine_and_connectors_does_not_import_aiobotocore() -> None:
    code = "import sys, lockgate.engine, lockgate.connectors; print('aiobotocore' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"


# A job that checkpoints to S3, is cancelled, and resumes from S3 in a new environment.

COUNT, GATE_AT, KEYS = 3_000, 1_200, 7


def running_sums_job(gate: Gate, sink: CollectSink[Any]) -> StreamEnvironment:
    env = StreamEnvironment(parallelism=2)
    env.enable_checkpointing(None)  # checkpoints only when the test triggers them
    (
        env.from_source(
            GatedSource(COUNT, gate_at=GATE_AT, gate=gate), uid="numbers", parallelism=1
        )
        .map(lambda n: (n % KEYS, n), uid="pairs")
        .key_by(lambda pair: pair[0])
        .reduce(lambda a, b: (a[0], a[1] + b[1]), uid="sums")
        .sink_to(sink, uid="out")
    )
    return env


def final_sums_and_updates(pairs: list[tuple[int, int]]) -> dict[int, tuple[int, int]]:
    """Per key: the last running sum committed and how many updates were committed."""
    updates: dict[int, list[int]] = defaultdict(list)
    for key, total in pairs:
        updates[key].append(total)
    return {key: (max(totals), len(totals)) for key, totals in updates.items()}


async def test_a_job_resumes_from_its_latest_s3_checkpoint_with_exact_results(
    s3_storage: S3CheckpointStorage, s3_endpoint: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    sink: CollectSink[tuple[int, int]] = CollectSink()
    first = running_sums_job(gate := Gate(), sink)
    first.set_checkpoint_storage(s3_storage)
    async with first.start("sums") as job:
        await gate.reached.wait()
        completed = await job.trigger_checkpoint()
        job.cancel()
    # an unfinished, newer checkpoint: state objects without metadata
    await s3_storage.write_state("sums", completed.checkpoint_id + 5, "sums-0", b"torn")

    monkeypatch.setenv("LOCKGATE_S3_ENDPOINT", s3_endpoint)
    for name, value in CREDENTIALS.items():
        monkeypatch.setenv(name.upper(), value)
    second = running_sums_job(Gate(opened=True), sink)
    second.set_checkpoint_storage(f"{s3_storage.url}/")
    latest = await second.checkpoint_storage.latest("sums")
    result = await second.execute("sums", restore_from="latest")

    assert latest is not None and latest.checkpoint_id == completed.checkpoint_id
    resumed = sum(subtask.records_out for subtask in result.metrics.of("numbers"))
    assert resumed == COUNT - GATE_AT  # it read on from the checkpoint, not from the start
    expected = {k: (sum(range(k, COUNT, KEYS)), len(range(k, COUNT, KEYS))) for k in range(KEYS)}
    assert final_sums_and_updates(sink.results) == expected
