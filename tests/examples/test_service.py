"""examples/service.py end to end: a real HTTP client against uvicorn on 127.0.0.1, in this
process; events in, counts out of the running job, committed counts streamed as server-sent
events, a stop with a savepoint and two starts after it, totals exact."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from tests.examples.test_examples import load

pytestmark = pytest.mark.asyncio_only(reason="uvicorn serves on asyncio only")


def events(numbers: range) -> list[dict[str, Any]]:
    return [{"id": f"e{n}", "key": "ab"[n % 2]} for n in numbers]


async def streamed(client: httpx.AsyncClient, count: int) -> list[tuple[str, int]]:
    """The first ``count`` committed counts of GET /results?from_beginning=1."""
    counts: list[tuple[str, int]] = []
    async with client.stream("GET", "/results", params={"from_beginning": "1"}) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        async for line in response.aiter_lines():
            if line.startswith("data: "):
                event = json.loads(line.removeprefix("data: "))
                counts.append((event["key"], event["count"]))
                if len(counts) == count:
                    break
    return counts


async def test_the_service_counts_every_event_once_across_a_stop_and_two_starts(
    tmp_path: Path,
) -> None:
    service = load("service")
    first = service.create_app(tmp_path, checkpoint_interval=0.05)

    with anyio.fail_after(60):
        async with service.serving(first) as url, httpx.AsyncClient(base_url=url) as client:
            await service.post_events(client, events(range(20)))
            await service.post_events(client, events(range(3, 4)))  # a retry of e3
            counted = await service.counts_of(client, "ab")
            stream = await streamed(client, 20)
        savepoint = first.state.service.savepoint
        second = service.create_app(tmp_path, restore_from=savepoint, checkpoint_interval=0.05)
        async with service.serving(second) as url, httpx.AsyncClient(base_url=url) as client:
            await service.post_events(client, events(range(20, 30)))
            restored = await service.counts_of(client, "ab")
        third = service.create_app(tmp_path)  # restore_from="latest", if_missing="start"
        async with service.serving(third) as url, httpx.AsyncClient(base_url=url) as client:
            resumed = await service.counts_of(client, "ab")

    assert counted == {"a": 10, "b": 10}  # the retry of e3 counted once
    assert [count for key, count in stream if key == "a"] == list(range(1, 11))
    assert [count for key, count in stream if key == "b"] == list(range(1, 11))
    assert savepoint is not None and "savepoint-counts-" in savepoint
    assert restored == {"a": 15, "b": 15}
    assert resumed == {"a": 15, "b": 15}


async def test_an_event_without_a_key_is_refused_with_400(tmp_path: Path) -> None:
    service = load("service")

    with anyio.fail_after(60):
        app = service.create_app(tmp_path)
        async with service.serving(app) as url, httpx.AsyncClient(base_url=url) as client:
            response = await client.post("/events", json={"id": "e1"})

    assert response.status_code == 400
