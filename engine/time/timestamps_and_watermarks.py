"""TimestampsAndWatermarks: a strategy applied to one subtask's records, split by split ☐.

Flink's ``ProgressiveTimestampsAndWatermarks``: each record gets its event time from the
strategy's timestamp assigner and goes to the generator of its split (a source subtask
reading several splits has one generator per split; any other subtask one for all its
records). The splits' watermarks are combined as the minimum over the active ones
(``WatermarkOutputMultiplexer``). What a batch makes the subtask pass on (a watermark, or
an idleness change) is kept with its position in the batch, so that a watermark a
punctuated generator emits after record ``i`` leaves between records ``i`` and ``i + 1``.
Pure: the caller supplies the time and sends what is returned.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from lockgate.engine.events import Watermark, WatermarkStatus
from lockgate.engine.time.clock import Clock
from lockgate.engine.time.event_time import event_times_of
from lockgate.engine.time.generators import WatermarkGenerator, WatermarkGeneratorContext
from lockgate.engine.time.multiplexer import CombinedOutput, WatermarkOutputMultiplexer
from lockgate.engine.time.watermarks import WatermarkStrategy

__all__ = ["SUBTASK_OUTPUT", "SplitRun", "TimestampsAndWatermarks"]

SUBTASK_OUTPUT = ""
"""The one output of a subtask whose records are not told apart by split."""

_IDLE = WatermarkStatus(idle=True)


@dataclass(frozen=True, slots=True)
class SplitRun:
    """``count`` consecutive records of a batch read from split ``split_id``.

    ``finished``: the split has nothing after them, so it stops holding the watermark back.
    ``split_id`` ``None`` means the subtask's records as a whole.
    """

    split_id: str | None
    count: int
    finished: bool = False


class _Output:
    """One split's ``WatermarkOutput``: what its generator emits goes through the multiplexer.

    Immediate while records are seen, deferred during a periodic emission (Flink's two).
    """

    __slots__ = ("_key", "_owner")

    def __init__(self, owner: TimestampsAndWatermarks, key: str) -> None:
        self._owner = owner
        self._key = key

    def emit_watermark(self, watermark: Watermark) -> None:
        owner = self._owner
        owner.changed(
            owner.multiplexer.emit(self._key, watermark.timestamp, deferred=owner.deferred)
        )

    def mark_idle(self) -> None:
        owner = self._owner
        owner.changed(owner.multiplexer.mark_idle(self._key, deferred=owner.deferred))

    def mark_active(self) -> None:
        owner = self._owner
        owner.changed(owner.multiplexer.mark_active(self._key, deferred=owner.deferred))


class _Split:
    """A split's generator, its output, and when it last had records (for idleness)."""

    __slots__ = ("batched", "generator", "last_active", "output", "timed_out")

    def __init__(self, generator: WatermarkGenerator[Any], output: _Output) -> None:
        self.generator = generator
        self.output = output
        # A generator that never emits per record may take a batch's timestamps at once.
        self.batched: Callable[[Sequence[float]], None] | None = getattr(
            generator, "on_timestamps", None
        )
        self.last_active: float | None = None  # until the first periodic emission
        self.timed_out = False


class TimestampsAndWatermarks:
    """Applies a ``WatermarkStrategy`` to one subtask's records, each split on its own.

    Invariants: the subtask's watermark is the minimum over its active splits and only goes
    up; a split finished no longer counts, an idle one not until it emits again (reader
    idleness, or ``idle_timeout`` seconds without a record, checked at periodic emissions);
    ``on_periodic_emit`` asks the generators at most once every ``interval`` seconds, and at
    once after the subtask's first records; after ``finish`` (the final watermark left) or
    ``mark_without_input`` nothing more is emitted.
    """

    def __init__(
        self,
        strategy: WatermarkStrategy,
        *,
        uid: str,
        subtask_index: int,
        clock: Clock,
        splits: Iterable[str] | None = None,
    ) -> None:
        assert strategy.timestamp_assigner is not None, "the graph checks every strategy"
        self._strategy = strategy
        self._assigner = strategy.timestamp_assigner
        self._timeout = strategy.idle_timeout
        self._context = (uid, subtask_index, clock)
        self.multiplexer = WatermarkOutputMultiplexer()
        self._splits: dict[str, _Split] = {}
        self._pending: list[tuple[int, CombinedOutput]] = []
        self._position = 0
        self._next_emit = -math.inf
        self._had_records = False
        self._reader_idle: frozenset[str] = frozenset()
        self._done = False
        self._without_input = False
        self.deferred = False  # during a periodic emission: the outputs combine at its end
        self.by_split = splits is not None
        for split_id in [SUBTASK_OUTPUT] if splits is None else splits:
            self._add(split_id)

    @property
    def current(self) -> float:
        """The subtask's watermark: the last one it passed on (``-inf`` before the first)."""
        return self.multiplexer.combined

    @property
    def idle(self) -> bool:
        """Whether the subtask is idle now (every split is, or it reads nothing)."""
        return self.multiplexer.idle or self._without_input

    @property
    def split_watermarks(self) -> dict[str, float | None]:
        """Each split's watermark (``None`` while idle); empty unless told apart by split."""
        return self.multiplexer.outputs if self.by_split else {}

    def on_batch(
        self,
        records: Sequence[Any],
        now: float,
        runs: Sequence[SplitRun] | None = None,
        idle: Collection[str] | None = None,
    ) -> list[float]:
        """Take a batch read at ``now``; return its event times, in order.

        ``runs`` says which split each record came from (``None``: the subtask as a whole);
        ``idle`` which splits the reader says are idle (marked so before the records). What
        the batch makes the subtask pass on is in ``take_changes``.

        Raises:
            ValueError: naming the record, for an event time that is not finite.
        """
        times = event_times_of(self._assigner, records)
        self._pending, self._position = [], 0
        if idle is not None:
            self._mark_reader_idle(frozenset(idle))
        if runs is None:
            self._observe(self._split(None), records, times, 0, len(records), now)
        else:
            self._observe_runs(records, times, runs, now)
        if records and not self._had_records:  # the first records need not wait an interval
            self._had_records, self._next_emit = True, -math.inf
        return times

    def take_changes(self) -> list[tuple[int, CombinedOutput]]:
        """What the last batch made the subtask pass on, each after that many of its records."""
        changes, self._pending = self._pending, []
        return changes if not self._done else []

    def on_periodic_emit(self, now: float, interval: float) -> list[CombinedOutput]:
        """Ask the generators, if ``interval`` passed since they were last asked; return changes.

        Idleness is decided here first: a split without records for the idle timeout goes
        idle, and its generator is not asked while it stays so. The splits' watermarks are
        combined once all were asked, as Flink's deferred outputs.
        """
        if self._done or now < self._next_emit:
            return []
        self._next_emit = now + interval
        self.deferred = True
        try:
            for key, split in list(self._splits.items()):
                if not self._timed_out(key, split, now):
                    split.generator.on_periodic_emit(split.output)
        finally:
            self.deferred = False
        return self.multiplexer.update()

    def mark_without_input(self) -> WatermarkStatus | None:
        """The subtask reads nothing (a source subtask without splits): idle for good.

        Returns the idle status to emit, unless the subtask is done already.
        """
        if self._done:
            return None
        self._done = self._without_input = True
        return _IDLE

    def finish(self) -> None:
        """The input ended and the final watermark left: nothing more is due."""
        self._done = True

    def changed(self, changes: list[CombinedOutput]) -> None:
        """Keep what an output change passes on, at the current position of the batch."""
        position = self._position
        self._pending.extend((position, change) for change in changes)

    def _observe_runs(
        self, records: Sequence[Any], times: list[float], runs: Sequence[SplitRun], now: float
    ) -> None:
        start = 0
        for run in runs:
            end = start + run.count
            self._observe(self._split(run.split_id), records, times, start, end, now)
            if run.finished and run.split_id is not None:
                self._position = end
                self._splits.pop(run.split_id, None)
                self.changed(self.multiplexer.unregister(run.split_id))
            start = end

    def _observe(
        self,
        split: _Split,
        records: Sequence[Any],
        times: list[float],
        start: int,
        end: int,
        now: float,
    ) -> None:
        if start == end:
            return
        split.last_active, split.timed_out = now, False
        if split.batched is not None:
            split.batched(times if start == 0 and end == len(times) else times[start:end])
            return
        generator, output = split.generator, split.output
        for index in range(start, end):
            self._position = index + 1
            generator.on_event(records[index], times[index], output)

    def _timed_out(self, key: str, split: _Split, now: float) -> bool:
        if self._timeout is None:
            return False
        if split.last_active is None:  # idleness counts from the first periodic emission
            split.last_active = now
        if not split.timed_out and now - split.last_active >= self._timeout:
            split.timed_out = True
            self.multiplexer.mark_idle(key, deferred=True)
        return split.timed_out

    def _mark_reader_idle(self, idle: frozenset[str]) -> None:
        before, self._reader_idle = self._reader_idle, idle
        for key in idle - before:
            if key in self._splits:
                self.changed(self.multiplexer.mark_idle(key))
        for key in before - idle:
            if key in self._splits:
                self.changed(self.multiplexer.mark_active(key))

    def _split(self, split_id: str | None) -> _Split:
        key = SUBTASK_OUTPUT if split_id is None else split_id
        split = self._splits.get(key)
        return self._add(key) if split is None else split

    def _add(self, key: str) -> _Split:
        uid, subtask_index, clock = self._context
        context = WatermarkGeneratorContext(uid, subtask_index, key or None, clock)
        split = _Split(self._strategy.create_generator(context), _Output(self, key))
        self.multiplexer.register(key)
        self._splits[key] = split
        return split

    def __repr__(self) -> str:
        return f"<TimestampsAndWatermarks {self.multiplexer!r}>"
