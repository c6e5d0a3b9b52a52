"""S3FileSink: exactly-once part files in S3 through multipart uploads (the ``s3`` extra).

``from lockgate.connectors import S3FileSink`` imports this module, and aiobotocore with
it, on first use; ``import lockgate.connectors`` alone never imports aiobotocore.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

import orjson

from lockgate.connectors.errors import ConnectorError, UnencodableRecord
from lockgate.engine import TypeCodec
from lockgate.engine.io.asyncio_only import require_asyncio
from lockgate.engine.io.s3_client import S3_ERRORS, S3Client, S3Connection, error_code, list_keys
from lockgate.engine.io.sinks import SinkContext, TwoPhaseCommitSink, TwoPhaseCommitWriter
from lockgate.engine.io.transactions import TransactionLog

__all__ = ["MIN_PART_SIZE", "S3FileSink", "S3FileTransaction"]

FileFormat: TypeAlias = Literal["text", "jsonl"]
_Encoder: TypeAlias = Callable[[list[Any]], bytes]

MIN_PART_SIZE = 5 * 1024 * 1024
"""The smallest part S3 accepts in a multipart upload, except for the last part."""

_FORMATS: dict[str, tuple[str, str]] = {  # format -> (extension, content type)
    "text": (".txt", "text/plain; charset=utf-8"),
    "jsonl": (".jsonl", "application/x-ndjson"),
}


@dataclass
class S3FileTransaction:
    """One transaction of an ``S3FileSink``: the multipart upload of one object.

    Plain data, stored in checkpoints: ``upload_id`` is ``None`` until the first part is
    uploaded, and ``parts`` lists ``(part number, ETag)`` of every uploaded part, which is
    all that completing (committing) or aborting the upload needs, in any process.
    """

    bucket: str
    key: str
    upload_id: str | None = None
    parts: list[tuple[int, str]] = field(default_factory=list)


class S3FileSink(TwoPhaseCommitSink[Any, S3FileTransaction]):
    """Writes records as lines to S3 objects, exactly once, one object per transaction.

    Exactly-once: each subtask writes each checkpoint interval's records into one multipart
    upload to ``<prefix>/part-<uid>-<subtask>-<32 hex>.txt`` (``.jsonl`` for ``"jsonl"``);
    the object appears only when the upload is completed, after the checkpoint holding those
    records completed, so every record is visible once and never before its checkpoint.

    - Parts: records are buffered in memory and uploaded as a part once ``part_size`` bytes
      (at least S3's 5 MiB) are buffered; pre-commit uploads the rest as the last part, so
      a pre-committed transaction is all in S3 and its upload id and part ETags are in the
      checkpoint. A transaction without records creates no upload and no object.
    - Commit is idempotent: when completing the upload fails (S3 forgets completed upload
      ids: ``NoSuchUpload``), the transaction counts as committed if its object exists, since
      each transaction has a key of its own that only completing its upload creates; if
      the object is missing too, the upload was aborted or expired (a bucket lifecycle rule)
      and commit raises ``ConnectorError``.
    - Recovery: the next attempt completes the uploads pre-committed in the restored
      checkpoint and aborts the ones it recorded as open; subtask 0 then aborts every other
      upload of this sink (same bucket, prefix and uid) left by attempts that were killed.
      That sweep knows the uploads in use from this sink object, so run every subtask of
      the sink with the same object in one process (as lockgate's runtime does), and give
      each job its own prefix.

    Formats: ``"text"`` writes ``str(record)`` and a newline, ``"jsonl"``
    ``orjson.dumps(record)`` and a newline; objects are UTF-8. S3 connection options
    (``endpoint_url``, ``region_name``, credentials, ``config``) are those of
    ``S3Connection``; one client serves all subtasks while any writer is open.
    """

    def __init__(
        self,
        bucket: str,
        prefix: str = "",
        *,
        format: FileFormat = "text",
        part_size: int = MIN_PART_SIZE,
        endpoint_url: str | None = None,
        **client_options: Any,
    ) -> None:
        if format not in _FORMATS:
            raise ValueError(f"S3FileSink format must be 'text' or 'jsonl'; got {format!r}")
        if part_size < MIN_PART_SIZE:
            raise ValueError(
                f"S3FileSink part_size must be at least {MIN_PART_SIZE} bytes (S3's minimum "
                f"part size); got {part_size}"
            )
        self.bucket = bucket
        self.prefix = prefix.strip("/")
        self.format = format
        self.part_size = part_size
        self.connection = S3Connection(
            endpoint_url=endpoint_url,
            user=f"S3 file sink 's3://{bucket}/{self.prefix}'",
            **client_options,
        )
        self._encode: _Encoder = _encode_jsonl if format == "jsonl" else _encode_text
        self._buffers: dict[str, bytearray] = {}  # by key; never part of a checkpoint
        self._live: set[str] = set()  # keys of uploads an open writer may still complete

    def state_types(self) -> Sequence[TypeCodec]:
        """Savepoints store transactions as their bucket, key, upload id and part ETags."""
        return (TypeCodec.for_dataclass(S3FileTransaction, "lockgate.S3FileTransaction"),)

    def create_writer(self, context: SinkContext) -> TwoPhaseCommitWriter[Any, S3FileTransaction]:
        """Return the writer of one subtask; it holds the shared client while it is open.

        Raises:
            AsyncioRequired: the job runs on trio; aiobotocore needs asyncio.
        """
        require_asyncio("S3 file sink", "aiobotocore", context=context)
        return _S3FileWriter(self, context)

    async def begin_transaction(self, context: SinkContext) -> S3FileTransaction:
        """Name the object of a new transaction; its upload starts with its first part."""
        extension, _ = _FORMATS[self.format]
        name = f"{_uid_prefix(context.uid)}{context.subtask_index}-{uuid.uuid4().hex}{extension}"
        txn = S3FileTransaction(self.bucket, self._key(name))
        self._live.add(txn.key)
        return txn

    async def write(self, txn: S3FileTransaction, records: list[Any]) -> None:
        """Buffer ``records``; upload the buffer as a part once it holds ``part_size`` bytes."""
        buffer = self._buffers.setdefault(txn.key, bytearray())
        buffer += self._encoded(records)
        if len(buffer) >= self.part_size:
            await self._upload_part(txn, buffer)

    async def pre_commit(self, txn: S3FileTransaction) -> None:
        """Upload what is buffered as the last part; the transaction is then all in S3."""
        buffer = self._buffers.pop(txn.key, None)
        if buffer:
            await self._upload_part(txn, buffer)

    async def commit(self, txn: S3FileTransaction) -> None:
        """Complete the upload, making the object visible; done already counts as done.

        The key stays live until the upload is complete: a sweep running meanwhile (subtask
        0 opening while another subtask recovers) must not abort it half-way.
        """
        if txn.upload_id is not None:
            async with self.connection.client() as client:
                with self._translated(f"complete upload {txn.upload_id} of {_url(txn)}"):
                    await _complete(client, txn)
        self._live.discard(txn.key)

    async def abort(self, txn: S3FileTransaction) -> None:
        """Abort the upload and drop what is buffered; no object ever appears."""
        self._buffers.pop(txn.key, None)
        self._live.discard(txn.key)
        if txn.upload_id is not None:
            async with self.connection.client() as client:
                with self._translated(f"abort upload {txn.upload_id} of {_url(txn)}"):
                    await _abort(client, txn.bucket, txn.key, txn.upload_id)

    async def read_lines(self) -> list[str]:
        """Return the lines of the committed objects under the prefix, in key order.

        For tests and examples, once a job has finished; every sink writing under the prefix
        is read.
        """
        extension, _ = _FORMATS[self.format]
        async with self.connection.client() as client:
            keys = await list_keys(client, self.bucket, self._key("part-"))
            return [
                line
                for key in sorted(keys)
                if key.endswith(extension)
                for line in (await _read(client, self.bucket, key)).split("\n")[:-1]
            ]

    async def abort_stale_uploads(self, uid: str) -> list[str]:
        """Abort this sink's uploads (operator ``uid``) that no open writer may complete.

        Called by subtask 0 when it opens; returns the keys whose uploads it aborted.
        """
        prefix = self._key(_uid_prefix(uid))
        pattern = re.compile(re.escape(prefix) + _UNIQUE_NAME)
        live_before = set(self._live)  # a commit may complete an upload while we list them
        async with self.connection.client() as client:
            with self._translated(f"abort the uploads left under s3://{self.bucket}/{prefix}"):
                uploads = await _list_uploads(client, self.bucket, prefix)
                spared = live_before | self._live
                stale = [(k, u) for k, u in uploads if pattern.fullmatch(k) and k not in spared]
                for key, upload_id in stale:
                    await _abort(client, self.bucket, key, upload_id)
        return [key for key, _ in stale]

    def _key(self, name: str) -> str:
        return f"{self.prefix}/{name}" if self.prefix else name

    async def _upload_part(self, txn: S3FileTransaction, buffer: bytearray) -> None:
        _, content_type = _FORMATS[self.format]
        async with self.connection.client() as client:
            with self._translated(f"upload a part of {_url(txn)}"):
                if txn.upload_id is None:
                    created = await client.create_multipart_upload(
                        Bucket=txn.bucket, Key=txn.key, ContentType=content_type
                    )
                    txn.upload_id = created["UploadId"]
                number = len(txn.parts) + 1
                answer = await client.upload_part(
                    Bucket=txn.bucket,
                    Key=txn.key,
                    UploadId=txn.upload_id,
                    PartNumber=number,
                    Body=bytes(buffer),
                )
        txn.parts.append((number, answer["ETag"]))
        buffer.clear()

    def _encoded(self, records: list[Any]) -> bytes:
        try:
            return self._encode(records)
        except orjson.JSONEncodeError as error:
            raise UnencodableRecord(
                f"S3 file sink {self!r} cannot write a record as JSON: {error}; map records "
                "to dicts, lists, str, numbers, bool or None first, or use format='text'"
            ) from error

    def _forget(self, keys: list[str]) -> None:
        self._live.difference_update(keys)

    @contextmanager
    def _translated(self, action: str) -> Iterator[None]:
        try:
            yield
        except S3_ERRORS as error:
            raise ConnectorError(
                f"S3 file sink could not {action}: {error}; check that bucket '{self.bucket}' "
                f"exists and that the endpoint ({self.connection.endpoint_url or 'AWS'}) and "
                "credentials are right"
            ) from error

    def __repr__(self) -> str:
        location = f"s3://{self.bucket}/{self.prefix}".rstrip("/")
        return f"<S3FileSink {location} format={self.format!r} live={len(self._live)}>"


class _S3FileWriter(TwoPhaseCommitWriter[Any, S3FileTransaction]):
    """The engine's two-phase-commit writer, plus the S3 client and the sweep of subtask 0."""

    def __init__(self, sink: S3FileSink, context: SinkContext) -> None:
        super().__init__(sink, context)
        self._s3 = sink
        self._subtask_context = context
        restored: TransactionLog[S3FileTransaction] = TransactionLog.from_state(
            context.restored_state
        )
        # Registered before any writer opens, so subtask 0's sweep spares them.
        self._restored = [txn.key for _, txn in restored.pending]
        sink._live.update(self._restored)
        self._holding = False

    async def open(self) -> None:
        """Hold the client, sweep stale uploads (subtask 0), then recover and begin."""
        await self._s3.connection.acquire()
        self._holding = True
        if self._subtask_context.subtask_index == 0:
            await self._s3.abort_stale_uploads(self._subtask_context.uid)
        await super().open()

    async def close(self) -> None:
        """Abort the open transaction and release the client; pending uploads stay in S3."""
        try:
            await super().close()
        finally:
            pending = [txn.key for _, txn in self.transactions.pending]
            self._s3._forget([*self._restored, *pending])
            if self._holding:
                self._holding = False
                await self._s3.connection.release()


_UNIQUE_NAME = r"\d+-[0-9a-f]{32}\.[a-z]+"


def _uid_prefix(uid: str) -> str:
    return f"part-{re.sub(r'[^A-Za-z0-9._-]', '_', uid)}-"


def _encode_text(records: list[Any]) -> bytes:
    return "".join(f"{record}\n" for record in records).encode("utf-8")


def _encode_jsonl(records: list[Any]) -> bytes:
    return b"".join(orjson.dumps(record) + b"\n" for record in records)


async def _complete(client: S3Client, txn: S3FileTransaction) -> None:
    parts = [{"PartNumber": number, "ETag": etag} for number, etag in txn.parts]
    try:
        await client.complete_multipart_upload(
            Bucket=txn.bucket, Key=txn.key, UploadId=txn.upload_id, MultipartUpload={"Parts": parts}
        )
    except S3_ERRORS as error:
        code = error_code(error)  # "" when S3 did not answer: then nothing is known
        # S3 forgets a completed upload; only completing it creates the object at its key.
        if code and await _exists(client, txn.bucket, txn.key):
            return
        if code == "NoSuchUpload":
            raise _lost(txn) from error
        raise


def _url(txn: S3FileTransaction) -> str:
    return f"s3://{txn.bucket}/{txn.key}"


def _lost(txn: S3FileTransaction) -> ConnectorError:
    return ConnectorError(
        f"S3 file sink cannot commit s3://{txn.bucket}/{txn.key}: S3 no longer knows upload "
        f"{txn.upload_id} and the object does not exist, so the upload was aborted or expired "
        "(a bucket lifecycle rule?) and its records are lost; let incomplete uploads live "
        "longer than the time between checkpoints"
    )


async def _abort(client: S3Client, bucket: str, key: str, upload_id: str) -> None:
    try:
        await client.abort_multipart_upload(Bucket=bucket, Key=key, UploadId=upload_id)
    except S3_ERRORS as error:
        if error_code(error) != "NoSuchUpload":  # aborted before, or completed meanwhile
            raise


async def _exists(client: S3Client, bucket: str, key: str) -> bool:
    try:
        await client.head_object(Bucket=bucket, Key=key)
    except S3_ERRORS as error:
        if error_code(error) in ("404", "NoSuchKey", "NotFound"):
            return False
        raise
    return True


async def _read(client: S3Client, bucket: str, key: str) -> str:
    response = await client.get_object(Bucket=bucket, Key=key)
    async with response["Body"] as body:
        data: bytes = await body.read()
    return data.decode("utf-8")


async def _list_uploads(client: S3Client, bucket: str, prefix: str) -> list[tuple[str, str]]:
    uploads: list[tuple[str, str]] = []
    more: dict[str, str] = {}
    while True:
        page = await client.list_multipart_uploads(Bucket=bucket, Prefix=prefix, **more)
        uploads.extend((item["Key"], item["UploadId"]) for item in page.get("Uploads", []))
        if not page.get("IsTruncated"):
            return uploads
        more = {"KeyMarker": page["NextKeyMarker"], "UploadIdMarker": page["NextUploadIdMarker"]}
