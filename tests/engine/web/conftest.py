"""The web tests' browser: one headless chromium per module (tests/engine/jobs/dashboard.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from playwright.async_api import Browser

from tests.engine.jobs.dashboard import chromium


@pytest.fixture(scope="module")
async def browser() -> AsyncIterator[Browser]:
    """Debian's chromium, driven by Playwright; each test opens its own context in it."""
    async with chromium() as launched:
        yield launched
