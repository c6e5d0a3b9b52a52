"""A worker process: how it ends once its attempt is over."""

from __future__ import annotations

import atexit
import os
from pathlib import Path
from typing import Any

import anyio
import pytest

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import ProcessExecutor
from tests.engine.runtime.executors.jobs import file_checkpointed_env


class LeavesWork:
    """A map that, once in each worker, prints a line and registers an exit handler."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._left = False

    def __call__(self, record: Any) -> Any:
        if not self._left:
            self._left = True
            print(f"printed by worker pid {os.getpid()}")  # buffered: fd 1 is a file
            atexit.register((self.folder / str(os.getpid())).write_text, "exit handler ran")
        return record


async def test_a_worker_runs_its_exit_handlers_and_flushes_its_output_as_it_ends(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PYTHONUNBUFFERED", raising=False)  # the workers' stdout buffers
    folder = tmp_path / "exits"
    folder.mkdir()
    env = file_checkpointed_env(tmp_path)
    env.from_source(CollectionSource(range(1_000)), uid="numbers").map(
        LeavesWork(folder), uid="leaves"
    ).sink_to(CollectSink[int](), uid="out")

    with anyio.fail_after(60):
        await env.execute("exits", executor=ProcessExecutor(workers=2))

    pids = sorted(path.name for path in folder.iterdir())
    assert len(pids) == 2
    assert all((folder / pid).read_text() == "exit handler ran" for pid in pids)
    printed = capfd.readouterr().out
    assert all(f"printed by worker pid {pid}\n" in printed for pid in pids)
