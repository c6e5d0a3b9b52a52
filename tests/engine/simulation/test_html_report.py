"""SimulationReport.to_html: one self-contained page whose plots render in a real browser.

The browser is Debian's chromium (/usr/bin/chromium, installed by scripts/install-services),
driven by Playwright, never a browser a tool downloads. The screenshot is kept in
build/test-artifacts/simulation-report.png, to look at after a run.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from lockgate.engine.simulation import KillAttempt, Simulation, SimulationReport
from tests.engine.jobs.scenarios import enrichment

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).parents[3] / "build" / "test-artifacts"


@pytest.fixture(scope="module")
def report() -> SimulationReport:
    faults = [KillAttempt(12.0)]
    return Simulation(enrichment(), seed=1, until=30.0, faults=faults).run("enrichment")


def browser_page():
    if not CHROMIUM.exists():
        message = f"{CHROMIUM} is missing: scripts/install-services installs chromium"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    return sync_playwright()


def test_the_page_opens_in_chromium_with_every_plot_drawn(report, tmp_path) -> None:
    page_file = report.to_html(tmp_path / "report.html")

    with browser_page() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        page.goto(page_file.as_uri())
        page.wait_for_function("document.querySelectorAll('.js-plotly-plot .main-svg').length > 0")
        plots = page.eval_on_selector_all(
            ".js-plotly-plot",
            "plots => plots.map(p => [p.id, p.querySelectorAll('.scatterlayer .trace, "
            ".barlayer .trace').length])",
        )
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "simulation-report.png"), full_page=True)
        browser.close()

    assert [plot_id for plot_id, _ in plots] == [f"plot-{n}" for n in range(1, 8)]
    assert all(traces >= 1 for _, traces in plots)
    assert (ARTIFACTS / "simulation-report.png").stat().st_size > 10_000


def test_the_page_holds_plotly_once_and_the_reports_table(report, tmp_path) -> None:
    text = report.to_html(tmp_path / "report.html").read_text()

    assert text.count("plotly.js v") == 1  # inlined once, for every plot: no network needed
    assert "<script src=" not in text
    assert "the bottleneck is" in text or "no bottleneck" in text
    assert "kill attempt" in text


def test_without_plotly_the_error_says_which_extra_to_install(
    report, tmp_path, monkeypatch
) -> None:
    monkeypatch.setitem(sys.modules, "plotly", None)
    monkeypatch.setitem(sys.modules, "plotly.graph_objects", None)

    with pytest.raises(ImportError, match=r"pip install 'lockgate\[simulation\]'"):
        report.to_html(tmp_path / "report.html")
