"""The dashboard's files, served by rest_app beside the API (httpx's ASGI transport)."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest
from starlette.applications import Starlette
from starlette.routing import Mount

from lockgate.engine.web import JobRegistry, rest_app
from tests.engine.jobs.web import api_client

FILES = Path(__file__).parents[3] / "engine" / "web" / "dashboard"


async def test_get_root_redirects_to_the_dashboard_relative_to_the_request() -> None:
    async with api_client(JobRegistry()) as api:
        answer = await api.get("/")

    assert answer.status_code == 307
    assert answer.headers["location"] == "dashboard/"


async def test_a_mounted_app_redirects_within_its_prefix_and_serves_the_page_there() -> None:
    service = Starlette(routes=[Mount("/lockgate", rest_app(JobRegistry()))])
    transport = httpx.ASGITransport(app=service)
    async with httpx.AsyncClient(
        transport=transport, base_url="http://service", follow_redirects=True
    ) as http:
        answer = await http.get("/lockgate/")

    assert str(answer.url) == "http://service/lockgate/dashboard/"
    assert answer.status_code == 200
    assert "<title>lockgate dashboard</title>" in answer.text


@pytest.mark.parametrize(
    ("path", "media_types"),
    [
        ("/dashboard/", {"text/html"}),
        ("/dashboard/dashboard.js", {"text/javascript", "application/javascript"}),
        ("/dashboard/dashboard.css", {"text/css"}),
    ],
)
async def test_the_dashboard_serves_its_page_script_and_style(
    path: str, media_types: set[str]
) -> None:
    async with api_client(JobRegistry()) as api:
        answer = await api.get(path)

    assert answer.status_code == 200
    assert answer.headers["content-type"].partition(";")[0] in media_types


def test_the_page_names_no_file_of_another_origin() -> None:
    page = (FILES / "index.html").read_text()

    linked = re.findall(r'(?:src|href)="([^"]*)"', page)

    assert linked  # the script and the style sheet at least
    assert [link for link in linked if re.match(r"[a-z]+:|//", link) and link != "data:,"] == []


def test_the_script_fetches_only_relative_to_the_page() -> None:
    script = (FILES / "dashboard.js").read_text()

    assert re.findall(r"https?://(?!www\.w3\.org/2000/svg)", script) == []
