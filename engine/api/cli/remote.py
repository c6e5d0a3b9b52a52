"""``lockgate list|status|savepoint|stop|cancel``: a running job's REST API, from the shell.

Each command sends one or two requests to ``--address`` (the URL ``lockgate run --rest``
prints, or any service that mounts ``rest_app``) with httpx (the extra ``cli``), and
prints the answer: text, or with ``--json`` the API's document. ``--token`` (or
``LOCKGATE_TOKEN``) is sent as a bearer token. An error answer is printed as the API's
message, one line on standard error, with exit status 1; an address that does not answer
ends with status 2.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any, TypeVar
from urllib.parse import quote

import click
import orjson

from lockgate.engine.api.cli.exits import EXIT_OK, EXIT_PROBLEMS, CommandError

__all__ = ["cancel", "list_jobs", "status", "stop", "trigger"]

F = TypeVar("F", bound=Callable[..., Any])

READ_TIMEOUT = 10.0
"""Seconds a read (``list``, ``status``) waits for its answer."""


def _api_options(function: F) -> F:
    function = click.option(
        "--token",
        envvar="LOCKGATE_TOKEN",
        help="the API's bearer token (default: $LOCKGATE_TOKEN)",
    )(function)
    return click.option(
        "--address",
        envvar="LOCKGATE_ADDRESS",
        required=True,
        metavar="URL",
        help="the REST API's base URL, e.g. http://127.0.0.1:8081 (default: $LOCKGATE_ADDRESS)",
    )(function)


def _json_option(function: F) -> F:
    return click.option("--json", "as_json", is_flag=True, help="print the API's JSON")(function)


@click.command("list")
@_api_options
@_json_option
def list_jobs(*, address: str, token: str | None, as_json: bool) -> int:
    """List the jobs the API shows, with their status."""
    document = _Api(address, token).get("/jobs")
    if as_json:
        return _printed_json(document)
    click.echo(f"{'NAME':<24} {'STATUS':<11} {'ATTEMPT':>7}  STARTED")
    for job in document["jobs"]:
        started = _time_of_day(job["start_time"])
        click.echo(f"{job['name']:<24} {job['status']:<11} {job['attempt']:>7}  {started}")
    return EXIT_OK


@click.command()
@click.argument("name", metavar="NAME")
@_api_options
@_json_option
def status(name: str, *, address: str, token: str | None, as_json: bool) -> int:
    """Show a job's status, its chains with their backpressure, and its checkpoints."""
    api = _Api(address, token)
    job = api.get(_job_path(name))
    if as_json:
        return _printed_json(job)
    vertices = api.get(_job_path(name, "vertices"))["vertices"]
    checkpoints = api.get(_job_path(name, "checkpoints"))
    click.echo("\n".join(_described(job, vertices, checkpoints)))
    return EXIT_OK


@click.command()
@click.argument("name", metavar="NAME")
@click.argument("path", metavar="PATH")
@_api_options
@click.option("--timeout", type=float, default=600.0, show_default=True, help="seconds to wait")
def trigger(name: str, path: str, *, address: str, token: str | None, timeout: float) -> int:
    """Take a savepoint of the running job NAME under PATH; print its folder."""
    answer = _Api(address, token).post(_job_path(name, "savepoints"), {"path": path}, timeout)
    click.echo(answer["savepoint"])
    return EXIT_OK


@click.command()
@click.argument("name", metavar="NAME")
@click.option("--savepoint", required=True, metavar="PATH", help="the folder to write it under")
@click.option("--drain", is_flag=True, help="end the input first, so every operator flushes")
@_api_options
@click.option("--timeout", type=float, default=600.0, show_default=True, help="seconds to wait")
def stop(
    name: str, *, savepoint: str, drain: bool, address: str, token: str | None, timeout: float
) -> int:
    """Stop the job NAME with a savepoint under --savepoint; print the savepoint's folder."""
    body = {"savepoint": savepoint, "drain": drain}
    answer = _Api(address, token).post(_job_path(name, "stop"), body, timeout)
    click.echo(answer["savepoint"])
    return EXIT_OK


@click.command()
@click.argument("name", metavar="NAME")
@_api_options
def cancel(name: str, *, address: str, token: str | None) -> int:
    """Cancel the job NAME; print its status (FINISHING until its subtasks stopped)."""
    answer = _Api(address, token).post(_job_path(name, "cancel"), {}, READ_TIMEOUT)
    click.echo(answer["status"])
    return EXIT_OK


class _Api:
    """The REST API at one address: JSON answers, or a ``CommandError`` with its message."""

    def __init__(self, address: str, token: str | None) -> None:
        self.address = address.rstrip("/")
        self.headers = {"Authorization": f"Bearer {token}"} if token else {}

    def get(self, path: str) -> dict[str, Any]:
        return self._send("GET", path, None, READ_TIMEOUT)

    def post(self, path: str, body: dict[str, Any], timeout: float) -> dict[str, Any]:
        return self._send("POST", path, body, timeout)

    def _send(
        self, method: str, path: str, body: dict[str, Any] | None, timeout: float
    ) -> dict[str, Any]:
        httpx = _httpx()
        url = f"{self.address}{path}"
        try:
            answer = httpx.request(method, url, json=body, headers=self.headers, timeout=timeout)
        except httpx.HTTPError as error:
            raise CommandError(
                f"no answer from the REST API at {self.address} ({error!r}); is `lockgate run "
                "--rest` running there? check --address"
            ) from error
        document: dict[str, Any] = _decoded(answer, url)
        if answer.status_code >= 400:
            raise CommandError(
                f"{document.get('error', answer.text)} (HTTP {answer.status_code})",
                status=EXIT_PROBLEMS,
            )
        return document


def _httpx() -> Any:
    try:
        return importlib.import_module("httpx")
    except ModuleNotFoundError as error:
        raise CommandError(
            "talking to the REST API needs httpx: pip install 'lockgate[cli]'"
        ) from error


def _decoded(answer: Any, url: str) -> Any:
    try:
        return orjson.loads(answer.content)
    except orjson.JSONDecodeError as error:
        raise CommandError(
            f"{url} answered HTTP {answer.status_code} with no JSON; is it lockgate's REST API?"
        ) from error


def _job_path(name: str, *rest: str) -> str:
    return "/".join(["/jobs", quote(name, safe=""), *rest])


def _printed_json(document: Any) -> int:
    click.echo(orjson.dumps(document, option=orjson.OPT_INDENT_2).decode())
    return EXIT_OK


def _described(
    job: dict[str, Any], vertices: list[dict[str, Any]], checkpoints: dict[str, Any]
) -> Iterator[str]:
    yield f"job:         {job['name']}"
    yield f"status:      {job['status']}"
    yield f"attempt:     {job['attempt']}"
    yield f"started:     {_time_of_day(job['start_time'])}"
    yield f"failures:    {job['failures']}"
    counts, latest = checkpoints["counts"], checkpoints["latest"]["completed"]
    last = f", latest {latest['id']}" if latest else ""
    yield f"checkpoints: {counts['completed']} completed, {counts['failed']} failed{last}"
    for vertex in vertices:
        level = vertex["backpressure_level"] or "-"
        yield (
            f"chain {vertex['id']} x{vertex['parallelism']}: {vertex['name']} "
            f"(in {vertex['records_in']}, out {vertex['records_out']}, backpressure {level})"
        )


def _time_of_day(milliseconds: int | None) -> str:
    if milliseconds is None:
        return "-"
    moment = datetime.fromtimestamp(milliseconds / 1000, tz=UTC)
    return moment.isoformat(timespec="seconds")
