"""A counting service: events in over HTTP, a key's count out of the running job, and the
committed counts as a stream of server-sent events; a savepoint when it stops.

    python examples/service.py                  # a demonstration: two runs, then the totals
    python examples/service.py --serve --data /tmp/counting --port 8000
    curl -X POST localhost:8000/events -d '{"id": "e1", "key": "a"}'
    curl localhost:8000/counts/a
    curl -N 'localhost:8000/results?from_beginning=1'

POST /events answers once a completed checkpoint covers the event (``wait_for_commit``), so
an answered event survives a crash; its ``id`` is its idempotency key, so a client that got
no answer sends it again and it still counts once. GET /counts/{key} reads the key's count
from the job's keyed state (``query_state``). GET /results streams every count the job
commits, in commit order. On shutdown the job stops with a savepoint (its folder is logged
and kept in ``service.savepoint``); on startup it resumes from the latest checkpoint of its
storage, or from the savepoint given with --restore-from, or starts fresh the first time.
"""

from __future__ import annotations

import argparse
import json
import logging
import socket
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from lockgate.connectors import CommittedSink, IngressNotCommitted, IngressSource
from lockgate.engine import JobClient, QueryStateError, StreamEnvironment

JOB = "counts"
_LOG = logging.getLogger("examples.service")


def counting_job(
    ingress: IngressSource[dict[str, Any]],
    results: CommittedSink[tuple[str, int]],
    data: Path,
    *,
    parallelism: int = 2,
    checkpoint_interval: float = 0.2,
) -> StreamEnvironment:
    """Count events by key; checkpoints in ``data``/checkpoints."""
    env = StreamEnvironment(parallelism=parallelism)
    env.enable_checkpointing(checkpoint_interval)
    env.set_checkpoint_storage((data / "checkpoints").as_uri())
    (
        env.from_source(ingress, uid="events")
        .map(lambda event: (event["key"], 1), uid="ones")
        .key_by(lambda pair: pair[0])
        .reduce(lambda a, b: (a[0], a[1] + b[1]), uid="counts")
        .sink_to(results, uid="results")
    )
    return env


class CountingService:
    """The job and its two ends, ingress and committed results, for the routes to use."""

    def __init__(self, data: Path, *, restore_from: str = "latest", **job: Any) -> None:
        self.data = data
        self.restore_from = restore_from
        self.job_options = job
        self.ingress: IngressSource[dict[str, Any]] = IngressSource(capacity=10_000)
        self.results: CommittedSink[tuple[str, int]] = CommittedSink(history=10_000)
        self.savepoint: str | None = None
        self._job: JobClient | None = None

    @asynccontextmanager
    async def lifespan(self, app: Starlette) -> AsyncIterator[None]:
        """Run the job while the app serves: resume it on startup, stop it with a savepoint."""
        env = counting_job(self.ingress, self.results, self.data, **self.job_options)
        async with env.start(JOB, restore_from=self.restore_from, if_missing="start") as job:
            self._job = job
            yield
            self.savepoint = await job.stop_with_savepoint(str(self.data / "savepoints"))
            _LOG.info("stopped with savepoint %s", self.savepoint)

    async def post_event(self, request: Request) -> Response:
        """Send the event into the job; answer once a completed checkpoint covers it."""
        event = await request.json()
        if not isinstance(event, dict) or not isinstance(event.get("key"), str):
            return JSONResponse({"error": 'send {"id": "...", "key": "..."}'}, status_code=400)
        key = event.get("id")
        try:
            await self.ingress.send(event, wait_for_commit=True, idempotency_key=key)
        except IngressNotCommitted:  # the job restarted first: the client may send it again
            return JSONResponse({"error": "not committed; send it again"}, status_code=503)
        return JSONResponse({"committed": True})

    async def get_count(self, request: Request) -> Response:
        """The key's count now, from the running job's state."""
        key = request.path_params["key"]
        try:
            reduced = await self.job.query_state("counts", "reduced", key)
        except QueryStateError as error:  # restarting: ask again in a moment
            return JSONResponse({"error": str(error)}, status_code=503)
        return JSONResponse({"key": key, "count": 0 if reduced is None else reduced[1]})

    async def stream_results(self, request: Request) -> Response:
        """Every count the job commits, as server-sent events, in commit order."""
        from_beginning = request.query_params.get("from_beginning") == "1"
        subscription = self.results.subscribe(from_beginning=from_beginning)

        async def events() -> AsyncIterator[str]:
            async with subscription as counts:
                async for key, count in counts:
                    yield f"data: {json.dumps({'key': key, 'count': count})}\n\n"

        return StreamingResponse(events(), media_type="text/event-stream")

    @property
    def job(self) -> JobClient:
        assert self._job is not None, "the app serves only while its job runs"
        return self._job


def create_app(data: Path, **options: Any) -> Starlette:
    """The service's app; ``app.state.service`` is its ``CountingService``."""
    service = CountingService(data, **options)
    app = Starlette(
        routes=[
            Route("/events", service.post_event, methods=["POST"]),
            Route("/counts/{key}", service.get_count),
            Route("/results", service.stream_results),
        ],
        lifespan=service.lifespan,
    )
    app.state.service = service
    return app


@asynccontextmanager
async def serving(app: Starlette) -> AsyncIterator[str]:
    """Serve ``app`` with uvicorn on 127.0.0.1 at a free port; yield its URL, then stop it.

    The socket listens before uvicorn starts, so a request sent at once waits in its
    backlog until the app's startup (the job's start) is done.
    """
    import uvicorn

    listening = socket.create_server(("127.0.0.1", 0))
    port = listening.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, lifespan="on", log_level="warning"))
    async with anyio.create_task_group() as group:
        group.start_soon(partial(server.serve, sockets=[listening]))
        try:
            yield f"http://127.0.0.1:{port}"
        finally:
            server.should_exit = True  # stops serving, then the lifespan stops the job


async def post_events(client: httpx.AsyncClient, events: list[dict[str, Any]]) -> None:
    """POST the events at once; each answer comes once a checkpoint covers its event."""

    async def post(event: dict[str, Any]) -> None:
        response = await client.post("/events", json=event)
        response.raise_for_status()

    async with anyio.create_task_group() as group:
        for event in events:
            group.start_soon(post, event)


async def counts_of(client: httpx.AsyncClient, keys: str) -> dict[str, int]:
    """Each key's count, read from the running job."""
    return {key: (await client.get(f"/counts/{key}")).json()["count"] for key in keys}


async def demo(data: Path) -> dict[str, int]:
    """Count 30 events over two runs of the service, the second from the first's savepoint."""
    first = create_app(data, checkpoint_interval=0.05)
    async with serving(first) as url, httpx.AsyncClient(base_url=url) as client:
        await post_events(client, [{"id": f"e{n}", "key": "ab"[n % 2]} for n in range(20)])
        await post_events(client, [{"id": "e3", "key": "b"}])  # a retry: it counts once
        print("after the first run:", await counts_of(client, "ab"))
    savepoint = first.state.service.savepoint
    second = create_app(data, restore_from=savepoint, checkpoint_interval=0.05)
    async with serving(second) as url, httpx.AsyncClient(base_url=url) as client:
        await post_events(client, [{"id": f"e{n}", "key": "ab"[n % 2]} for n in range(20, 30)])
        totals = await counts_of(client, "ab")
        print("after the second run, restored from its savepoint:", totals)
    return totals


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--serve", action="store_true", help="serve until stopped")
    parser.add_argument("--data", type=Path, default=Path("counting"))
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--restore-from", default="latest")
    arguments = parser.parse_args()
    if not arguments.serve:  # a demonstration, in a folder of its own
        with tempfile.TemporaryDirectory() as folder:
            anyio.run(demo, Path(folder))
        return
    import uvicorn

    logging.basicConfig(level=logging.INFO)
    app = create_app(arguments.data, restore_from=arguments.restore_from)
    # Streams of results stay open: a graceful shutdown waits for them only so long.
    uvicorn.run(app, host=arguments.host, port=arguments.port, timeout_graceful_shutdown=5)


if __name__ == "__main__":
    main()
