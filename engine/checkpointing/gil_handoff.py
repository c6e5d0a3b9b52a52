"""GilHandoff: lets worker threads doing checkpoint I/O run while the event loop is busy."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["HANDOFF", "GilHandoff"]


class GilHandoff:
    """Counts checkpoint calls in worker threads; while any runs, subtasks lend the GIL.

    A busy subtask releases the GIL for a moment after every batch while the count is
    above zero. Why: a worker thread doing file I/O needs the GIL back after every system
    call, and CPython hands it over from a thread that keeps running Python only every
    switch interval (``sys.getswitchinterval()``). While the event loop processes records,
    one checkpoint's writes then wait for thousands of hand-offs, which cost the loop a
    share of its throughput (``bench/checkpoints.py --sections overhead``; the figures are on
    the benchmarks page of the docs). ``time.sleep(0)`` after a batch lets a waiting thread
    through at once.
    """

    __slots__ = ("active",)

    def __init__(self) -> None:
        self.active = 0

    @contextmanager
    def lend(self) -> Iterator[None]:
        """Mark a worker-thread call in flight for the duration of the block."""
        self.active += 1
        try:
            yield
        finally:
            self.active -= 1

    def yield_if_lent(self) -> None:
        """Release the GIL briefly if a worker-thread call is in flight."""
        if self.active:
            time.sleep(0)

    def __repr__(self) -> str:
        return f"<GilHandoff active={self.active}>"


HANDOFF = GilHandoff()  # one per process, as the GIL is
