"""Exactly-once on the memory backend, whose snapshots are versions of the state: records go on
writing every kind of state during each checkpoint's asynchronous part (in a worker thread,
the state being large), two checkpoints may be in flight at once, a failure is injected after a
completed checkpoint, and the restored state gives exactly the outputs of a run without one."""

from __future__ import annotations

import operator
from collections import defaultdict
from typing import Any

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import (
    AggregatingStateDescriptor,
    KeyedProcessFunction,
    ListStateDescriptor,
    MapStateDescriptor,
    ProcessContext,
    ReducingStateDescriptor,
    RestartStrategy,
    RuntimeContext,
    StreamEnvironment,
    ValueStateDescriptor,
)
from lockgate.engine.testing import AwaitCheckpoint, FailOnce
from tests.engine.state.states import Average

KEYS = 12_000  # x 5 states per subtask: more than the 20,000 entries encoded on the event loop
ROUNDS = 3

Output = tuple[int, int, int, tuple[int, ...], tuple[tuple[int, int], ...], float]


class EveryKind(KeyedProcessFunction[int, tuple[int, int], Output]):
    """Per key, writes one state of every kind per record and emits what they all hold."""

    def open(self, context: RuntimeContext) -> None:
        self.count = context.get_state(ValueStateDescriptor[int]("count", default=0))
        self.recent = context.get_state(ListStateDescriptor[int]("recent"))
        self.residues = context.get_state(MapStateDescriptor[int, int]("residues"))
        self.total = context.get_state(ReducingStateDescriptor[int]("total", operator.add))
        self.mean = context.get_state(AggregatingStateDescriptor("mean", Average()))

    def process_element(self, value: tuple[int, int], ctx: ProcessContext[Output]) -> Any:
        key, number = value
        self.count.update(self.count.value() + 1)
        self.recent.update([*self.recent.get(), number][-2:])
        self.residues.put(number % 2, (self.residues.get(number % 2) or 0) + 1)
        self.total.add(number)
        self.mean.add(number)
        residues = tuple(sorted(self.residues.items()))
        yield (key, self.count.value(), self.total.get(), tuple(self.recent.get()), residues,
               self.mean.get())  # fmt: skip


def events(fail: FailOnce) -> list[Any]:
    """ROUNDS rounds over every key; a completed checkpoint, then a failure, in the middle."""
    stream: list[Any] = [(key, key + round_) for round_ in range(ROUNDS) for key in range(KEYS)]
    stream.insert(int(KEYS * 1.5), fail)
    stream.insert(KEYS, AwaitCheckpoint())
    return stream


def expected() -> dict[int, list[Output]]:
    """Each key's outputs, in order, as one run without a failure gives them."""
    outputs: dict[int, list[Output]] = {}
    for key in range(KEYS):
        numbers = [key + round_ for round_ in range(ROUNDS)]
        outputs[key] = [
            (key, n + 1, sum(numbers[: n + 1]), tuple(numbers[max(0, n - 1) : n + 1]),
             _residues(numbers[: n + 1]), sum(numbers[: n + 1]) / (n + 1))
            for n in range(ROUNDS)
        ]  # fmt: skip
    return outputs


def _residues(numbers: list[int]) -> tuple[tuple[int, int], ...]:
    counts: dict[int, int] = defaultdict(int)
    for number in numbers:
        counts[number % 2] += 1
    return tuple(sorted(counts.items()))


async def test_every_state_kind_restores_exactly_after_a_failure_while_snapshots_overlap() -> None:
    fail = FailOnce()
    env = StreamEnvironment(parallelism=2, batch_size=256)
    env.enable_checkpointing(0.01, max_concurrent=2)
    env.set_restart_strategy(RestartStrategy.fixed_delay(attempts=2, delay=0.0))
    sink = CollectSink()
    (
        env.from_source(CollectionSource(events(fail)), uid="events", parallelism=1)
        .key_by(lambda event: event[0])
        .process(EveryKind(), uid="every-kind")
        .sink_to(sink, uid="out")
    )

    await env.execute("every-kind")

    assert fail.fired, "the injected failure never fired: the test proves nothing"
    committed: dict[int, list[Output]] = defaultdict(list)
    for output in sink.results:
        committed[output[0]].append(output)
    assert committed == expected()
