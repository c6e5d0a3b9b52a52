"""YoungGeneration: fewer young collections while a sink keeps every record it is given.

A record a sink keeps (``CollectSink`` holds every one until its commit, then in
``results``) survives every young collection of the garbage collector, which runs each time
700 more objects were made than freed: a job keeping millions of records runs thousands of
them, each walking the records kept since the one before, and every tenth collection goes
on to an older generation. With the threshold at ``YOUNG_THRESHOLD`` they run rarely and
cost less per record kept (``bench/keyed_sum.py --sinks collect``, on the benchmarks page).

The threshold is the process's, so it is raised only while a holder runs, counted across
holders (several subtasks, several jobs on one loop), and put back when the last one lets
go, unless someone else changed it meanwhile: then theirs is kept.
"""

from __future__ import annotations

import gc

__all__ = ["YOUNG_GENERATION", "YOUNG_THRESHOLD", "YoungGeneration"]

YOUNG_THRESHOLD = 20_000
"""Objects made, net of those freed, between two young collections while records are kept."""


class YoungGeneration:
    """Holds the young generation's threshold at least at ``YOUNG_THRESHOLD`` while held.

    Invariant: while ``holders`` is above zero the threshold is at least
    ``YOUNG_THRESHOLD`` (or what someone set since); once it is back at zero, the threshold
    is what it was before the first ``hold``, unless it was changed by someone else.
    """

    __slots__ = ("_raised_from", "holders")

    def __init__(self) -> None:
        self.holders = 0
        self._raised_from: tuple[int, int, int] | None = None

    def hold(self) -> None:
        """Raise the threshold, if it is lower, for as long as this holder runs."""
        if self.holders == 0:
            threshold = gc.get_threshold()
            if threshold[0] < YOUNG_THRESHOLD:
                gc.set_threshold(YOUNG_THRESHOLD, *threshold[1:])
                self._raised_from = threshold
        self.holders += 1

    def release(self) -> None:
        """Let go; the last holder to let go puts the threshold back."""
        self.holders -= 1
        if self.holders > 0 or self._raised_from is None:
            return
        raised_from, self._raised_from = self._raised_from, None
        if gc.get_threshold() == (YOUNG_THRESHOLD, *raised_from[1:]):
            gc.set_threshold(*raised_from)

    def __repr__(self) -> str:
        return f"<YoungGeneration holders={self.holders} threshold={gc.get_threshold()}>"


YOUNG_GENERATION = YoungGeneration()  # one per process, as the collector is
