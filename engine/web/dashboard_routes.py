"""dashboard_routes: the web dashboard's static files, as routes of the REST app.

The dashboard is three files shipped in the package (``lockgate/engine/web/dashboard/``:
``index.html``, ``dashboard.js``, ``dashboard.css``; package data, so an installed wheel
serves them): no build step, nothing fetched from another origin. The page reads the REST
API beside it (``../jobs``...) by polling once a second, and keeps the last minutes of
each job's rates in the browser. ``GET /`` redirects to ``dashboard/``, relative to the
request, so the app may be mounted under any prefix.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

__all__ = ["DASHBOARD_FOLDER", "DASHBOARD_PACKAGE", "dashboard_routes"]

DASHBOARD_PACKAGE = "lockgate.engine.web"
"""The package whose folder ``DASHBOARD_FOLDER`` holds the dashboard's files."""

DASHBOARD_FOLDER = "dashboard"
"""The folder of the dashboard's files, inside ``DASHBOARD_PACKAGE``."""


def dashboard_routes() -> list[BaseRoute]:
    """``GET /`` (a redirect) and ``GET /dashboard/...`` (the files, ``index.html`` first)."""
    files = StaticFiles(packages=[(DASHBOARD_PACKAGE, DASHBOARD_FOLDER)], html=True)
    return [
        Route("/", _to_dashboard, methods=["GET"]),
        Mount(f"/{DASHBOARD_FOLDER}", files, name=DASHBOARD_FOLDER),
    ]


async def _to_dashboard(request: Request) -> Response:
    # relative, so that a mounted app redirects within its own prefix
    return RedirectResponse(f"{DASHBOARD_FOLDER}/", status_code=307)
