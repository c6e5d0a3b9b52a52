"""S3FileSink against the moto S3 server: transactions as multipart uploads, then exactly-once
through a job that fails once after a completed checkpoint."""

from __future__ import annotations

import copy
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from aiobotocore.config import AioConfig
from botocore.config import Config
from botocore.session import get_session

from lockgate.connectors import CollectionSource
from lockgate.connectors import s3 as s3_module
from lockgate.connectors.errors import ConnectorError, UnencodableRecord
from lockgate.connectors.s3 import MIN_PART_SIZE, S3FileSink, S3FileTransaction
from lockgate.engine import RestartStrategy, SinkContext, StreamEnvironment, SystemClock
from lockgate.engine.testing import AwaitCheckpoint, FailOnce

pytestmark = pytest.mark.asyncio_only(reason="aiobotocore runs on asyncio only")

OPTIONS = {"region_name": "us-east-1", "aws_access_key_id": "x", "aws_secret_access_key": "x"}


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
def sink(bucket: str, s3_endpoint: str) -> S3FileSink:
    return S3FileSink(bucket, "out/", endpoint_url=s3_endpoint, **OPTIONS)


@pytest.fixture
def impatient_sink(bucket: str, s3_endpoint: str) -> S3FileSink:
    """A sink that does not retry: moto answers 500 (S3: NoSuchUpload) for a forgotten upload."""
    config = AioConfig(
        signature_version="s3v4", s3={"addressing_style": "path"}, retries={"max_attempts": 1}
    )
    return S3FileSink(bucket, "out/", endpoint_url=s3_endpoint, config=config, **OPTIONS)


def context(subtask_index: int = 0, *, uid: str = "out") -> SinkContext:
    return SinkContext(uid, subtask_index, 1, SystemClock(), job_name="numbers")


def open_uploads(s3: Any, bucket: str) -> list[str]:
    return [upload["Key"] for upload in s3.list_multipart_uploads(Bucket=bucket).get("Uploads", [])]


async def pre_committed(sink: S3FileSink, records: list[Any]) -> S3FileTransaction:
    txn = await sink.begin_transaction(context())
    await sink.write(txn, records)
    await sink.pre_commit(txn)
    return txn


async def test_a_committed_transaction_is_one_object_of_its_lines(sink: S3FileSink) -> None:
    await sink.commit(await pre_committed(sink, [1, "two", 3]))
    assert await sink.read_lines() == ["1", "two", "3"]


async def test_a_pre_committed_transaction_is_an_upload_and_no_object(
    sink: S3FileSink, s3: Any, bucket: str
) -> None:
    txn = await pre_committed(sink, [1, 2])
    assert (await sink.read_lines(), open_uploads(s3, bucket)) == ([], [txn.key])


async def test_objects_are_named_by_prefix_uid_subtask_and_a_unique_id(sink: S3FileSink) -> None:
    txn = await sink.begin_transaction(context(2, uid="my sink"))
    assert txn.key.startswith("out/part-my_sink-2-") and txn.key.endswith(".txt")


async def test_a_transaction_without_records_leaves_no_object_and_no_upload(
    sink: S3FileSink, s3: Any, bucket: str
) -> None:
    await sink.commit(await pre_committed(sink, []))
    assert (await sink.read_lines(), open_uploads(s3, bucket)) == ([], [])


async def test_committing_twice_writes_the_lines_once(sink: S3FileSink) -> None:
    txn = await pre_committed(sink, [1, 2])
    await sink.commit(txn)
    await sink.commit(copy.deepcopy(txn))
    assert await sink.read_lines() == ["1", "2"]


def forgotten_upload(s3: Any, bucket: str, key: str) -> S3FileTransaction:
    """A transaction whose upload S3 no longer knows (as after a commit long ago)."""
    upload_id = s3.create_multipart_upload(Bucket=bucket, Key=key)["UploadId"]
    s3.abort_multipart_upload(Bucket=bucket, Key=key, UploadId=upload_id)
    return S3FileTransaction(bucket, key, upload_id, [(1, '"etag"')])


async def test_an_upload_s3_no_longer_knows_counts_as_committed_when_its_object_exists(
    impatient_sink: S3FileSink, s3: Any, bucket: str
) -> None:
    txn = forgotten_upload(s3, bucket, "out/part-out-0-done.txt")
    s3.put_object(Bucket=bucket, Key=txn.key, Body=b"committed before\n")
    await impatient_sink.recover_and_commit(txn)
    assert await impatient_sink.read_lines() == ["committed before"]


async def test_an_upload_that_is_gone_without_its_object_fails_the_commit(
    impatient_sink: S3FileSink, s3: Any, bucket: str
) -> None:
    txn = forgotten_upload(s3, bucket, "out/part-out-0-lost.txt")
    with pytest.raises(ConnectorError, match=r"part-out-0-lost\.txt"):
        await impatient_sink.recover_and_commit(txn)


async def test_abort_leaves_no_object_and_no_upload(sink: S3FileSink, s3: Any, bucket: str) -> None:
    await sink.abort(await pre_committed(sink, [1, 2]))
    assert (await sink.read_lines(), open_uploads(s3, bucket)) == ([], [])


async def test_a_part_is_uploaded_once_part_size_bytes_are_buffered(
    sink: S3FileSink, s3: Any, bucket: str
) -> None:
    line = "x" * 1023  # 1 KiB with its newline
    txn = await sink.begin_transaction(context())
    await sink.write(txn, [line] * (MIN_PART_SIZE // 1024))
    await sink.write(txn, ["tail"])
    await sink.pre_commit(txn)
    await sink.commit(txn)

    assert [number for number, _ in txn.parts] == [1, 2]
    assert s3.head_object(Bucket=bucket, Key=txn.key)["ContentLength"] == MIN_PART_SIZE + 5


async def test_jsonl_writes_one_json_document_per_line(bucket: str, s3_endpoint: str) -> None:
    sink = S3FileSink(bucket, format="jsonl", endpoint_url=s3_endpoint, **OPTIONS)
    await sink.commit(await pre_committed(sink, [{"n": 1}, [2, "3"], None]))
    assert await sink.read_lines() == ['{"n":1}', '[2,"3"]', "null"]


async def test_a_record_json_cannot_encode_is_refused(bucket: str, s3_endpoint: str) -> None:
    sink = S3FileSink(bucket, format="jsonl", endpoint_url=s3_endpoint, **OPTIONS)
    txn = await sink.begin_transaction(context())
    with pytest.raises(UnencodableRecord, match="format='text'"):
        await sink.write(txn, [object()])


def test_a_part_size_below_the_s3_minimum_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 5242880 bytes"):
        S3FileSink("bucket", part_size=1024)


def test_an_unknown_format_is_refused() -> None:
    with pytest.raises(ValueError, match="'text' or 'jsonl'"):
        S3FileSink("bucket", format="csv")  # type: ignore[arg-type]


async def test_opening_subtask_zero_aborts_uploads_left_by_a_killed_attempt(
    sink: S3FileSink, s3: Any, bucket: str, s3_endpoint: str
) -> None:
    await leave_an_upload_open(bucket, s3_endpoint, ["ghost"])
    writer = sink.create_writer(context())
    await writer.open()
    await writer.close()
    assert open_uploads(s3, bucket) == []


async def test_the_sweep_spares_other_sinks_in_the_prefix(
    sink: S3FileSink, s3: Any, bucket: str, s3_endpoint: str
) -> None:
    await leave_an_upload_open(bucket, s3_endpoint, ["other"], uid="out-2")
    assert await sink.abort_stale_uploads("out") == []
    assert len(open_uploads(s3, bucket)) == 1


async def test_a_sweep_while_a_commit_completes_its_upload_spares_that_upload(
    impatient_sink: S3FileSink, monkeypatch: pytest.MonkeyPatch
) -> None:
    sink, complete = impatient_sink, s3_module._complete
    txn = await pre_committed(sink, [1, 2])

    async def swept_first(client: Any, txn: S3FileTransaction) -> None:
        await sink.abort_stale_uploads("out")  # subtask 0 opening while another subtask commits
        await complete(client, txn)

    monkeypatch.setattr(s3_module, "_complete", swept_first)
    await sink.recover_and_commit(txn)

    assert await sink.read_lines() == ["1", "2"]


async def test_an_upload_committed_while_a_sweep_lists_the_uploads_is_not_aborted(
    impatient_sink: S3FileSink, monkeypatch: pytest.MonkeyPatch
) -> None:
    sink, list_uploads = impatient_sink, s3_module._list_uploads
    txn = await pre_committed(sink, [1, 2])

    async def committed_meanwhile(client: Any, bucket: str, prefix: str) -> list[tuple[str, str]]:
        uploads = await list_uploads(client, bucket, prefix)
        await sink.recover_and_commit(txn)  # another subtask, between listing and aborting
        return uploads

    monkeypatch.setattr(s3_module, "_list_uploads", committed_meanwhile)

    assert await sink.abort_stale_uploads("out") == []
    assert await sink.read_lines() == ["1", "2"]


async def leave_an_upload_open(
    bucket: str, endpoint: str, records: list[Any], *, uid: str = "out"
) -> None:
    """What a killed attempt leaves: a transaction pre-committed for a checkpoint that never
    completed, so nobody will complete or abort its upload."""
    killed = S3FileSink(bucket, "out", endpoint_url=endpoint, **OPTIONS)
    writer = killed.create_writer(context(uid=uid))
    await writer.open()
    await writer.write(records)
    await writer.snapshot_state(1)
    await writer.close()


# Exactly-once through a job that fails once, after a completed checkpoint.

N, CHECKPOINTED = 12_000, 4_000


class FailPast:
    """Fails the job once, at the first number past ``after``."""

    def __init__(self, fail: FailOnce, after: int) -> None:
        self.fail = fail
        self.after = after

    def __call__(self, n: int) -> int:
        if n > self.after:
            self.fail.maybe_fire()
        return n


@pytest.mark.parametrize("parallelism", [1, 3])
async def test_a_job_failing_once_commits_every_number_exactly_once(
    sink: S3FileSink, s3: Any, bucket: str, s3_endpoint: str, parallelism: int
) -> None:
    await leave_an_upload_open(bucket, s3_endpoint, ["ghost"])
    fail = FailOnce()
    numbers = [*range(1, CHECKPOINTED + 1), AwaitCheckpoint(), *range(CHECKPOINTED + 1, N + 1)]
    env = StreamEnvironment(parallelism=parallelism, batch_size=256)
    env.enable_checkpointing(0.05)
    env.set_restart_strategy(RestartStrategy.fixed_delay(attempts=3, delay=0.0))
    (
        env.from_source(CollectionSource(numbers), uid="numbers", parallelism=1)
        .map(FailPast(fail, CHECKPOINTED + 100), uid="fails-once")
        .sink_to(sink, uid="out")
    )

    await env.execute("numbers")

    assert fail.fired, "the injected failure never fired: the test proves nothing"
    assert sorted(map(int, await sink.read_lines())) == list(range(1, N + 1))
    assert open_uploads(s3, bucket) == []
