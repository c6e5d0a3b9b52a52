"""A job keeping a state of every keyed kind, fed as far as the test says, for query_state."""

from __future__ import annotations

import operator
from collections.abc import Iterable, Sequence
from typing import Any

import anyio

from lockgate.engine import (
    AggregatingStateDescriptor,
    KeyedProcessFunction,
    ListStateDescriptor,
    MapStateDescriptor,
    ProcessContext,
    ReducingStateDescriptor,
    RuntimeContext,
    Sink,
    SinkContext,
    SinkWriter,
    Source,
    SourceContext,
    SourceReader,
    SourceSplit,
    StreamEnvironment,
    ValueStateDescriptor,
)
from lockgate.engine.testing import FailOnce
from tests.engine.jobs.async_io import Changes
from tests.engine.state.states import Average

KEYS = 5
STATES = ("last", "numbers", "by_digit", "total", "mean")


class Feed:
    """How far a ``FedSource`` may read; the test moves it on. Shared by every copy."""

    def __init__(self) -> None:
        self.up_to = 0
        self.changes = Changes()

    def __deepcopy__(self, memo: dict[int, Any]) -> Feed:
        return self

    def release(self, up_to: int) -> None:
        self.up_to = up_to
        self.changes.notify()


class FedSource(Source[int]):
    """Counts up from 0, never past what its ``Feed`` released; it never ends (one split)."""

    def __init__(self, feed: Feed) -> None:
        self.feed = feed

    @property
    def bounded(self) -> bool:
        return False

    def create_splits(self, parallelism: int) -> list[SourceSplit]:
        return [SourceSplit("all", 0)]

    def create_reader(self, splits: Sequence[SourceSplit], context: SourceContext) -> _Fed:
        return _Fed(self.feed, splits[0].position if splits else None)


class _Fed(SourceReader[int]):
    def __init__(self, feed: Feed, position: int | None) -> None:
        self.feed = feed
        self.next = position

    async def read(self, max_records: int) -> list[int]:
        if self.next is None:  # a subtask without the split
            await anyio.sleep_forever()
        start = self.next
        assert start is not None
        await self.feed.changes.wait_until(lambda: self.feed.up_to > start, within=3600)
        self.next = min(self.feed.up_to, start + max_records)
        return list(range(start, self.next))

    def snapshot_splits(self) -> list[SourceSplit]:
        return [] if self.next is None else [SourceSplit("all", self.next)]


class EveryKind(KeyedProcessFunction[int, int, int]):
    """Keeps each number in a keyed state of every kind; emits it. ``fail`` fires at ``at``."""

    def __init__(self, fail: FailOnce | None = None, *, at: int = -1) -> None:
        self.fail = fail
        self.at = at

    def open(self, context: RuntimeContext) -> None:
        self.last = context.get_state(ValueStateDescriptor[int]("last", default=-1))
        self.numbers = context.get_state(ListStateDescriptor[int]("numbers"))
        self.by_digit = context.get_state(MapStateDescriptor[int, int]("by_digit"))
        self.total = context.get_state(ReducingStateDescriptor[int]("total", operator.add))
        self.mean = context.get_state(AggregatingStateDescriptor("mean", Average()))

    def process_element(self, number: int, ctx: ProcessContext) -> Iterable[int]:
        if self.fail is not None and number == self.at:
            self.fail.maybe_fire()
        self.last.update(number)
        self.numbers.add(number)
        self.by_digit.put(number % 10, number)
        self.total.add(number)
        self.mean.add(number)
        yield number


def expected(numbers: Iterable[int]) -> dict[tuple[str, int], Any]:
    """(state, key) -> what query_state returns after ``EveryKind`` processed ``numbers``."""
    by_key: dict[int, list[int]] = {key: [] for key in range(KEYS)}
    for number in numbers:
        by_key[number % KEYS].append(number)
    answers: dict[tuple[str, int], Any] = {}
    for key, mine in by_key.items():
        answers["last", key] = mine[-1] if mine else -1
        answers["numbers", key] = mine
        answers["by_digit", key] = {number % 10: number for number in mine}
        answers["total", key] = sum(mine) if mine else None
        answers["mean", key] = sum(mine) / len(mine) if mine else None
    return answers


async def answers(job: Any) -> dict[tuple[str, int], Any]:
    """query_state for every state of ``EveryKind`` and every key."""
    return {
        (name, key): await job.query_state("every", name, key)
        for name in STATES
        for key in range(KEYS)
    }


class ProcessedSink(Sink[int]):
    """Counts what its writers got, per attempt; with ``hold``, a write waits for ``release``."""

    def __init__(self, *, hold: bool = False) -> None:
        self.by_attempt: dict[int, int] = {}
        self.changes = Changes()
        self.hold = hold
        self.held = anyio.Event()
        self.released = anyio.Event()

    def __deepcopy__(self, memo: dict[int, Any]) -> ProcessedSink:
        return self

    def create_writer(self, context: SinkContext) -> SinkWriter[int]:
        return _ProcessedWriter(self, context.attempt)

    def release(self) -> None:
        self.released.set()

    async def wait_for(self, count: int, *, attempt: int = 0) -> None:
        """Wait until the writers of ``attempt`` got ``count`` records."""
        await self.changes.wait_until(lambda: self.by_attempt.get(attempt, 0) >= count)


class _ProcessedWriter(SinkWriter[int]):
    def __init__(self, sink: ProcessedSink, attempt: int) -> None:
        self.sink = sink
        self.attempt = attempt

    async def write(self, records: list[int]) -> None:
        sink = self.sink
        sink.by_attempt[self.attempt] = sink.by_attempt.get(self.attempt, 0) + len(records)
        sink.changes.notify()
        if sink.hold:
            sink.held.set()
            await sink.released.wait()


def every_kind_job(
    feed: Feed,
    sink: ProcessedSink,
    *,
    parallelism: int = 2,
    backend: str = "memory",
    function: EveryKind | None = None,
) -> StreamEnvironment:
    """numbers (fed) -> key_by(n % KEYS) -> every (EveryKind) -> out; checkpoints on demand."""
    env = StreamEnvironment(parallelism=parallelism)
    env.enable_checkpointing()
    env.set_state_backend(backend)
    (
        env.from_source(FedSource(feed), uid="numbers", parallelism=1)
        .key_by(lambda number: number % KEYS)
        .process(function or EveryKind(), uid="every")
        .sink_to(sink, uid="out")
    )
    return env
