"""S3CheckpointStorage: checkpoints as objects in an S3 bucket (the ``s3`` extra).

Layout, as on a filesystem::

    s3://<bucket>/<prefix>/<job>/chk-<id>/<name>        state objects, one per operator subtask
    s3://<bucket>/<prefix>/<job>/chk-<id>/_metadata     written last; the checkpoint exists
                                                        once it is there

A single PUT is atomic in S3 and S3 reads are strongly consistent, so metadata is written in
one request after every state object it names: a crash leaves either no metadata or all of
it. A checkpoint is discarded metadata first. Locations are full ``s3://bucket/key`` URLs, so
another process can read a checkpoint knowing only its location.

Clients come from ``lockgate.engine.io.s3_client.S3Connection``, opened when an operation
needs one; to keep one client for a whole run, hold the storage open::

    async with S3CheckpointStorage("s3://bucket/checkpoints") as storage:
        env.set_checkpoint_storage(storage)
        await env.execute("job")

The endpoint, credentials and region are found as ``S3Connection`` says.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from functools import partial
from types import TracebackType
from typing import Any

from lockgate.engine.checkpointing.checksum import checksum_of, verify_state
from lockgate.engine.checkpointing.messages import StateHandle
from lockgate.engine.checkpointing.metadata import CheckpointMetadata
from lockgate.engine.checkpointing.storage.checkpoint_storage import (
    missing_state_file,
    newest_readable,
)
from lockgate.engine.checkpointing.storage.layout import (
    METADATA_NAME,
    SHARED_FOLDER,
    check_job_name,
    check_state_name,
    checkpoint_folder,
    checkpoint_id_of,
)
from lockgate.engine.errors import CheckpointNotFound, CheckpointStorageError
from lockgate.engine.io.s3_client import (
    S3_ERRORS,
    S3Client,
    S3Connection,
    error_code,
    list_keys,
    split_s3_url,
)

__all__ = ["S3CheckpointStorage", "S3SavepointFolder"]

_MISSING = frozenset({"NoSuchKey", "404", "NotFound"})


class S3CheckpointStorage:
    """Stores checkpoints as objects under ``s3://bucket/prefix`` (see the module docstring).

    A ``chk-<id>`` prefix is a checkpoint exactly when it holds a ``_metadata`` object, which
    is written with one PUT after every state object it names; prefixes without it (a crash,
    an abort) are ignored and removed by ``discard``. Reads are verified against the size
    and checksum recorded at write time. Use it as an async context manager to keep one
    client open; without that, each operation opens and closes its own.
    """

    def __init__(self, url: str, *, endpoint_url: str | None = None, **client_options: Any) -> None:
        self.bucket, self.prefix = split_s3_url(url)
        self.connection = S3Connection(
            endpoint_url=endpoint_url, user=f"S3 checkpoint storage '{self.url}'", **client_options
        )

    @property
    def url(self) -> str:
        """``s3://bucket/prefix`` (without a trailing slash)."""
        return _url(self.bucket, self.prefix)

    async def __aenter__(self) -> S3CheckpointStorage:
        await self.connection.acquire()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.connection.release()

    async def write_state(
        self, job: str, checkpoint_id: int, name: str, data: bytes
    ) -> StateHandle:
        """Put ``data`` at ``<prefix>/<job>/chk-<id>/<name>``."""
        key = self._key(self._folder_key(job, checkpoint_id), check_state_name(name))
        await self._put(key, data)
        return StateHandle(_url(self.bucket, key), len(data), checksum_of(data))

    async def read_state(self, handle: StateHandle) -> bytes:
        """Get the object at ``handle.location``, verified against its size and checksum."""
        try:
            data = await self._get(handle.location)
        except CheckpointNotFound:
            raise missing_state_file(handle.location) from None
        return verify_state(handle, data)

    async def write_shared(self, job: str, name: str, data: bytes) -> StateHandle:
        """Put ``data`` at ``<prefix>/<job>/shared/<name>``."""
        key = self._key(check_job_name(job), SHARED_FOLDER, check_state_name(name))
        await self._put(key, data)
        return StateHandle(_url(self.bucket, key), len(data), checksum_of(data), is_shared=True)

    async def discard_shared(self, handles: Iterable[StateHandle]) -> None:
        """Delete the shared objects ``handles`` name."""
        locations = [split_s3_url(handle.location, what="shared file") for handle in handles]
        async with self.connection.client() as client:
            for bucket, key in locations:
                with self._translated("delete", _url(bucket, key)):
                    await client.delete_object(Bucket=bucket, Key=key)

    async def write_metadata(self, metadata: CheckpointMetadata) -> str:
        """Put ``<prefix>/<job>/chk-<id>/_metadata`` in one request; return its location."""
        folder = self._folder_key(metadata.job_name, metadata.checkpoint_id)
        key = self._key(folder, METADATA_NAME)
        await self._put(key, metadata.to_bytes())
        return _url(self.bucket, key)

    async def read_metadata(self, location: str) -> CheckpointMetadata:
        """Read the metadata at ``location``: a ``_metadata`` object or a ``chk-<id>`` prefix."""
        location = _metadata_location(location)
        metadata = CheckpointMetadata.from_bytes(await self._get(location), location=location)
        return metadata.resolved(location.rsplit("/", 1)[0])

    async def read_checkpoint(self, job: str, checkpoint_id: int) -> CheckpointMetadata:
        """Read the metadata under ``<prefix>/<job>/chk-<id>/``."""
        folder = self._key(check_job_name(job), checkpoint_folder(checkpoint_id))
        return await self.read_metadata(_url(self.bucket, folder))

    async def latest(self, job: str, *, before: int | None = None) -> CheckpointMetadata | None:
        """Return the newest readable checkpoint of ``job`` (with an id below ``before``)."""
        async with self.connection.client():  # one client for the listing and the reads
            return await newest_readable(
                await self.completed(job), partial(self.read_checkpoint, job), before=before
            )

    async def completed(self, job: str) -> list[int]:
        """Return the ids of ``job``'s ``chk-<id>`` prefixes that hold metadata, ascending."""
        job_prefix = self._key(check_job_name(job)) + "/"
        keys = await self._list(job_prefix)
        return sorted(
            checkpoint_id
            for checkpoint_id in map(_metadata_checkpoint_id, (k[len(job_prefix) :] for k in keys))
            if checkpoint_id is not None
        )

    async def discard(self, job: str, checkpoint_id: int) -> None:
        """Delete every object under ``chk-<id>/``, metadata first; nothing there is fine."""
        folder = self._key(self._folder_key(job, checkpoint_id))
        async with self.connection.client() as client:
            with self._translated("delete", _url(self.bucket, folder)):
                await client.delete_object(Bucket=self.bucket, Key=f"{folder}/{METADATA_NAME}")
                await _delete_keys(
                    client, self.bucket, await list_keys(client, self.bucket, folder + "/")
                )

    def _folder_key(self, job: str, checkpoint_id: int) -> str:
        return f"{check_job_name(job)}/{checkpoint_folder(checkpoint_id)}"

    def _key(self, *segments: str) -> str:
        return "/".join(part for part in (self.prefix, *segments) if part)

    async def _put(self, key: str, data: bytes) -> None:
        async with self.connection.client() as client:
            with self._translated("write", _url(self.bucket, key)):
                await client.put_object(Bucket=self.bucket, Key=key, Body=data)

    async def _get(self, location: str) -> bytes:
        bucket, key = split_s3_url(location, what="checkpoint file")
        async with self.connection.client() as client:
            with self._translated("read", location):
                response = await client.get_object(Bucket=bucket, Key=key)
                async with response["Body"] as body:
                    data: bytes = await body.read()
                    return data

    async def _list(self, prefix: str) -> list[str]:
        async with self.connection.client() as client:
            with self._translated("list", _url(self.bucket, prefix)):
                return await list_keys(client, self.bucket, prefix)

    @contextmanager
    def _translated(self, action: str, location: str) -> Iterator[None]:
        try:
            yield
        except S3_ERRORS as error:  # an error answer has a code; no answer has none
            if error_code(error) in _MISSING:
                raise CheckpointNotFound(
                    f"no checkpoint file at {location}; pass the location write_metadata "
                    "returned, or the checkpoint prefix s3://bucket/.../chk-<id>"
                ) from None
            raise self._failure(action, location, error) from error

    def _failure(self, action: str, location: str, error: Exception) -> CheckpointStorageError:
        return CheckpointStorageError(
            f"cannot {action} checkpoint storage {location}: {error}; check that bucket "
            f"'{self.bucket}' exists and that the endpoint "
            f"({self.connection.endpoint_url or 'AWS'}) and credentials are right"
        )

    def __repr__(self) -> str:
        endpoint = self.connection.endpoint_url
        options = f", endpoint_url={endpoint!r}" if endpoint else ""
        return f"S3CheckpointStorage({self.url!r}{options})"


class S3SavepointFolder(S3CheckpointStorage):
    """One savepoint's prefix: state objects and ``_metadata`` go straight under ``prefix``.

    Its metadata names the objects beside it relatively, so the prefix may be copied
    elsewhere and restored from there.
    """

    def _folder_key(self, job: str, checkpoint_id: int) -> str:
        return ""

    def __repr__(self) -> str:
        return f"S3SavepointFolder({self.url!r})"


async def _delete_keys(client: S3Client, bucket: str, keys: list[str]) -> None:
    for start in range(0, len(keys), 1000):  # DeleteObjects takes at most 1000 keys
        batch = [{"Key": key} for key in keys[start : start + 1000]]
        answer = await client.delete_objects(
            Bucket=bucket, Delete={"Objects": batch, "Quiet": True}
        )
        for failed in answer.get("Errors", []):
            raise CheckpointStorageError(
                f"S3 did not delete s3://{bucket}/{failed['Key']}: {failed['Message']}; "
                "check the permissions of the credentials on the bucket"
            )


def _metadata_checkpoint_id(relative_key: str) -> int | None:
    folder, _, name = relative_key.partition("/")
    return checkpoint_id_of(folder) if name == METADATA_NAME else None


def _metadata_location(location: str) -> str:
    location = location.rstrip("/")
    return location if location.endswith(f"/{METADATA_NAME}") else f"{location}/{METADATA_NAME}"


def _url(bucket: str, key: str) -> str:
    return f"s3://{bucket}/{key}" if key else f"s3://{bucket}"
