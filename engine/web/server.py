"""serve: the REST API on a uvicorn server that runs on the caller's event loop."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

import anyio
import uvicorn

from lockgate.engine.io.asyncio_only import require_asyncio
from lockgate.engine.web.registry import JobRegistry
from lockgate.engine.web.rest import rest_app

__all__ = ["GRACEFUL_SHUTDOWN", "RestServer", "serve"]

GRACEFUL_SHUTDOWN = 5
"""Seconds the requests in progress may take to answer once a ``serve`` block is left."""


@dataclass(frozen=True, slots=True)
class RestServer:
    """Where a ``serve`` block's REST API listens: the host and the port it bound.

    ``port`` is the port the socket got, also when ``serve`` was asked for port 0 (any free
    one); ``url`` is the base URL clients use.
    """

    host: str
    port: int

    @property
    def url(self) -> str:
        """``http://host:port``, with an IPv6 host in brackets."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"


@asynccontextmanager
async def serve(
    registry: JobRegistry,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    token: str | None = None,
) -> AsyncIterator[RestServer]:
    """Serve ``rest_app(registry, token=token)`` on ``host:port`` for the block's duration.

    The server runs on this event loop, beside the jobs it shows; it listens once the block
    is entered and stops accepting connections when the block is left, after the requests
    in progress got their answers (for at most ``GRACEFUL_SHUTDOWN`` seconds). It binds
    127.0.0.1 unless told otherwise; port 0 takes any free port, which the yielded
    ``RestServer`` reports. uvicorn runs on asyncio only: on trio this raises
    ``AsyncioRequired``. The library configures no logging handler.
    """
    require_asyncio("the REST server", "uvicorn")
    config = uvicorn.Config(
        rest_app(registry, token=token),
        lifespan="off",
        log_config=None,
        access_log=False,
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN,
    )
    config.load()
    server = uvicorn.Server(config)
    server.lifespan = config.lifespan_class(config)
    listening = _bound_socket(host, port)
    # startup()/shutdown() rather than serve(): serve() takes over SIGINT and SIGTERM, which
    # belong to the host (lockgate run stops its job with a savepoint on SIGTERM).
    await server.startup(sockets=[listening])
    try:
        yield RestServer(host, listening.getsockname()[1])
    finally:
        server.should_exit = True
        with anyio.CancelScope(shield=True):  # also when the block was cancelled
            await server.shutdown(sockets=[listening])


def _bound_socket(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        return socket.create_server((host, port), family=family, reuse_port=False)
    except OSError as error:
        raise OSError(
            error.errno,
            f"the REST API cannot listen on {host}:{port}: {error.strerror}; choose another "
            "port, or port 0 for any free one",
        ) from error
