"""Time is injected: outside engine/time/, no module of the packages reads the system's clocks.

The engine, its connectors and the actors read time through a ``Clock`` (the job's), so a
simulation can run them on virtual time and a test on a ``ManualClock``. Sources are read
with ``ast`` (nothing is imported); the finder runs over the repository and over small
sources, so it can be seen to fail.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).parents[3]
PACKAGES = ("engine", "actors", "connectors")
ALLOWED = Path("engine/time")
SYSTEM_CLOCKS = frozenset(
    {"time", "time_ns", "monotonic", "monotonic_ns", "perf_counter", "perf_counter_ns"}
)


def system_clock_reads(source: str, path: str = "<source>") -> list[str]:
    """Each place ``source`` names time.time, time.monotonic or time.perf_counter (any form)."""
    tree = ast.parse(source, filename=path)
    modules = {"time"} | {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
        if alias.name == "time"
    }
    found = [
        f"{path}:{node.lineno} time.{node.attr}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id in modules
        and node.attr in SYSTEM_CLOCKS
    ]
    found += [
        f"{path}:{node.lineno} from time import {alias.name}"
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module == "time"
        for alias in node.names
        if alias.name in SYSTEM_CLOCKS | {"*"}
    ]
    return found


def package_sources(root: Path) -> list[Path]:
    return sorted(
        path.relative_to(root)
        for package in PACKAGES
        for path in (root / package).rglob("*.py")
        if not path.relative_to(root).is_relative_to(ALLOWED)
    )


def test_no_module_outside_engine_time_reads_the_system_clocks() -> None:
    reads = [
        read
        for path in package_sources(ROOT)
        for read in system_clock_reads((ROOT / path).read_text(), path.as_posix())
    ]

    assert reads == [], "read the job's Clock instead (engine/time/clock.py)"


def test_a_call_of_time_monotonic_is_found() -> None:
    assert system_clock_reads("import time\nstarted = time.monotonic()\n") == [
        "<source>:2 time.monotonic"
    ]


def test_time_time_passed_as_a_default_is_found_too() -> None:
    source = "import time as t\ndef stamp(now=t.time):\n    return now()\n"

    assert system_clock_reads(source) == ["<source>:2 time.time"]


def test_a_perf_counter_imported_from_time_is_found() -> None:
    assert system_clock_reads("from time import perf_counter\n") == [
        "<source>:1 from time import perf_counter"
    ]


def test_sleeping_in_a_thread_reads_no_clock() -> None:
    assert system_clock_reads("import time\ntime.sleep(0)\n") == []


def test_engine_time_is_where_the_system_clocks_may_be_read() -> None:
    assert Path("engine/time/clock.py") not in package_sources(ROOT)
    assert Path("engine/runtime/job/job_events.py") in package_sources(ROOT)
