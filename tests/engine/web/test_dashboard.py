"""The dashboard in a real headless browser (Debian's chromium through Playwright), against
running jobs served by ``serve``: the job list, the graph coloured by backpressure, the
charts of the polled history, the checkpoint table, watermarks and exceptions.

Every wait is Playwright's (``expect`` with a timeout), never a sleep. Screenshots are kept
in ``build/test-artifacts/``: ``dashboard.png`` is the three-chain job, backpressured.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.async_api import Browser, Locator, Page, expect

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import JobClient, RestartStrategy, StreamEnvironment
from lockgate.engine.testing import FailOnce
from lockgate.engine.web import JobRegistry, serve
from tests.engine.jobs import dashboard as dashboard_jobs
from tests.engine.jobs.dashboard import (
    chromium_or_skip,
    dashboard,
    keep_screenshot,
    three_chain_job,
)
from tests.engine.jobs.event_time import WatermarkLog, below
from tests.engine.jobs.savepoints import Topic, TopicSource
from tests.engine.runtime.metrics.test_job_metrics import MONOTONOUS

pytestmark = pytest.mark.asyncio_only(reason="Playwright's async API and uvicorn run on asyncio")

RED_FILL = "rgb(255, 235, 238)"  # dashboard.css: --high-fill


def chain(page: Page, chain_id: int) -> Locator:
    return page.locator(f'#graph .chain[data-chain-id="{chain_id}"]')


async def until_sampled(page: Page, chart: str, *, lines: int, points: int) -> None:
    """Wait until ``chart`` draws ``lines`` lines of at least ``points`` samples each."""
    await page.wait_for_function(
        """([chart, lines, points]) => {
            const drawn = [...document.querySelectorAll(`[data-chart="${chart}"] polyline`)];
            return drawn.length === lines && drawn.every((p) => Number(p.dataset.points) >= points);
        }""",
        arg=[chart, lines, points],
    )


async def test_the_job_list_shows_every_job_and_a_click_opens_its_view(browser: Browser) -> None:
    registry, requested = JobRegistry(), []
    short = StreamEnvironment()
    short.from_source(CollectionSource(range(3)), uid="numbers").sink_to(CollectSink(), uid="out")
    async with serve(registry) as server, three_chain_job().start("three") as job:
        registry.add(await _finished(short))
        registry.add(job)
        async with dashboard(browser, server.url) as page:
            page.on("request", lambda request: requested.append(request.url))
            await expect(page.locator('#job-list tr[data-job="three"] .status')).to_have_text(
                "RUNNING"
            )
            await expect(page.locator('#job-list tr[data-job="short"] .status')).to_have_text(
                "FINISHED"
            )
            await page.click('#job-list tr[data-job="three"] a')
            await expect(page.locator("#job-name")).to_have_text("three")
            await expect(chain(page, 2)).to_have_count(1)
            await keep_screenshot(page, "dashboard-job-list")

    assert requested  # the page polled, and only the app that served it
    assert all(url.startswith(f"{server.url}/") for url in requested)


async def _finished(env: StreamEnvironment) -> JobClient:
    async with env.start("short") as job:
        await job.wait()
    return job


async def test_the_graph_draws_every_chain_of_a_three_chain_job_with_operators_and_edges(
    browser: Browser,
) -> None:
    registry = JobRegistry()
    async with (
        serve(registry) as server,
        three_chain_job().start("three") as job,
        dashboard(browser, server.url, job="three") as page,
    ):
        registry.add(job)
        await expect(page.locator("#graph .chain")).to_have_count(3)
        uids = "operators => operators.map(o => o.dataset.uid)"
        operators = [
            await chain(page, c).locator(".operator").evaluate_all(uids) for c in (0, 1, 2)
        ]
        edges = page.locator("#graph .edge")
        await expect(edges).to_have_count(2)
        hash_edge = page.locator('#graph .edge[data-source="0"][data-target="1"]')
        rebalance = page.locator('#graph .edge[data-source="1"][data-target="2"]')
        await expect(hash_edge).to_have_attribute("data-partitioning", "HASH")
        await expect(hash_edge.locator(".edge-label")).to_have_text("HASH 2→2")
        await expect(rebalance.locator(".edge-label")).to_have_text("REBALANCE 2→1")
        await expect(chain(page, 2).locator(".chain-title")).to_have_text("chain 2 · parallelism 1")

    assert operators == [["numbers", "parse"], ["sums"], ["slow"]]


async def test_the_chain_before_a_sink_of_100_records_per_second_is_coloured_high(
    browser: Browser,
) -> None:
    registry = JobRegistry()
    async with (
        serve(registry) as server,
        three_chain_job(sink_per_second=100).start("three") as job,
        dashboard(browser, server.url, job="three") as page,
    ):
        registry.add(job)
        await job.trigger_checkpoint()
        sums, sink = chain(page, 1), chain(page, 2)
        await expect(sums).to_have_attribute("data-backpressure", "HIGH")
        await expect(sums.locator("rect")).to_have_css("fill", RED_FILL)
        await expect(sums.locator(".level-text")).to_have_text(re.compile(r"^HIGH · \d+%"))
        await expect(sink).to_have_attribute("data-backpressure", "OK")
        await until_sampled(page, "throughput", lines=3, points=3)
        screenshot = await keep_screenshot(page, "dashboard")

    assert screenshot.read_bytes().startswith(b"\x89PNG")


async def test_the_charts_draw_throughput_fill_and_time_of_every_chain_from_the_history(
    browser: Browser,
) -> None:
    registry = JobRegistry()
    async with (
        serve(registry) as server,
        three_chain_job().start("three") as job,
        dashboard(browser, server.url, job="three") as page,
    ):
        registry.add(job)
        for name in ("throughput", "input-fill", "output-fill"):
            await until_sampled(page, name, lines=3, points=3)
        for chain_id in (0, 1, 2):
            layers = page.locator(f'[data-chart="time-{chain_id}"] polygon')
            await expect(layers).to_have_count(3)
        sink_time = page.locator('[data-chart="time-2"] figcaption')
        await expect(sink_time).to_have_text(
            "Time of 'slow' in ms per second (mean of its subtasks)"
        )


async def test_an_ended_job_s_charts_keep_its_last_minutes_and_grow_no_more(
    browser: Browser,
) -> None:
    registry = JobRegistry()
    async with (
        serve(registry) as server,
        three_chain_job().start("three") as job,
        dashboard(browser, server.url, job="three") as page,
    ):
        registry.add(job)
        await until_sampled(page, "throughput", lines=3, points=2)
        job.cancel()
        await job.wait()
        await expect(page.locator("#job-status .status")).to_have_text("CANCELED")
        line = page.locator('[data-chart="throughput"] polyline').first
        points = await line.get_attribute("data-points")
        await until_polled(page, more=2)
        points_later = await line.get_attribute("data-points")

    assert int(points or 0) >= 2
    assert points_later == points


async def until_polled(page: Page, *, more: int) -> None:
    """Wait until the page has drawn ``more`` answers of the API after the current one."""
    polls = int(await page.evaluate("document.body.dataset.polls ?? '0'"))
    await page.wait_for_function(
        "(after) => Number(document.body.dataset.polls ?? 0) >= after", arg=polls + more
    )


async def test_the_checkpoint_table_fills_with_every_completed_checkpoint(browser: Browser) -> None:
    registry = JobRegistry()
    async with (
        serve(registry) as server,
        three_chain_job().start("three") as job,
        dashboard(browser, server.url, job="three") as page,
    ):
        registry.add(job)
        first = await job.trigger_checkpoint()
        second = await job.trigger_checkpoint()
        rows = page.locator("#checkpoints tbody tr")
        await expect(rows).to_have_count(2)
        await expect(page.locator("#checkpoint-counts")).to_have_text(
            "2 completed, 0 failed, 0 in progress"
        )
        ids = await rows.evaluate_all("rows => rows.map(r => Number(r.dataset.checkpointId))")
        newest = rows.first
        await expect(newest).to_have_attribute("data-status", "COMPLETED")
        await expect(newest.locator(".unaligned")).to_have_text("no")
        await expect(newest.locator(".acknowledged")).to_have_text("5/5")
        await expect(newest.locator(".duration")).to_have_text(re.compile(r"^\d+(\.\d+)? m?s$"))
        await expect(newest.locator(".size")).to_have_text(re.compile(r"^\d+(\.\d)? (B|KiB|MiB)$"))

    assert ids == [second.checkpoint_id, first.checkpoint_id]


async def test_an_unaligned_checkpoint_is_marked_unaligned_in_the_table(browser: Browser) -> None:
    registry = JobRegistry()
    env = three_chain_job()
    env.enable_checkpointing(unaligned=True)
    async with (
        serve(registry) as server,
        env.start("three") as job,
        dashboard(browser, server.url, job="three") as page,
    ):
        registry.add(job)
        await expect(chain(page, 1)).to_have_attribute("data-backpressure", "HIGH")
        completed = await job.trigger_checkpoint()
        row = page.locator(f'#checkpoints tr[data-checkpoint-id="{completed.checkpoint_id}"]')
        await expect(row.locator(".unaligned")).to_have_text("yes")


async def test_watermarks_show_each_subtask_s_input_and_output_watermark(browser: Browser) -> None:
    topic, log, registry = Topic(partitions=1), WatermarkLog(), JobRegistry()
    env = StreamEnvironment(batch_size=10, auto_watermark_interval=0.0)
    env.from_source(TopicSource(topic), uid="topic", watermark_strategy=MONOTONOUS).sink_to(
        log, uid="log"
    ).disable_chaining()
    async with (
        serve(registry) as server,
        env.start("watermarks") as job,
        dashboard(browser, server.url, job="watermarks") as page,
    ):
        registry.add(job)
        source_row = page.locator('#watermarks tr[data-chain-id="0"][data-subtask="0"]')
        sink_row = page.locator('#watermarks tr[data-chain-id="1"][data-subtask="0"]')
        await expect(source_row.locator(".output")).to_have_text("—")
        topic.append(range(10), partition_of=lambda _: 0)
        await log.wait_for_watermark(below(9))
        await expect(source_row.locator(".output")).to_have_text(str(below(9)))
        await expect(sink_row.locator(".input")).to_have_text(str(below(9)))
        job.cancel()


async def test_exceptions_show_each_failed_attempt_with_its_operator_and_message(
    browser: Browser,
) -> None:
    fail = FailOnce("broken map")

    def fragile(x: int) -> int:
        if x == 5:
            fail.maybe_fire()
        return x

    env = StreamEnvironment()
    env.set_restart_strategy(RestartStrategy.fixed_delay(attempts=1, delay=0))
    env.from_source(CollectionSource(range(10)), uid="numbers").map(fragile, uid="fragile").sink_to(
        CollectSink(), uid="out"
    )
    registry = JobRegistry()
    async with serve(registry) as server, env.start("fragile") as job:
        registry.add(job)
        await job.wait()
        async with dashboard(browser, server.url, job="fragile") as page:
            entry = page.locator('#exceptions li[data-attempt="0"]')
            await expect(entry).to_have_attribute("data-uid", "fragile")
            await expect(entry.locator(".heading")).to_contain_text(
                "OperatorError in 'fragile' (subtask 0)"
            )
            await expect(entry.locator(".message")).to_have_text(str(job.failures[0].exception))
            await expect(entry.locator("pre")).to_contain_text("broken map")
            await expect(page.locator("#no-exceptions")).to_be_hidden()

    assert fail.fired


def test_without_chromium_a_browser_test_fails_under_ci(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(dashboard_jobs, "CHROMIUM", tmp_path / "chromium")
    monkeypatch.setenv("CI", "true")

    with pytest.raises(pytest.fail.Exception, match="scripts/install-services installs it"):
        chromium_or_skip()


def test_without_chromium_a_browser_test_skips_outside_ci(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(dashboard_jobs, "CHROMIUM", tmp_path / "chromium")
    monkeypatch.delenv("CI", raising=False)

    with pytest.raises(pytest.skip.Exception):
        chromium_or_skip()
