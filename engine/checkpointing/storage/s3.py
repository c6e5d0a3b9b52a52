"""S3CheckpointStorage: checkpoints as objects in an S3 bucket (the ``s3`` extra).

Layout, as on a filesystem::

    s3://<bucket>/<prefix>/<job>/chk-<id>/<name>        state objects, one per operator subtask
    s3://<bucket>/<prefix>/<job>/chk-<id>/_metadata     written last; the checkpoint exists
                                                        once it is there

A single PUT is atomic in S3 and S3 reads are strongly consistent, so metadata is written in
one request after every state object it names: a crash leaves either no metadata or all of
it. A checkpoint is discarded metadata first. Locations are full ``s3://bucket/key`` URLs, so
another process can read a checkpoint knowing only its location.

Clients: ``S3Connection`` opens an aiobotocore client inside the running event loop when an
operation needs one and closes it when no operation needs it any more, so a storage the
engine never closes leaves nothing open (no "unclosed" warnings). Overlapping operations
share one client. An operation with a client of its own takes about 30 ms against the moto
server, against about 6 ms with a client already open (more with TLS: a new connection and
the CA bundle per client). To keep one client for a whole run, hold the storage open::

    async with S3CheckpointStorage("s3://bucket/checkpoints") as storage:
        env.set_checkpoint_storage(storage)
        await env.execute("job")

Endpoint: ``endpoint_url`` if given, else the environment variable ``LOCKGATE_S3_ENDPOINT``,
else ``AWS_ENDPOINT_URL``, else AWS. With an endpoint the client uses path-style addressing
(``http://host/bucket/key``), which S3-compatible servers (MinIO, moto) expect. Credentials
and region come from the keyword options or, as for any AWS client, from the environment.
"""

from __future__ import annotations

import functools
import os
from collections.abc import AsyncIterator, Iterable, Iterator
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Protocol

import anyio

from lockgate.engine.checkpointing.checksum import checksum_of, verify_state
from lockgate.engine.checkpointing.messages import StateHandle
from lockgate.engine.checkpointing.metadata import CheckpointMetadata
from lockgate.engine.checkpointing.storage.checkpoint_storage import newest_readable
from lockgate.engine.checkpointing.storage.layout import (
    METADATA_NAME,
    SHARED_FOLDER,
    check_job_name,
    check_state_name,
    checkpoint_folder,
    checkpoint_id_of,
)
from lockgate.engine.errors import CheckpointNotFound, CheckpointStorageError

try:  # aiobotocore ships no type information: these names are typed as Any.
    from aiobotocore.config import AioConfig  # type: ignore[import-untyped]
    from aiobotocore.session import AioSession  # type: ignore[import-untyped]
    from botocore.exceptions import BotoCoreError, ClientError  # type: ignore[import-untyped]
except ImportError as error:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        "S3 support needs aiobotocore: pip install 'lockgate[s3]'", name=error.name
    ) from error

__all__ = [
    "ENDPOINT_VARIABLES",
    "S3_ERRORS",
    "S3CheckpointStorage",
    "S3SavepointFolder",
    "S3Client",
    "S3Connection",
    "S3ConnectionStatistics",
    "error_code",
    "list_keys",
    "split_s3_url",
]

ENDPOINT_VARIABLES = ("LOCKGATE_S3_ENDPOINT", "AWS_ENDPOINT_URL")
"""Environment variables read, in order, for the endpoint when none is given."""

S3_ERRORS: tuple[type[Exception], ...] = (ClientError, BotoCoreError)
"""What an S3 client raises: an error answer (``error_code`` reads its code), or no answer."""

_SCHEMES = ("s3://", "s3a://")
_MISSING = frozenset({"NoSuchKey", "404", "NotFound"})


class S3Client(Protocol):
    """The part of an aiobotocore S3 client lockgate uses (aiobotocore has no type stubs).

    Every method takes the keyword arguments of the S3 API action of the same name and
    returns its response as a dict.
    """

    async def put_object(self, **kwargs: Any) -> dict[str, Any]: ...  # noqa: D102
    async def get_object(self, **kwargs: Any) -> dict[str, Any]: ...  # noqa: D102
    async def head_object(self, **kwargs: Any) -> dict[str, Any]: ...  # noqa: D102
    async def delete_object(self, **kwargs: Any) -> dict[str, Any]: ...  # noqa: D102
    async def delete_objects(self, **kwargs: Any) -> dict[str, Any]: ...  # noqa: D102
    async def list_objects_v2(self, **kwargs: Any) -> dict[str, Any]: ...  # noqa: D102
    async def create_multipart_upload(self, **kwargs: Any) -> dict[str, Any]: ...  # noqa: D102
    async def upload_part(self, **kwargs: Any) -> dict[str, Any]: ...  # noqa: D102
    async def complete_multipart_upload(self, **kwargs: Any) -> dict[str, Any]: ...  # noqa: D102
    async def abort_multipart_upload(self, **kwargs: Any) -> dict[str, Any]: ...  # noqa: D102
    async def list_multipart_uploads(self, **kwargs: Any) -> dict[str, Any]: ...  # noqa: D102


@dataclass(frozen=True, slots=True)
class S3ConnectionStatistics:
    """How many clients a connection opened in all, and how many callers use one now."""

    clients_opened: int
    holders: int


class S3Connection:
    """How to reach S3 (endpoint, region, credentials, client config); lends out clients.

    ``client()`` yields the client every current caller shares, opening one in the running
    event loop when there is none; the last caller to leave closes it. A connection therefore
    never holds a client nobody uses, whether or not its owner is ever closed.

    Options:
        endpoint_url: the S3 endpoint; default ``LOCKGATE_S3_ENDPOINT``, then
            ``AWS_ENDPOINT_URL``, then AWS itself.
        client_options: passed to ``AioSession.create_client("s3", ...)``:
            ``region_name``, ``aws_access_key_id``, ``aws_secret_access_key``,
            ``aws_session_token``, ``config`` (an ``AioConfig``; the default signs with
            SigV4 and, with an endpoint, addresses buckets by path).
    """

    def __init__(self, *, endpoint_url: str | None = None, **client_options: Any) -> None:
        self.endpoint_url = endpoint_url or _endpoint_from_environment()
        self._options = {"endpoint_url": self.endpoint_url, **client_options}
        self._options.setdefault("config", _default_config(self.endpoint_url))
        if (self.endpoint_url or "").startswith("http://"):
            # No TLS to verify: skip loading the CA bundle, 30-80 ms for every client.
            self._options.setdefault("verify", False)
        self._session: Any = None
        self._lock: anyio.Lock | None = None
        self._shared: S3Client | None = None
        self._stack: AsyncExitStack | None = None
        self._holders = 0
        self._clients_opened = 0

    @asynccontextmanager
    async def client(self) -> AsyncIterator[S3Client]:
        """Yield the shared client for the block; open it if needed, close it if last out."""
        client = await self.acquire()
        try:
            yield client
        finally:
            await self.release()

    async def acquire(self) -> S3Client:
        """Start using the shared client (opening it if none is open) and return it."""
        lock = self._lock = self._lock or anyio.Lock()
        async with lock:
            if self._shared is None:
                self._shared = await self._open()
            self._holders += 1
            return self._shared

    async def release(self) -> None:
        """Stop using the shared client; the last caller to release it closes it."""
        self._holders -= 1
        if self._holders == 0 and self._stack is not None:
            stack, self._stack, self._shared = self._stack, None, None
            with anyio.CancelScope(shield=True):  # a cancelled caller still closes its client
                await stack.aclose()

    def statistics(self) -> S3ConnectionStatistics:
        """Return the number of clients opened so far and of callers using one now."""
        return S3ConnectionStatistics(self._clients_opened, self._holders)

    async def _open(self) -> S3Client:
        if self._session is None:
            self._session = AioSession()
            self._session.register_component("data_loader", _service_models())
        stack = AsyncExitStack()
        client: S3Client = await stack.enter_async_context(
            self._session.create_client("s3", **self._options)
        )
        self._stack = stack
        self._clients_opened += 1
        return client

    def __repr__(self) -> str:
        endpoint = self.endpoint_url or "AWS"
        return f"<S3Connection {endpoint} holders={self._holders}>"


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
        self.connection = S3Connection(endpoint_url=endpoint_url, **client_options)

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
        return verify_state(handle, await self._get(handle.location))

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

    async def latest(self, job: str) -> CheckpointMetadata | None:
        """Return the newest readable checkpoint of ``job``, or ``None``."""
        async with self.connection.client():  # one client for the listing and the reads
            return await newest_readable(
                await self.completed(job),
                lambda checkpoint_id: self.read_metadata(
                    _url(self.bucket, self._key(job, checkpoint_folder(checkpoint_id)))
                ),
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
        except ClientError as error:
            if error_code(error) in _MISSING:
                raise CheckpointNotFound(
                    f"no checkpoint file at {location}; pass the location write_metadata "
                    "returned, or the checkpoint prefix s3://bucket/.../chk-<id>"
                ) from None
            raise self._failure(action, location, error) from error
        except BotoCoreError as error:
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


def split_s3_url(url: str, *, what: str = "checkpoint storage") -> tuple[str, str]:
    """Return ``(bucket, key prefix)`` of ``s3://bucket/prefix``; slashes around are dropped.

    Raises:
        ValueError: ``url`` is not an ``s3://`` (or ``s3a://``) URL with a bucket.
    """
    scheme = next((scheme for scheme in _SCHEMES if url.startswith(scheme)), None)
    bucket, _, prefix = url.removeprefix(scheme or "").partition("/")
    if scheme is None or not bucket:
        raise ValueError(f"{what} {url!r} is not an S3 URL; write s3://bucket/prefix")
    return bucket, prefix.strip("/")


def error_code(error: BaseException) -> str:
    """Return the S3 error code of a botocore ``ClientError`` (``""`` for other errors)."""
    response = getattr(error, "response", None) or {}
    return str(response.get("Error", {}).get("Code", ""))


async def list_keys(client: S3Client, bucket: str, prefix: str) -> list[str]:
    """Return every key in ``bucket`` that starts with ``prefix``, page after page."""
    keys: list[str] = []
    more: dict[str, str] = {}
    while True:
        page = await client.list_objects_v2(Bucket=bucket, Prefix=prefix, **more)
        keys.extend(item["Key"] for item in page.get("Contents", []))
        if not page.get("IsTruncated"):
            return keys
        more = {"ContinuationToken": page["NextContinuationToken"]}


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


@functools.cache
def _service_models() -> Any:
    # botocore parses S3's service model once per loader, 100-250 ms: share one loader.
    return AioSession().get_component("data_loader")


def _endpoint_from_environment() -> str | None:
    return next((os.environ[name] for name in ENDPOINT_VARIABLES if os.environ.get(name)), None)


def _default_config(endpoint_url: str | None) -> Any:
    addressing = "path" if endpoint_url else "auto"
    return AioConfig(signature_version="s3v4", s3={"addressing_style": addressing})
