"""rest_app: the REST API of the jobs in a ``JobRegistry``, as a Starlette (ASGI) app.

::

    GET  /jobs                          every job's overview
    GET  /jobs/{name}                   status, attempt, times, plan (chains, edges, parallelism)
    GET  /jobs/{name}/vertices          per chain and subtask: metrics, backpressure level
    GET  /jobs/{name}/checkpoints       counts, latest completed and failed, history
    GET  /jobs/{name}/exceptions        every failed attempt, newest first
    GET  /jobs/{name}/watermarks        per chain and subtask: input and output watermark
    POST /jobs/{name}/savepoints        {"path": P}: take a savepoint under P, answer its folder
    POST /jobs/{name}/stop              {"savepoint": P, "drain": false}: stop with a savepoint
    POST /jobs/{name}/cancel            cancel the job
    GET  /metrics                       the Prometheus text format (lockgate.engine.web.prometheus)
    GET  /                              redirects to the dashboard, dashboard/
    GET  /dashboard/...                 the web dashboard (its files: dashboard_routes)

Every answer is JSON except ``/metrics`` and the dashboard's files; an error is
``{"error": message, "type": name}`` with the message of the Python error (``UnknownJob``:
404; a bad body or target: 400; a job that ended or a savepoint that failed: 409; 500
otherwise). With a ``token``, the POST endpoints want ``Authorization: Bearer <token>``:
without it they answer 401, with another token 403; reading needs no token. The app calls
the jobs' ``JobClient`` methods, so it must run on the event loop the jobs run on (mounted
in the service that started them, or with ``serve``).
"""

from __future__ import annotations

import hmac
import importlib
from collections.abc import Awaitable, Callable
from functools import wraps
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from lockgate.engine.api.client import JobClient
from lockgate.engine.errors import CheckpointError, JobError, UnknownJob
from lockgate.engine.web import views
from lockgate.engine.web.dashboard_routes import dashboard_routes
from lockgate.engine.web.registry import JobRegistry

__all__ = [
    "PROMETHEUS_MODULE",
    "BadRequest",
    "Forbidden",
    "MetricsExportMissing",
    "Unauthorized",
    "error_response",
    "rest_app",
]

PROMETHEUS_MODULE = "lockgate.engine.web.prometheus"
"""The module whose ``prometheus_text(jobs) -> bytes`` answers ``GET /metrics``."""

PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

Endpoint = Callable[[Request], Awaitable[Response]]


class BadRequest(ValueError):
    """The request's body is not what the endpoint takes; the message says what is."""


class Unauthorized(Exception):
    """A mutating request came without the bearer token the app was given."""


class Forbidden(Exception):
    """A mutating request came with another bearer token than the app's."""


class MetricsExportMissing(Exception):
    """``GET /metrics`` found no Prometheus export module to answer with."""


_STATUS: tuple[tuple[type[BaseException], int], ...] = (
    (UnknownJob, 404),
    (Unauthorized, 401),
    (Forbidden, 403),
    (ValueError, 400),
    (CheckpointError, 409),
    (JobError, 409),
    (MetricsExportMissing, 501),
)


def rest_app(registry: JobRegistry, *, token: str | None = None) -> Starlette:
    """Return the REST API of ``registry``'s jobs; POST endpoints want ``token`` if given.

    Mount it in a Starlette or FastAPI service (``app.mount("/lockgate", rest_app(jobs))``)
    that runs on the jobs' event loop, or serve it with ``serve``.
    """
    if token is not None and not token:
        raise ValueError("token must not be empty; pass None to need no token")
    api = _Api(registry, token)
    reads: list[tuple[str, Endpoint]] = [
        ("/jobs", api.jobs),
        ("/jobs/{name}", api.job),
        ("/jobs/{name}/vertices", api.vertices),
        ("/jobs/{name}/checkpoints", api.checkpoints),
        ("/jobs/{name}/exceptions", api.exceptions),
        ("/jobs/{name}/watermarks", api.watermarks),
        ("/metrics", api.metrics),
    ]
    writes: list[tuple[str, Endpoint]] = [
        ("/jobs/{name}/savepoints", api.savepoint),
        ("/jobs/{name}/stop", api.stop),
        ("/jobs/{name}/cancel", api.cancel),
    ]
    routes = [Route(path, _answering_errors(endpoint)) for path, endpoint in reads]
    routes += [Route(p, _answering_errors(e), methods=["POST"]) for p, e in writes]
    return Starlette(
        routes=[*routes, *dashboard_routes()], exception_handlers={HTTPException: _http_error}
    )


def error_response(error: BaseException) -> JSONResponse:
    """The JSON answer to ``error``: its message and type, with the status it maps to."""
    status = next((code for kind, code in _STATUS if isinstance(error, kind)), 500)
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    body = {"error": str(error), "type": type(error).__name__}
    return JSONResponse(body, status_code=status, headers=headers)


def _answering_errors(endpoint: Endpoint) -> Endpoint:
    @wraps(endpoint)
    async def answered(request: Request) -> Response:
        try:
            return await endpoint(request)
        except Exception as error:  # every error becomes its JSON answer
            return error_response(error)

    return answered


class _Api:
    """The endpoints, over one registry and token."""

    def __init__(self, registry: JobRegistry, token: str | None) -> None:
        self.registry = registry
        self.token = token

    async def jobs(self, request: Request) -> Response:
        return JSONResponse(views.jobs_document(self.registry.jobs()))

    async def job(self, request: Request) -> Response:
        return JSONResponse(views.job_document(self._job(request)))

    async def vertices(self, request: Request) -> Response:
        return JSONResponse(views.vertices_document(self._job(request)))

    async def checkpoints(self, request: Request) -> Response:
        return JSONResponse(views.checkpoints_document(self._job(request)))

    async def exceptions(self, request: Request) -> Response:
        return JSONResponse(views.exceptions_document(self._job(request)))

    async def watermarks(self, request: Request) -> Response:
        return JSONResponse(views.watermarks_document(self._job(request)))

    async def savepoint(self, request: Request) -> Response:
        self._authorize(request)
        job = self._job(request)
        body = await _body(request)
        folder = await job.trigger_savepoint(_text(body, "path"))
        return JSONResponse({"savepoint": folder})

    async def stop(self, request: Request) -> Response:
        self._authorize(request)
        job = self._job(request)
        body = await _body(request)
        drain = body.get("drain", False)
        if not isinstance(drain, bool):
            raise BadRequest(f"'drain' must be true or false; got {drain!r}")
        folder = await job.stop_with_savepoint(_text(body, "savepoint"), drain=drain)
        return JSONResponse({"savepoint": folder, "status": job.status.name})

    async def cancel(self, request: Request) -> Response:
        self._authorize(request)
        job = self._job(request)
        job.cancel()
        return JSONResponse({"status": job.status.name}, status_code=202)

    async def metrics(self, request: Request) -> Response:
        try:
            prometheus = importlib.import_module(PROMETHEUS_MODULE)
        except ModuleNotFoundError as missing:
            what = (
                "this lockgate has no Prometheus export"
                if missing.name == PROMETHEUS_MODULE
                else f"the Prometheus export needs the module '{missing.name}'; install it"
            )
            raise MetricsExportMissing(f"GET /metrics cannot answer: {what}") from missing
        text: bytes = prometheus.prometheus_text(self.registry.jobs())
        return Response(text, media_type=PROMETHEUS_CONTENT_TYPE)

    def _job(self, request: Request) -> JobClient:
        return self.registry.get(request.path_params["name"])

    def _authorize(self, request: Request) -> None:
        if self.token is None:
            return
        scheme, _, given = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not given:
            raise Unauthorized(
                f"{request.method} {request.url.path} needs the API's token: send the header "
                "'Authorization: Bearer <token>'"
            )
        if not hmac.compare_digest(given.strip().encode(), self.token.encode()):
            raise Forbidden(f"{request.method} {request.url.path}: the bearer token is wrong")


async def _body(request: Request) -> dict[str, Any]:
    raw = await request.body()
    if not raw.strip():
        return {}
    try:
        body = await request.json()
    except ValueError as error:
        raise BadRequest(f"the request body is not JSON: {error}") from error
    if not isinstance(body, dict):
        raise BadRequest(f"the request body must be a JSON object; got {type(body).__name__}")
    return body


def _text(body: dict[str, Any], field: str) -> str:
    value = body.get(field)
    if not isinstance(value, str) or not value:
        raise BadRequest(
            f"the request body needs '{field}': the folder to write the savepoint under, "
            'as a file:// or s3:// URL or an absolute path, e.g. {"' + field + '": "file:///sp"}'
        )
    return value


async def _http_error(request: Request, error: Exception) -> Response:
    assert isinstance(error, HTTPException)
    return JSONResponse(
        {"error": f"{request.method} {request.url.path}: {error.detail}", "type": "HTTPException"},
        status_code=error.status_code,
    )
