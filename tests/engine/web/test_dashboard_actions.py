"""The dashboard's buttons in a real headless browser: stop with a savepoint (which a restore
continues exactly), savepoint, cancel, and the bearer token from the page's token field.

Exactly-once as the REST tests show it: the running counts the sink committed are compared
in full, once after the stop and once after the restore from the page's savepoint.
"""

from __future__ import annotations

import re
from pathlib import Path

import anyio
import pytest
from playwright.async_api import Browser, Page, Route, expect

from lockgate.connectors import CollectSink
from lockgate.engine import JobStatus
from lockgate.engine.web import JobRegistry, serve
from tests.engine.jobs.dashboard import dashboard, keep_screenshot, three_chain_job
from tests.engine.jobs.savepoints import Topic
from tests.engine.jobs.web import (
    FIRST,
    MORE,
    append,
    counting_job,
    exact_running_counts,
    running_counts,
    until_running,
)

pytestmark = pytest.mark.asyncio_only(reason="Playwright's async API and uvicorn run on asyncio")


async def answered(page: Page) -> tuple[str, str]:
    """Wait until the page's last action was answered; return its outcome and message."""
    result = page.locator("#action-result")
    await expect(result).not_to_have_class(re.compile("pending"))
    return await result.get_attribute("class") or "", await result.inner_text()


async def savepoint_of(page: Page) -> str:
    """The savepoint folder the page reported for its last action, which succeeded."""
    outcome, message = await answered(page)
    assert outcome == "ok", message
    folder = await page.locator("#action-result").get_attribute("data-savepoint")
    assert folder is not None
    return folder


async def test_the_stop_button_ends_the_job_with_a_savepoint_a_restore_continues_exactly(
    browser: Browser, tmp_path: Path
) -> None:
    topic, sink, registry = Topic(4), CollectSink[tuple[int, int]](), JobRegistry()
    append(topic, FIRST)
    async with (
        serve(registry) as server,
        counting_job(topic, sink).start("counts") as job,
        dashboard(browser, server.url, job="counts") as page,
    ):
        registry.add(job)
        await topic.all_read.wait()
        await page.fill("#savepoint-folder", tmp_path.as_uri())
        await page.click("#stop-button")
        savepoint = await savepoint_of(page)
        await expect(page.locator("#job-status .status")).to_have_text("FINISHED")
        await expect(page.locator("#stop-button")).to_be_disabled()
        await keep_screenshot(page, "dashboard-stopped")
        status = job.status

    assert status is JobStatus.FINISHED
    assert Path(savepoint).parent == tmp_path
    assert running_counts(sink) == exact_running_counts(FIRST)  # the stop committed all of it
    append(topic, MORE)
    topic.close()
    await counting_job(topic, sink).execute("counts", restore_from=savepoint)
    assert running_counts(sink) == exact_running_counts(FIRST + MORE)


async def test_the_savepoint_button_writes_a_savepoint_and_the_job_runs_on(
    browser: Browser, tmp_path: Path
) -> None:
    topic, registry = Topic(2), JobRegistry()
    async with (
        serve(registry) as server,
        counting_job(topic, CollectSink()).start("counts") as job,
        dashboard(browser, server.url, job="counts") as page,
    ):
        registry.add(job)
        await page.fill("#savepoint-folder", str(tmp_path))
        await page.click("#savepoint-button")
        savepoint = await savepoint_of(page)
        await expect(page.locator("#job-status .status")).to_have_text("RUNNING")
        status = job.status

    assert status is JobStatus.RUNNING
    assert (Path(savepoint) / "_metadata").is_file()


async def test_the_cancel_button_cancels_the_job(browser: Browser) -> None:
    registry = JobRegistry()
    async with (
        serve(registry) as server,
        three_chain_job().start("three") as job,
        dashboard(browser, server.url, job="three") as page,
    ):
        registry.add(job)
        await expect(page.locator("#cancel-button")).to_be_enabled()
        await page.click("#cancel-button")
        await expect(page.locator("#action-result")).to_have_text("cancel requested (FINISHING)")
        await expect(page.locator("#job-status .status")).to_have_text("CANCELED")
        with anyio.fail_after(10):
            result = await job.wait()

    assert result.status is JobStatus.CANCELED


async def test_without_the_token_a_stop_shows_the_refusal_and_with_it_the_stop_is_done(
    browser: Browser, tmp_path: Path
) -> None:
    topic, registry = Topic(2), JobRegistry()
    async with (
        serve(registry, token="t0ken") as server,
        counting_job(topic, CollectSink()).start("counts") as job,
        dashboard(browser, server.url, job="counts") as page,
    ):
        registry.add(job)
        await until_running(job)
        await page.fill("#savepoint-folder", tmp_path.as_uri())
        await page.click("#stop-button")
        refusal = page.locator("#action-result.error")
        await expect(refusal).to_have_text(
            "401 Unauthorized: POST /jobs/counts/stop needs the API's token: send the header "
            "'Authorization: Bearer <token>'"
        )
        refused_status = job.status
        await page.fill("#token", "t0ken")
        await page.click("#stop-button")
        await savepoint_of(page)
        status = job.status

    assert refused_status is JobStatus.RUNNING
    assert status is JobStatus.FINISHED


async def test_the_token_and_the_folder_stay_in_session_storage_across_a_reload(
    browser: Browser,
) -> None:
    async with (
        serve(JobRegistry()) as server,
        dashboard(browser, server.url) as page,
    ):
        await page.fill("#token", "t0ken")
        await page.fill("#savepoint-folder", "/savepoints")
        await page.reload()
        await expect(page.locator("#token")).to_have_value("t0ken")
        await expect(page.locator("#savepoint-folder")).to_have_value("/savepoints")
        stored = await page.evaluate("sessionStorage.getItem('lockgate.token')")

    assert stored == "t0ken"


async def test_a_stop_without_a_savepoint_folder_asks_for_one_and_sends_nothing(
    browser: Browser,
) -> None:
    registry, posted = JobRegistry(), []
    async with (
        serve(registry) as server,
        three_chain_job().start("three") as job,
        dashboard(browser, server.url, job="three") as page,
    ):
        registry.add(job)
        page.on("request", lambda r: posted.append(r.url) if r.method == "POST" else None)
        await page.click("#stop-button")
        await expect(page.locator("#action-result.error")).to_have_text(
            "enter the savepoint folder first: a file:// or s3:// URL, or an absolute path"
        )
        status = job.status

    assert status is JobStatus.RUNNING
    assert posted == []


async def test_a_job_s_view_and_its_buttons_show_only_once_its_plan_is_drawn(
    browser: Browser, tmp_path: Path
) -> None:
    topic, registry = Topic(2), JobRegistry()
    asked, release = anyio.Event(), anyio.Event()

    async def held(route: Route) -> None:
        asked.set()
        await release.wait()
        await route.continue_()

    async with (
        serve(registry) as server,
        counting_job(topic, CollectSink()).start("counts") as job,
        dashboard(browser, server.url) as page,
    ):
        registry.add(job)
        await page.route("**/jobs/counts", held)  # the plan, not /jobs/counts/...
        await page.goto(f"{server.url}/dashboard/#job=counts")
        await asked.wait()  # the page has the job list and waits for the plan
        hidden_while_held = await page.locator("#job").is_hidden()
        release.set()
        await page.fill("#savepoint-folder", tmp_path.as_uri())
        await page.click("#savepoint-button")
        savepoint = await savepoint_of(page)

    assert hidden_while_held
    assert Path(savepoint).parent == tmp_path
