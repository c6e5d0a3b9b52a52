"""The ``lockgate`` command in subprocesses: a ``lockgate run`` to follow, commands beside it.

``LockgateRun`` starts ``lockgate run`` and waits, with a deadline, for its ready line (the
REST API's address is on it); ``until`` polls a condition on that API with a deadline.
Nothing here sleeps to synchronise: processes are read until a line comes, or polled.
"""

from __future__ import annotations

import os
import re
import selectors
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).parents[3]
LOCKGATE = str(Path(sys.executable).with_name("lockgate"))
EXAMPLE = "examples/tail_counts.py:build"
READY = re.compile(r"^lockgate: job '(?P<name>[^']+)' started(; REST API at (?P<url>\S+))?$")
DEADLINE = 60.0
POLL = 0.05  # seconds between two looks at a condition nothing notifies


def tail_counts_env(folder: Path) -> dict[str, str]:
    """The environment of ``examples/tail_counts.py``, its files in ``folder``."""
    return {
        **os.environ,
        "TAIL_COUNTS_INPUT": str(folder / "input.log"),
        "TAIL_COUNTS_OUTPUT": str(folder / "output"),
        "TAIL_COUNTS_CHECKPOINTS": str(folder / "checkpoints"),
    }


def lockgate(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run one ``lockgate`` command to its end, from the repository's root."""
    return subprocess.run(
        [LOCKGATE, *args], capture_output=True, text=True, cwd=ROOT, env=env, timeout=DEADLINE
    )


class LockgateRun:
    """A ``lockgate run`` subprocess, from its ready line on; killed if still running at exit."""

    def __init__(self, *args: str, env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            [LOCKGATE, "run", *args],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            bufsize=0,
        )
        self.lines: list[str] = []
        self._pending = b""
        ready = READY.match(self.read_line())
        assert ready is not None, self.lines
        self.url: str = ready["url"] or ""

    def read_line(self) -> str:
        """The next line it prints, waiting for it at most ``DEADLINE`` seconds."""
        deadline = time.monotonic() + DEADLINE
        while b"\n" not in self._pending:
            self._pending += self._chunk(deadline - time.monotonic())
        line, self._pending = self._pending.split(b"\n", 1)
        self.lines.append(line.decode())
        return self.lines[-1]

    def terminate(self) -> None:
        self.process.send_signal(signal.SIGTERM)

    def wait(self) -> tuple[int, str, str]:
        """Its exit status and the rest of its standard output and error, once it ended."""
        out, err = self.process.communicate(timeout=DEADLINE)
        return self.process.returncode, (self._pending + out).decode(), err.decode()

    def vertices(self, name: str) -> list[dict[str, Any]]:
        """The ``/vertices`` document of its job ``name``."""
        document: dict[str, Any] = httpx.get(f"{self.url}/jobs/{name}/vertices").json()
        vertices: list[dict[str, Any]] = document["vertices"]
        return vertices

    def _chunk(self, timeout: float) -> bytes:
        stdout = self.process.stdout
        assert stdout is not None
        with selectors.DefaultSelector() as selector:
            selector.register(stdout, selectors.EVENT_READ)
            if not selector.select(max(timeout, 0)):
                self.process.kill()
                raise AssertionError(f"no line from lockgate run in {DEADLINE} s: {self.lines}")
        chunk = os.read(stdout.fileno(), 65536)
        if not chunk:
            _, err = self.process.communicate(timeout=DEADLINE)
            raise AssertionError(f"lockgate run ended after {self.lines}: {err.decode()}")
        return chunk

    def __enter__(self) -> LockgateRun:
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.communicate(timeout=DEADLINE)


def until(condition: Callable[[], bool], *, within: float = DEADLINE) -> None:
    """Poll ``condition`` until it holds; fail after ``within`` seconds."""
    deadline = time.monotonic() + within
    while not condition():
        assert time.monotonic() < deadline, f"not within {within} s"
        time.sleep(POLL)
