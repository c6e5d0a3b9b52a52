"""TrioVirtualClock: trio's run loop on virtual time, by the rules of VirtualTimeLoop.

Imported only for ``Simulation(..., backend="trio")``: trio is not a dependency of lockgate.
"""

from __future__ import annotations

import importlib
import math
import os
import random
from collections.abc import Callable
from typing import Any

import trio
import trio.lowlevel
from anyio import CapacityLimiter

__all__ = ["TrioVirtualClock", "seed_scheduler"]

THREAD_WAIT = 60.0
"""Real seconds trio may wait for a thread job; its result wakes trio at once."""


class TrioVirtualClock(trio.abc.Clock):
    """A trio ``Clock`` whose time is virtual and jumps to the next deadline when all wait.

    trio asks its clock how long to sleep when no task can run. This clock answers 0 and
    moves its time to the deadline, so timers fire at once; while a thread job works
    (``limit_threads``) it lets trio wait for it in real time instead, so thread work costs
    no virtual time, which ``trio.testing.MockClock(autojump_threshold=0)`` would not
    guarantee (it jumps as soon as every task waits, threads or not). With no deadline and
    no thread job nothing can ever run again: ``on_deadlock`` is called, once, with the
    description of the waiting tasks. Time never goes back; ``spend`` moves it at once.
    """

    def __init__(self, start: float = 0.0) -> None:
        self._now = start
        self._limiters: list[CapacityLimiter] = []
        self._on_deadlock: Callable[[str], None] | None = None

    def start_clock(self) -> None:
        """Nothing to start: time moves only when trio or ``spend`` moves it."""

    def current_time(self) -> float:
        """The virtual time, in seconds."""
        return self._now

    def deadline_to_sleep_time(self, deadline: float) -> float:
        """0 once time is at ``deadline`` (it jumps there); real seconds for a thread job."""
        if deadline <= self._now:
            return 0.0
        if any(limiter.borrowed_tokens for limiter in self._limiters):
            return THREAD_WAIT
        if math.isinf(deadline):
            return self._deadlocked()
        self._now = deadline
        return 0.0

    def spend(self, seconds: float) -> None:
        """Let ``seconds`` of virtual time pass now, as a running task's CPU cost."""
        if not seconds >= 0:
            raise ValueError(f"a CPU cost is 0 or more seconds; got {seconds}")
        self._now += seconds

    def limit_threads(self, limiter: CapacityLimiter) -> None:
        """Run ``limiter``'s thread jobs one at a time, and wait for them in real time."""
        limiter.total_tokens = 1
        self._limiters.append(limiter)

    def on_deadlock(self, callback: Callable[[str], None] | None) -> None:
        """Call ``callback`` with a description of the waiting tasks if nothing can run.

        ``None`` stops watching (trio's own tasks wait without a deadline as it ends).
        """
        self._on_deadlock = callback

    def _deadlocked(self) -> float:
        callback, self._on_deadlock = self._on_deadlock, None
        if callback is None:
            return THREAD_WAIT  # not watched: whatever wakes trio (its shutdown) ends the wait
        waiting = sorted(_describe(task) for task in _tasks(trio.lowlevel.current_root_task()))
        callback(
            f"the simulation deadlocked at virtual time {self._now:.3f} s: no task can "
            "run, no timer is set and no thread works, so time cannot move on. "
            f"{len(waiting)} tasks wait: {'; '.join(waiting)}. Look for a wait nothing "
            "will end: a model or function that never returns, an event nobody sets"
        )
        return 0.0

    def __repr__(self) -> str:
        return f"<TrioVirtualClock time={self._now:.6f}>"


def seed_scheduler(seed: int) -> None:
    """Seed the generator trio orders its runnable tasks with, so that a run repeats.

    trio shuffles the tasks it runs in one pass, on purpose, to shake out code that
    depends on their order (and breaks ties between equal deadlines at random); it draws
    from one generator of its own module, which this seeds. No public API reaches it.
    """
    generator = getattr(importlib.import_module("trio._core._run"), "_r", None)
    if isinstance(generator, random.Random):
        generator.seed(f"lockgate simulation {seed}")


def _tasks(task: trio.lowlevel.Task | None) -> list[trio.lowlevel.Task]:
    if task is None:
        return []
    children = [child for nursery in task.child_nurseries for child in nursery.child_tasks]
    return [task, *(found for child in children for found in _tasks(child))]


def _describe(task: trio.lowlevel.Task) -> str:
    frame = _waiting_frame(task.coro)
    where = "" if frame is None else f" ({frame.f_code.co_filename}:{frame.f_lineno})"
    return f"{task.name}{where}"


def _waiting_frame(coro: Any) -> Any:
    """The innermost frame of the coroutine's chain of awaits outside trio's own code."""
    frames = []
    while coro is not None:
        frame = getattr(coro, "cr_frame", None) or getattr(coro, "gi_frame", None)
        if frame is not None:
            frames.append(frame)
        coro = getattr(coro, "cr_await", None) or getattr(coro, "gi_yieldfrom", None)
    outside = [frame for frame in frames if not frame.f_code.co_filename.startswith(_TRIO)]
    return (outside or frames or [None])[-1]


_TRIO = os.path.dirname(trio.__file__)
