"""Jobs and a browser for the dashboard's tests: three chains into a sink of ~100 records/s.

The browser is Debian's chromium (``/usr/bin/chromium``, installed by
``scripts/install-services``) driven by Playwright: never a browser a test tool downloads.
Without it a test skips, and under CI fails. Screenshots go to ``build/test-artifacts/``.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from playwright.async_api import Browser, Page, async_playwright, expect

from lockgate.engine import Sink, SinkContext, SinkWriter, StreamEnvironment
from tests.engine.jobs.basic import EndlessSource

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).parents[3] / "build" / "test-artifacts"
WAIT_MS = 30_000  # how long a page may take to show what the API says, on a loaded machine
expect.set_options(timeout=WAIT_MS)


class RateLimitedSink(Sink[Any]):
    """Writes ``per_second`` records per second and subtask: each batch takes its time."""

    def __init__(self, *, per_second: float) -> None:
        self.per_second = per_second

    def create_writer(self, context: SinkContext) -> SinkWriter[Any]:
        return _RateLimitedWriter(self.per_second)


class _RateLimitedWriter(SinkWriter[Any]):
    def __init__(self, per_second: float) -> None:
        self.per_second = per_second

    async def write(self, records: list[Any]) -> None:
        await anyio.sleep(len(records) / self.per_second)  # the sink's work, not a synchronisation


def three_chain_job(*, sink_per_second: float = 100.0) -> StreamEnvironment:
    """numbers -> parse | HASH | sums | REBALANCE | slow: three chains, the last one slow.

    The sink (one subtask) writes ~``sink_per_second`` records per second, so ``sums``
    waits for room in its output: backpressured HIGH, and the sink itself is busy, not
    backpressured.
    """
    env = StreamEnvironment(parallelism=2, batch_size=10, channel_capacity=20)
    env.enable_checkpointing()
    env.set_checkpoint_storage("memory://")
    (
        env.from_source(EndlessSource(), uid="numbers")
        .map(lambda n: n, uid="parse")
        .key_by(lambda n: n % 4)
        .reduce(lambda a, b: a + b, uid="sums")
        .rebalance()
        .sink_to(RateLimitedSink(per_second=sink_per_second), uid="slow", parallelism=1)
    )
    return env


def chromium_or_skip() -> Path:
    """Debian's chromium; a test without it skips, and fails under CI."""
    if CHROMIUM.is_file():
        return CHROMIUM
    message = f"{CHROMIUM} is missing; scripts/install-services installs it (apt-get chromium)"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


@asynccontextmanager
async def chromium() -> AsyncIterator[Browser]:
    """Headless chromium through Playwright; root needs --no-sandbox."""
    executable = chromium_or_skip()
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=str(executable), args=["--no-sandbox"]
        )
        try:
            yield browser
        finally:
            await browser.close()


@asynccontextmanager
async def dashboard(browser: Browser, url: str, *, job: str | None = None) -> AsyncIterator[Page]:
    """A fresh page (its own sessionStorage) on the dashboard at ``url``, on ``job`` if given.

    Confirmation dialogs (stop, cancel) are accepted.
    """
    context = await browser.new_context(viewport={"width": 1400, "height": 1400})
    page = await context.new_page()
    page.set_default_timeout(WAIT_MS)
    page.on("dialog", lambda dialog: dialog.accept())
    try:
        await page.goto(url if job is None else f"{url}/dashboard/#job={job}")
        yield page
    finally:
        await context.close()


async def keep_screenshot(page: Page, name: str) -> Path:
    """Save the whole page as ``build/test-artifacts/<name>.png``; return the file."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    await page.screenshot(path=str(path), full_page=True)
    return path
