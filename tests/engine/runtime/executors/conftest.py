"""Worker processes never outlive a test: every test here checks that none is left."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

WORKER_MARK = b"lockgate.engine.runtime.executors.worker"


def worker_processes() -> list[int]:
    """Process ids of this process's children that run a lockgate worker."""
    found = []
    for status in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = status.read_text().rsplit(")", 1)[1].split()
            cmdline = (status.parent / "cmdline").read_bytes()
        except OSError:  # it ended while we looked
            continue
        if int(fields[1]) == os.getpid() and WORKER_MARK in cmdline:
            found.append(int(status.parent.name))
    return found


@pytest.fixture(autouse=True)
def no_orphan_workers() -> Iterator[None]:
    """Fail a test that leaves a worker process behind (and kill what it left)."""
    yield
    left = worker_processes()
    for pid in left:
        os.kill(pid, 9)
    assert left == [], f"worker processes outlived the test: {left}"
