"""ProcessExecutor: the subtasks of each attempt in worker processes on this machine.

This module starts and watches the worker processes; what a worker does is ``worker.py``.
Each attempt gets fresh workers: spawned (``python -c`` running ``worker.main``), connected
to the driving process over a Unix socket, and torn down when the attempt ends, however it
ends: asked to shut down, then killed after a grace period, and always waited for, so that
no worker outlives its attempt.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import anyio
from anyio.abc import Process, SocketListener

from lockgate.engine.checkpointing.storage import CheckpointStorage
from lockgate.engine.errors import WorkerLost
from lockgate.engine.graph.planning import ExecutionPlan
from lockgate.engine.runtime.executors.byte_links import accepted_link
from lockgate.engine.runtime.executors.control_messages import Hello, Shutdown
from lockgate.engine.runtime.executors.executor import AttemptHost, Executor
from lockgate.engine.runtime.executors.frames import FrameStream
from lockgate.engine.runtime.executors.process_host import ProcessHost
from lockgate.engine.runtime.executors.submission import (
    check_alignment,
    check_clock,
    check_picklable,
    check_storage,
)
from lockgate.engine.runtime.executors.worker_link import WorkerEnd
from lockgate.engine.runtime.job.deployment import RuntimeOptions

__all__ = ["ExecutorStatistics", "ProcessExecutor"]

# -c, not -m: the face imports the worker module, which -m would then run a second time.
WORKER_COMMAND = "from lockgate.engine.runtime.executors.worker import main; main()"
_GONE = (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError)
_SHUTDOWN_GRACE = 5.0  # seconds a worker asked to shut down may take before it is killed


@dataclass(frozen=True, slots=True)
class ExecutorStatistics:
    """An executor now: its worker count, the process ids running, and how many it started.

    ``running`` is empty whenever no attempt runs: every worker started was waited for.
    ``started`` counts the processes of every attempt so far (fresh workers per attempt).
    """

    workers: int
    running: tuple[int, ...]
    started: int


class ProcessExecutor(Executor):
    """Runs each attempt's subtasks in ``workers`` processes on this machine, one core each.

    The job master and the checkpoint coordinator stay in the driving process. Subtasks are
    placed by key group (``Placement``): the same worker hosts the same key groups in every
    attempt. User functions travel with cloudpickle, so a function that cannot be pickled
    fails at submission (``GraphError`` naming its operator); checkpoint storage must be
    reachable from every worker (``file://`` or ``s3://``; ``memory://`` is refused). A
    worker that dies, or sends no heartbeat for ``heartbeat_timeout`` seconds, fails the
    attempt: every worker is torn down, the restart strategy decides, and the next attempt
    restores the latest checkpoint in new workers.
    """

    def __init__(
        self,
        workers: int = 2,
        *,
        heartbeat_interval: float = 0.5,
        heartbeat_timeout: float = 30.0,
        startup_timeout: float = 60.0,
    ) -> None:
        if workers < 1:
            raise ValueError(f"workers must be at least 1; got {workers}")
        if not 0 < heartbeat_interval < heartbeat_timeout:
            raise ValueError(
                f"heartbeat_interval ({heartbeat_interval}) must be above 0 and below "
                f"heartbeat_timeout ({heartbeat_timeout})"
            )
        self.workers = workers
        self.heartbeat_interval = heartbeat_interval
        self.heartbeat_timeout = heartbeat_timeout
        self.startup_timeout = startup_timeout
        self._running: dict[int, Process] = {}
        self._started = 0

    def prepare(
        self, plan: ExecutionPlan, storage: CheckpointStorage, options: RuntimeOptions
    ) -> ExecutionPlan:
        """Check that the job can run in worker processes; place its subtasks on them.

        Raises:
            GraphError: an operator's function cannot be pickled.
            ExecutorError: ``memory://`` checkpoint storage, a clock other than the
                system's, or a watermark alignment group whose sources it places on
                several workers.
        """
        check_storage(storage, repr(self))
        check_clock(options.clock, repr(self))
        check_picklable(plan, repr(self))
        placed = plan.placed(self.workers)
        check_alignment(placed, repr(self))
        return placed

    @asynccontextmanager
    async def host(self, job_name: str) -> AsyncIterator[AttemptHost]:
        """Start the workers of the next attempt; tear them all down when it ends."""
        folder = Path(tempfile.mkdtemp(prefix="lockgate-workers-"))
        try:
            async with await anyio.create_unix_listener(folder / "control") as listener:
                ends = await self._start_workers(listener, str(folder / "control"))
            host = ProcessHost(
                ends,
                data_addresses=tuple(
                    f"unix://{folder / f'data-{worker}'}" for worker in range(self.workers)
                ),
                heartbeat_interval=self.heartbeat_interval,
                heartbeat_timeout=self.heartbeat_timeout,
            )
            try:
                yield host
            finally:
                with anyio.CancelScope(shield=True):
                    await self._tear_down(ends)
                    await host.release()
        finally:
            with anyio.CancelScope(shield=True):
                await self._kill_all()
            shutil.rmtree(folder, ignore_errors=True)

    def statistics(self) -> ExecutorStatistics:
        """The worker processes running now, and how many this executor ever started."""
        return ExecutorStatistics(self.workers, tuple(sorted(self._running)), self._started)

    async def _start_workers(self, listener: SocketListener, path: str) -> list[WorkerEnd]:
        for worker in range(self.workers):
            process = await anyio.open_process(
                [sys.executable, "-c", WORKER_COMMAND, path, str(worker)],
                stdin=subprocess.DEVNULL,
                stdout=None,
                stderr=None,
            )
            self._running[process.pid] = process
            self._started += 1
        connected: dict[tuple[int, str], tuple[Hello, FrameStream]] = {}
        with anyio.move_on_after(self.startup_timeout) as startup:
            while len(connected) < 2 * self.workers:  # a control and a calls connection each
                frames = FrameStream(await accepted_link(await listener.accept()))
                hello: Hello = await frames.receive()
                connected[hello.worker, hello.channel] = (hello, frames)
        ends = {
            worker: self._end(hello, frames, connected[worker, "calls"][1])
            for (worker, channel), (hello, frames) in connected.items()
            if channel == "control" and (worker, "calls") in connected
        }
        if startup.cancelled_caught:
            for _, frames in connected.values():
                await frames.aclose()
            raise WorkerLost(
                f"{self.workers - len(ends)} of {self.workers} worker processes did not connect "
                f"within {self.startup_timeout} s (startup_timeout); their exit codes: "
                f"{[p.returncode for p in self._running.values()]}"
            )
        return [ends[worker] for worker in range(self.workers)]

    def _end(self, hello: Hello, frames: FrameStream, calls: FrameStream) -> WorkerEnd:
        process = self._running[hello.pid]
        return WorkerEnd(hello.worker, hello.pid, frames, calls, (), process.wait)

    async def _tear_down(self, ends: list[WorkerEnd]) -> None:
        for end in ends:
            with contextlib.suppress(*_GONE):  # a worker gone already needs no shutdown
                await end.frames.send(Shutdown())
        with anyio.move_on_after(_SHUTDOWN_GRACE):
            for process in list(self._running.values()):
                await process.wait()
        for end in ends:
            await end.frames.aclose()
            await end.calls.aclose()

    async def _kill_all(self) -> None:
        for process in list(self._running.values()):
            if process.returncode is None:
                process.kill()
        for pid, process in list(self._running.items()):
            await process.wait()
            await process.aclose()
            del self._running[pid]

    def __repr__(self) -> str:
        return f"ProcessExecutor(workers={self.workers})"
