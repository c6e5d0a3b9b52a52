"""VirtualTimeLoop: asyncio's event loop on virtual time, where a simulation runs the engine.

The technique of looptime and aiotools, written for lockgate: the loop's ``time()`` is a
number the loop moves itself, and its selector never waits for time to pass. When no
callback is ready and no I/O event waits, the loop sets its clock to the next timer's
deadline at once, so an hour of a job that waits on timers (sinks, services, arrival
processes, checkpoint intervals) takes as long as its callbacks take to run.
"""

from __future__ import annotations

import asyncio
import selectors
import sys
import threading
from collections.abc import Callable
from concurrent.futures import Executor
from contextvars import Context
from typing import Any, TypeVar, TypeVarTuple

from anyio import CapacityLimiter

from lockgate.engine.errors import SimulationDeadlock, SimulationError

__all__ = ["THREAD_PATIENCE", "VirtualTimeLoop"]

T = TypeVar("T")
Ts = TypeVarTuple("Ts")

MAXIMUM_SELECT_TIMEOUT = 24 * 3600
"""asyncio's cap on a select timeout: a timer further away is reached in steps of a day."""

THREAD_PATIENCE = 60.0
"""Real seconds the loop waits for a thread job to hand something back before it gives up."""

Select = Callable[[float | None], list[tuple[selectors.SelectorKey, int]]]


class _VirtualSelector(selectors.DefaultSelector):
    """Polls file descriptors without waiting; asks the loop what to do when nothing is ready.

    The loop's own wake-up pipe alone is not polled: what other threads hand back comes
    through ``call_soon_threadsafe``, which the loop keeps itself, and the loop's thread
    (a signal handler) schedules its callbacks directly. Signal handlers added with
    ``add_signal_handler`` are therefore not run in a simulation.
    """

    def __init__(self) -> None:
        super().__init__()
        self.on_idle: Callable[[float | None, Select], Any] | None = None
        self.watched = 0

    def register(self, fileobj: Any, events: int, data: Any = None) -> selectors.SelectorKey:
        key = super().register(fileobj, events, data)
        self.watched += 1
        return key

    def unregister(self, fileobj: Any) -> selectors.SelectorKey:
        key = super().unregister(fileobj)
        self.watched -= 1
        return key

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        if self.watched > 1:  # a real connection: poll it, never wait for it
            events = super().select(0)
            if events:
                return events
        if timeout == 0 or self.on_idle is None:
            return []
        result: list[tuple[selectors.SelectorKey, int]] = self.on_idle(timeout, super().select)
        return result


class VirtualTimeLoop(asyncio.SelectorEventLoop):
    """asyncio's selector loop whose clock is virtual and whose selector never waits for time.

    Invariants:

    - ``time()`` starts at ``start`` and never goes back. It moves only when nothing can run
      (no callback is ready, no I/O event waits, no thread job works), and then straight to
      the next timer's deadline; or by ``spend``, a modelled CPU cost.
    - Work handed to threads costs no virtual time: while a thread job works and nothing
      else can run, the loop waits for it in real time. What threads hand back
      (``call_soon_threadsafe``) runs once nothing else can at this virtual instant, so a
      run repeats exactly when thread jobs run one at a time, as ``limit_threads`` makes
      anyio's run them.
    - When nothing can run, no timer is set, no thread job works and no file descriptor is
      watched, the loop raises ``SimulationDeadlock`` naming every waiting task.
    """

    def __init__(self, start: float = 0.0) -> None:
        selector = _VirtualSelector()
        super().__init__(selector)
        self._now = start
        self._owner: int | None = None
        self._from_threads: list[tuple[asyncio.Handle, Callable[..., object], tuple[Any, ...]]] = []
        self._handed_back = threading.Condition()
        self._limiters: list[CapacityLimiter] = []
        self._executor_jobs = 0
        self._watched = selector
        selector.on_idle = self._on_idle

    def time(self) -> float:
        """The virtual time, in seconds."""
        return self._now

    def spend(self, seconds: float) -> None:
        """Let ``seconds`` of virtual time pass now, as a running callback's CPU cost."""
        if not seconds >= 0:
            raise ValueError(f"a CPU cost is 0 or more seconds; got {seconds}")
        self._now += seconds

    def limit_threads(self, limiter: CapacityLimiter) -> None:
        """Run ``limiter``'s thread jobs one at a time, and count them as thread work.

        Give it anyio's default thread limiter (``to_thread.current_default_thread_limiter()``,
        one per loop), so that every ``to_thread.run_sync`` of the engine is seen.
        """
        limiter.total_tokens = 1
        self._limiters.append(limiter)

    def run_forever(self) -> None:
        """Run until ``stop()``; calls from other threads wait for an idle moment."""
        self._owner = threading.get_ident()
        try:
            super().run_forever()
        finally:
            self._owner = None

    def call_soon_threadsafe(
        self,
        callback: Callable[[*Ts], object],
        *args: *Ts,
        context: Context | None = None,
    ) -> asyncio.Handle:
        """Schedule ``callback``; from another thread, for the next moment nothing else runs."""
        if threading.get_ident() == self._owner:
            return super().call_soon_threadsafe(callback, *args, context=context)
        handle = asyncio.Handle(callback, args, self, context)
        with self._handed_back:
            self._from_threads.append((handle, callback, args))
            self._handed_back.notify()
        return handle

    def run_in_executor(
        self, executor: Executor | None, func: Callable[[*Ts], T], *args: *Ts
    ) -> asyncio.Future[T]:
        """Run ``func`` in ``executor``, counted as thread work until its result is back."""
        future = super().run_in_executor(executor, func, *args)
        self._executor_jobs += 1
        future.add_done_callback(self._executor_job_done)
        return future

    async def shutdown_default_executor(self, timeout: float | None = None) -> None:  # noqa: ASYNC109 - asyncio's signature
        """Shut the default executor down; its threads count as thread work until they end."""
        self._executor_jobs += 1
        try:
            if sys.version_info >= (3, 12):
                await super().shutdown_default_executor(timeout)
            else:
                await super().shutdown_default_executor()
        finally:
            self._executor_jobs -= 1

    @property
    def threads_working(self) -> bool:
        """Whether a thread job is under way: it has not handed its result back yet."""
        return self._executor_jobs > 0 or any(limiter.borrowed_tokens for limiter in self._limiters)

    def _executor_job_done(self, future: asyncio.Future[Any]) -> None:
        self._executor_jobs -= 1

    def _on_idle(self, timeout: float | None, select: Select) -> list[Any]:
        # Nothing is ready at this instant: first what threads handed back, then waiting
        # for threads still working, then the jump to the next timer.
        if self._from_threads:
            self._deliver_from_threads()
            return []
        if self.threads_working:
            self._wait_for_threads()
            self._deliver_from_threads()
            return select(0)
        if timeout is None:
            if self._watched.watched > 1:  # a real connection besides the wake-up pipe
                return select(None)
            raise SimulationDeadlock(self._deadlock_message())
        # The head timer's own deadline, not now + timeout: that sum may fall a rounding
        # error short of it, and a callback woken by the timer would see time before it.
        scheduled = getattr(self, "_scheduled", None)  # asyncio's timer heap, head first
        if scheduled and timeout < MAXIMUM_SELECT_TIMEOUT:
            deadline: float = scheduled[0].when()
            self._now = max(self._now, deadline)
        else:
            self._now += timeout
        return []

    def _deliver_from_threads(self) -> None:
        with self._handed_back:
            handed, self._from_threads = self._from_threads, []
        for handle, callback, args in handed:
            if not handle.cancelled():
                self.call_soon(callback, *args)

    def _wait_for_threads(self) -> None:
        with self._handed_back:
            if not self._from_threads and not self._handed_back.wait(THREAD_PATIENCE):
                raise SimulationError(
                    f"a thread job has not finished in {THREAD_PATIENCE:.0f} s of real time "
                    f"at virtual time {self._now:.3f} s; a simulated job hands threads only "
                    "short work (checkpoint encoding, file I/O): look for a thread that blocks"
                )

    def _deadlock_message(self) -> str:
        waiting = sorted(_describe(task) for task in asyncio.all_tasks(self))
        return (
            f"the simulation deadlocked at virtual time {self._now:.3f} s: no task can run, no "
            "timer is set and no thread works, so time cannot move on. "
            f"{len(waiting)} tasks wait: {'; '.join(waiting)}. Look for a wait nothing will "
            "end: a model or function that never returns, an event nobody sets"
        )

    def __repr__(self) -> str:
        return f"<VirtualTimeLoop time={self._now:.6f} running={self.is_running()}>"


def _describe(task: asyncio.Task[Any]) -> str:
    stack = task.get_stack()
    if not stack:
        return f"{task.get_name()} (not started)"
    frame = stack[-1]
    code = frame.f_code
    return f"{task.get_name()} in {code.co_qualname} ({code.co_filename}:{frame.f_lineno})"
