"""The dashboard's details in a real headless browser (Debian's chromium through Playwright):
each operator's records inside its chain, the subtask table with records and bytes, the
checkpoint table's phases and failures, and every backpressure level's colour.

Values are compared with what the REST API or ``job.metrics()`` says, through the data
attributes the page keeps beside its formatted text. Every wait is Playwright's.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from playwright.async_api import Browser, Locator, Page, Route, expect

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import CheckpointError, JobClient, StreamEnvironment
from lockgate.engine.web import JobRegistry, serve
from tests.engine.jobs.checkpoints import FailingStorage
from tests.engine.jobs.dashboard import dashboard, keep_screenshot, three_chain_job

pytestmark = pytest.mark.asyncio_only(reason="Playwright's async API and uvicorn run on asyncio")

FILLS = {  # dashboard.css: --ok-fill, --low-fill, --high-fill
    "OK": "rgb(232, 245, 233)",
    "LOW": "rgb(255, 243, 224)",
    "HIGH": "rgb(255, 235, 238)",
}


def quarter_job() -> StreamEnvironment:
    """numbers -> quarter -> out, one chain of one subtask: 100 records, 25 kept."""
    env = StreamEnvironment()
    env.from_source(CollectionSource(range(100)), uid="numbers").filter(
        lambda n: n % 4 == 0, uid="quarter"
    ).sink_to(CollectSink(), uid="out")
    return env


async def finished(env: StreamEnvironment, name: str) -> JobClient:
    async with env.start(name) as job:
        await job.wait()
    return job


def records_of(page: Page, uid: str) -> Locator:
    return page.locator(f'#graph .operator-records[data-uid="{uid}"]')


async def test_each_operator_of_a_chain_shows_the_records_it_took_in_and_sent_on(
    browser: Browser,
) -> None:
    registry = JobRegistry()
    async with serve(registry) as server:
        registry.add(await finished(quarter_job(), "quarter"))
        async with dashboard(browser, server.url, job="quarter") as page:
            await expect(records_of(page, "quarter")).to_have_text("100 → 25")
            counted = {
                uid: (
                    await records_of(page, uid).get_attribute("data-records-in"),
                    await records_of(page, uid).get_attribute("data-records-out"),
                )
                for uid in ("numbers", "quarter", "out")
            }

    assert counted == {"numbers": ("100", "100"), "quarter": ("100", "25"), "out": ("25", "25")}


async def test_the_subtask_table_shows_each_subtask_s_records_and_bytes(browser: Browser) -> None:
    registry = JobRegistry()
    async with serve(registry) as server:
        job = await finished(quarter_job(), "quarter")
        registry.add(job)
        async with dashboard(browser, server.url, job="quarter") as page:
            row = page.locator('#subtasks tr[data-chain-id="0"][data-subtask="0"]')
            await expect(row.locator(".records-in")).to_have_text("100")
            await expect(row.locator(".records-out")).to_have_text("25")
            shown = (
                await row.locator(".bytes-in").get_attribute("data-bytes"),
                await row.locator(".bytes-out").get_attribute("data-bytes"),
            )
            await expect(row.locator(".bytes-in")).to_have_text(f"{shown[0]} B")

    (metrics,) = job.metrics().subtasks
    assert shown == (str(metrics.bytes_in), str(metrics.bytes_out))


async def test_the_subtask_table_labels_each_subtask_of_a_backpressured_chain_high(
    browser: Browser,
) -> None:
    registry = JobRegistry()
    async with (
        serve(registry) as server,
        three_chain_job(sink_per_second=100).start("three") as job,
        dashboard(browser, server.url, job="three") as page,
    ):
        registry.add(job)
        await expect(page.locator("#subtasks tbody tr")).to_have_count(5)  # 2 + 2 + 1
        sums = page.locator('#subtasks tr[data-chain-id="1"]')
        for subtask in (0, 1):
            badge = sums.nth(subtask).locator(".level-cell .level")
            await expect(badge).to_have_text("HIGH")
            await expect(badge).to_have_css("background-color", FILLS["HIGH"])
        await keep_screenshot(page, "dashboard-subtasks")


async def test_the_checkpoint_table_shows_each_phase_as_the_rest_api_reports_it(
    browser: Browser,
) -> None:
    registry = JobRegistry()
    async with (
        serve(registry) as server,
        three_chain_job().start("three") as job,
        dashboard(browser, server.url, job="three") as page,
        httpx.AsyncClient(base_url=server.url) as http,
    ):
        registry.add(job)
        completed = await job.trigger_checkpoint()
        row = page.locator(f'#checkpoints tr[data-checkpoint-id="{completed.checkpoint_id}"]')
        await expect(row).to_have_attribute("data-status", "COMPLETED")
        reported = (await http.get("/jobs/three/checkpoints")).json()["latest"]["completed"]
        shown = {
            field: await row.locator(f".{cell}").get_attribute(attribute)
            for field, cell, attribute in PHASES
        }

    assert shown == {field: str(reported[field]) for field, _, _ in PHASES}


PHASES = [
    ("end_to_end_duration", "duration", "data-ms"),
    ("state_size", "size", "data-bytes"),
    ("start_delay", "start-delay", "data-ms"),
    ("alignment_duration", "alignment", "data-ms"),
    ("sync_duration", "sync", "data-ms"),
    ("async_duration", "async", "data-ms"),
    ("persisted_in_flight", "persisted", "data-bytes"),
]


async def test_a_failed_checkpoint_shows_its_reason_and_message(browser: Browser) -> None:
    registry = JobRegistry()
    env = three_chain_job()
    storage = FailingStorage({1}, uid="numbers")
    env.set_checkpoint_storage(storage)
    async with (
        serve(registry) as server,
        env.start("three") as job,
        dashboard(browser, server.url, job="three") as page,
        httpx.AsyncClient(base_url=server.url) as http,
    ):
        registry.add(job)
        with pytest.raises(CheckpointError):
            await job.trigger_checkpoint()
        row = page.locator('#checkpoints tr[data-checkpoint-id="1"]')
        await expect(row).to_have_attribute("data-status", "ABORTED")
        await expect(row.locator(".status-cell")).to_have_text("ABORTED STORAGE_FAILED")
        reported = (await http.get("/jobs/three/checkpoints")).json()["latest"]["failed"]
        await expect(row.locator(".failure")).to_have_text(reported["failure_message"])

    assert storage.failed == [1], "the injected storage failure never fired"
    assert "injected storage failure for checkpoint 1" in reported["failure_message"]


async def test_each_backpressure_level_colours_its_chain(browser: Browser) -> None:
    """The API's answer, its levels set to OK, LOW and HIGH chain by chain, as the page draws it."""
    levels = {0: "OK", 1: "LOW", 2: "HIGH"}

    async def relabelled(route: Route) -> None:
        answer = await route.fetch()
        document: dict[str, Any] = await answer.json()
        for vertex in document["vertices"]:
            vertex["backpressure_level"] = levels[vertex["id"]]
        await route.fulfill(response=answer, json=document)

    registry = JobRegistry()
    async with (
        serve(registry) as server,
        three_chain_job().start("three") as job,
        dashboard(browser, server.url) as page,
    ):
        registry.add(job)
        await page.route("**/jobs/three/vertices", relabelled)
        await page.goto(f"{server.url}/dashboard/#job=three")
        for chain_id, level in levels.items():
            box = page.locator(f'#graph .chain[data-chain-id="{chain_id}"]')
            await expect(box).to_have_attribute("data-backpressure", level)
            await expect(box.locator("rect")).to_have_css("fill", FILLS[level])
