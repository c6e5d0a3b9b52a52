"""sharing_the_gil: a worker thread walking large state lets the event loop's thread in often."""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterable, Iterator
from typing import TypeVar

__all__ = ["EVERY", "sharing_the_gil"]

T = TypeVar("T")

EVERY = 1_024  # items between two releases: about a tenth of a millisecond of Python work


def sharing_the_gil(items: Iterable[T], every: int = EVERY) -> Iterator[T]:
    """Yield ``items``, releasing the GIL for a moment after each ``every`` of them.

    Why: a thread that keeps running Python hands the GIL to a thread waiting for it only
    once that thread has waited a whole switch interval (``sys.getswitchinterval()``, 5 ms
    by default). A worker thread encoding, splitting or loading a million keys would so
    make every wake-up of the event loop wait up to 5 ms, for seconds. ``time.sleep(0)``
    releases the GIL, and the event loop's thread, if it waits, takes it at once; called
    on the event loop itself, it costs one system call per ``every`` items.
    """
    iterator = iter(items)
    while chunk := list(itertools.islice(iterator, every)):
        yield from chunk
        time.sleep(0)
