"""Jobs and doubles the executor tests share."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import anyio

from lockgate.engine import RestartStrategy, StreamEnvironment
from lockgate.engine.io.driver_side import DriverSide


def file_checkpointed_env(
    tmp_path: Path, *, parallelism: int = 2, interval: float = 0.02, attempts: int = 3
) -> StreamEnvironment:
    """A checkpointing environment whose storage every worker reaches: a folder."""
    env = StreamEnvironment(parallelism=parallelism, batch_size=64, channel_capacity=256)
    env.enable_checkpointing(interval)
    env.set_checkpoint_storage((tmp_path / "checkpoints").as_uri())
    env.set_restart_strategy(RestartStrategy.fixed_delay(attempts=attempts, delay=0.0))
    return env


class WorkerKiller(DriverSide):
    """Has the driving process SIGKILL the worker whose subtask reaches ``at``, once.

    A map function calls it with each record; in a worker the call reaches the original in
    the driving process, which kills the caller's process with SIGKILL: a worker dying of a
    real signal, at a moment the test chooses (a record), not at a time.
    """

    driver_only = ("killed",)

    def __init__(self, at: int) -> None:
        self.at = at
        self.killed: list[int] = []

    def __call__(self, record: int) -> int:
        if record == self.at and self.is_driver_copy is False:
            self.tell_driver("kill", os.getpid())
        return record

    def kill(self, pid: int) -> None:
        if not self.killed:
            self.killed.append(pid)
            os.kill(pid, signal.SIGKILL)

    def __repr__(self) -> str:
        return f"<WorkerKiller at={self.at} killed={self.killed}>"


def identity(record: Any) -> Any:
    """A map that changes nothing."""
    return record


class Arrivals(DriverSide):
    """A map that tells the driving process once per worker process that a record got there.

    ``wait(n)`` returns once ``n`` worker processes did: they run, and read records.
    """

    driver_only = ("pids", "_arrived", "_expected")

    def __init__(self) -> None:
        self._told = False
        self.pids: set[int] = set()
        self._arrived: anyio.Event | None = None
        self._expected = 0

    def __call__(self, record: Any) -> Any:
        if not self._told:
            self._told = True
            if self.is_driver_copy:  # on the LocalExecutor: one copy, in this process
                self.arrived(os.getpid())
            self.tell_driver("arrived", os.getpid())
        return record

    def arrived(self, pid: int) -> None:
        self.pids.add(pid)
        if self._arrived is not None and len(self.pids) >= self._expected:
            self._arrived.set()

    async def wait(self, workers: int) -> None:
        self._arrived, self._expected = anyio.Event(), workers
        if len(self.pids) < workers:
            await self._arrived.wait()
