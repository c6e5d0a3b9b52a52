"""Operations over HTTP: the REST API of running jobs, its dashboard, the Prometheus export.

The REST API is a registry of jobs, an ASGI app to mount and ``serve``; the same app serves
the web dashboard (``GET /`` redirects to ``dashboard/``: static files in the package); the
Prometheus export is ``lockgate.engine.web.prometheus`` (extra ``prometheus``), which
``GET /metrics`` answers with.

``JobRegistry`` needs nothing beyond lockgate; ``rest_app``, ``serve`` and ``RestServer``
need the extra ``web`` (``pip install 'lockgate[web]'``: Starlette and uvicorn) and are
imported on first use.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from lockgate.engine.errors import UnknownJob
from lockgate.engine.web.registry import JobRegistry

__all__ = ["JobRegistry", "RestServer", "UnknownJob", "rest_app", "serve"]

_EXTRAS = {
    "rest_app": "lockgate.engine.web.rest",
    "RestServer": "lockgate.engine.web.server",
    "serve": "lockgate.engine.web.server",
}


def __getattr__(name: str) -> Any:
    module = _EXTRAS.get(name)
    if module is None:
        raise AttributeError(f"module 'lockgate.engine.web' has no attribute '{name}'")
    return getattr(import_module(module), name)
