"""S3Client and S3Connection: the S3 client that checkpoint storage and connectors share.

``S3Connection`` opens an aiobotocore client (the ``s3`` extra) inside the running event
loop when an operation needs one and closes it when no operation needs it any more, so a
storage the engine never closes leaves nothing open (no "unclosed" warnings). Overlapping
operations share one client; opening one costs tens of milliseconds (a new connection and
the CA bundle), so an owner that holds its connection open keeps one client for a run.

Endpoint: ``endpoint_url`` if given, else the environment variable ``LOCKGATE_S3_ENDPOINT``,
else ``AWS_ENDPOINT_URL``, else AWS. With an endpoint the client uses path-style addressing
(``http://host/bucket/key``), which S3-compatible servers (MinIO, moto) expect. Credentials
and region come from the keyword options or, as for any AWS client, from the environment.
"""

from __future__ import annotations

import functools
import os
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import Any, Protocol

import anyio

from lockgate.engine.io.asyncio_only import require_asyncio

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
        user: what uses the connection, for error messages (``"S3 checkpoint storage
            's3://bucket/prefix'"``); a client opened on trio raises ``AsyncioRequired``
            naming it, as aiobotocore runs on asyncio only.
        client_options: passed to ``AioSession.create_client("s3", ...)``:
            ``region_name``, ``aws_access_key_id``, ``aws_secret_access_key``,
            ``aws_session_token``, ``config`` (an ``AioConfig``; the default signs with
            SigV4 and, with an endpoint, addresses buckets by path).
    """

    def __init__(
        self, *, endpoint_url: str | None = None, user: str = "S3", **client_options: Any
    ) -> None:
        self.endpoint_url = endpoint_url or _endpoint_from_environment()
        self.user = user
        self._options = {"endpoint_url": self.endpoint_url, **client_options}
        self._options.setdefault("config", _default_config(self.endpoint_url))
        if (self.endpoint_url or "").startswith("http://"):
            # No TLS to verify: skip loading the CA bundle, which every new client would pay for.
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
        require_asyncio(self.user, "aiobotocore")
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


@functools.cache
def _service_models() -> Any:
    # botocore parses S3's service model once per loader, a slow parse: share one loader.
    return AioSession().get_component("data_loader")


def _endpoint_from_environment() -> str | None:
    return next((os.environ[name] for name in ENDPOINT_VARIABLES if os.environ.get(name)), None)


def _default_config(endpoint_url: str | None) -> Any:
    addressing = "path" if endpoint_url else "auto"
    return AioConfig(signature_version="s3v4", s3={"addressing_style": addressing})
