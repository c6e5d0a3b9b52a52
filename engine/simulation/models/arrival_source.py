"""ArrivalSource: a modelled source, whose records come as an arrival process says."""

from __future__ import annotations

import math
import random
from collections.abc import Iterator, Sequence
from typing import Any

from lockgate.engine.io.sources import Source, SourceContext, SourceReader, SourceSplit
from lockgate.engine.simulation.models.arrival import Arrival
from lockgate.engine.simulation.models.arrivals import ArrivalProcess
from lockgate.engine.simulation.models.keys import KeyDistribution
from lockgate.engine.simulation.models.model import Model
from lockgate.engine.simulation.models.replay import Replay
from lockgate.engine.time.clock import Clock

__all__ = ["ArrivalSource"]

DUE_WITHIN = 1e-9
"""An arrival this close after now is due: timers wake within a rounding error of their time."""


class ArrivalSource(Source[Arrival], Model):
    """Records that come when ``arrivals`` says, with keys from ``keys``: the world's input.

    ``arrivals`` is any ``ArrivalProcess``: ``ConstantRate``, ``Poisson``, a
    ``RateSchedule``, ``OnOff`` bursts, or the ``Replay`` of a recorded trace (whose keys
    the records carry unless ``keys`` is given).

    Each source subtask reads one split, an equal share of the process. Its reader waits
    until the next arrival is due and returns every arrival due by then (at most the
    batch): one by one at a low rate, a backlog at once when the job backpressured the
    source, each with its true ``event_time``. With ``tick`` the reader wakes only every
    ``tick`` seconds and admits what came meanwhile, as a polling source does (fewer
    wake-ups for high rates). ``limit`` ends the input after that many records (spread over
    the splits); without it the source is unbounded.

    A split's position is how many arrivals it emitted and when its process started; the
    arrivals come from the simulation's seed, so a restored reader draws the same ones
    again and goes on after the last one its checkpoint covered.
    """

    def __init__(
        self,
        arrivals: ArrivalProcess,
        *,
        keys: KeyDistribution | None = None,
        tick: float | None = None,
        limit: int | None = None,
    ) -> None:
        if tick is not None and not tick > 0:
            raise ValueError(f"ArrivalSource: tick must be more than 0 seconds; got {tick}")
        if limit is not None and not limit >= 0:
            raise ValueError(f"ArrivalSource: limit must be 0 or more records; got {limit}")
        self.arrivals = arrivals
        self.keys = keys
        self.tick = tick
        self.limit = limit

    @property
    def bounded(self) -> bool:
        """Whether a ``limit`` or the end of a replayed trace ends the input."""
        return self.limit is not None or isinstance(self.arrivals, Replay)

    def create_splits(self, parallelism: int) -> list[SourceSplit]:
        """One split per subtask, each with an equal share of the arrivals."""
        return [
            SourceSplit(f"arrivals-{index}", {"emitted": 0, "origin": None, "parts": parallelism})
            for index in range(parallelism)
        ]

    def create_reader(
        self, splits: Sequence[SourceSplit], context: SourceContext
    ) -> SourceReader[Arrival]:
        """A reader of ``splits`` (one, but a restore at a lower parallelism may give more)."""
        parts = [self._split_arrivals(split, context) for split in splits]
        return _ArrivalReader(parts, context.clock, tick=self.tick)

    def _split_arrivals(self, split: SourceSplit, context: SourceContext) -> _SplitArrivals:
        position: dict[str, Any] = split.position
        parts = int(position["parts"])
        index = int(split.split_id.rpartition("-")[2])
        rng = self.context_for(context.uid).random(split.split_id)
        return _SplitArrivals(
            split.split_id,
            parts,
            self.arrivals.share(parts, index),
            self.keys,
            rng,
            context.clock,
            origin=position["origin"],
            emitted=int(position["emitted"]),
            limit=None if self.limit is None else _share(self.limit, parts, index),
        )

    def __repr__(self) -> str:
        return f"<ArrivalSource {self.arrivals!r} keys={self.keys!r} tick={self.tick}>"


def _share(total: int, parts: int, index: int) -> int:
    return total // parts + (1 if index < total % parts else 0)


class _ArrivalReader(SourceReader[Arrival]):
    """Waits for the next arrival of its splits, then returns every arrival due."""

    def __init__(self, splits: list[_SplitArrivals], clock: Clock, *, tick: float | None) -> None:
        self.splits = splits
        self.clock = clock
        self.tick = tick

    async def read(self, max_records: int) -> list[Arrival]:
        """The arrivals due once the next one is, at most ``max_records``; ``[]`` at the end."""
        batch: list[Arrival] = []
        while not batch:
            live = [split for split in self.splits if not split.ended]
            if not live:
                return batch
            now = self.clock.now()
            wake = self._wake_at(min(split.next_due() for split in live))
            if wake > now + DUE_WITHIN:
                await self.clock.sleep(wake - now)
                now = self.clock.now()
            for split in live:
                split.take_due(now, max_records, batch)
        return batch

    def snapshot_splits(self) -> list[SourceSplit]:
        """Each split with the arrivals it emitted so far."""
        return [SourceSplit(split.split_id, split.position()) for split in self.splits]

    def _wake_at(self, due: float) -> float:
        tick = self.tick
        return due if tick is None else math.ceil(due / tick - DUE_WITHIN) * tick


class _SplitArrivals:
    """The arrivals of one split, drawn ahead by one: the next one's time and key."""

    def __init__(  # noqa: PLR0913 - one split's process, generator, clock and position
        self,
        split_id: str,
        parts: int,
        process: ArrivalProcess,
        keys: KeyDistribution | None,
        rng: random.Random,
        clock: Clock,
        *,
        origin: float | None,
        emitted: int,
        limit: int | None,
    ) -> None:
        self.split_id = split_id
        self.parts = parts
        self.process = process
        self.keys = keys
        self.rng = rng
        self.clock = clock
        self.origin = origin
        self.emitted = 0
        self.limit = limit
        self.next_time = math.inf
        self.next_key: Any = None
        self._times: Iterator[float] = iter(())
        self._traced_keys: Iterator[Any] | None = None
        if origin is not None:
            self._start(origin)
            for _ in range(emitted):
                self._advance()

    @property
    def ended(self) -> bool:
        """Whether the split emitted its ``limit``, or its process has no more arrivals."""
        if self.limit is not None and self.emitted >= self.limit:
            return True
        return self.origin is not None and self.next_time == math.inf

    def next_due(self) -> float:
        """When the next arrival comes (the process starts at the first call)."""
        if self.origin is None:
            self._start(self.clock.now())
        return self.next_time

    def take_due(self, now: float, at_most: int, into: list[Arrival]) -> None:
        """Move the arrivals due by ``now`` into ``into``, at most ``at_most`` of them."""
        limit = now + DUE_WITHIN
        while len(into) < at_most and not self.ended and self.next_time <= limit:
            into.append(Arrival(self.emitted, self.next_key, self.next_time, now))
            self._advance()

    def position(self) -> dict[str, Any]:
        """Where the split stands: arrivals emitted, and when its process started."""
        return {"emitted": self.emitted, "origin": self.origin, "parts": self.parts}

    def _start(self, origin: float) -> None:
        self.origin = origin
        self._times = self.process.times(self.rng)
        if self.keys is None and isinstance(self.process, Replay):
            self._traced_keys = self.process.key_sequence()
        self._draw()

    def _advance(self) -> None:
        self.emitted += 1
        self._draw()

    def _draw(self) -> None:
        assert self.origin is not None
        offset = next(self._times, None)
        self.next_time = math.inf if offset is None else self.origin + offset
        if self.keys is not None:
            self.next_key = self.keys.draw(self.rng)
        elif self._traced_keys is not None:
            self.next_key = next(self._traced_keys, None)
