"""``connect``: one operator over two streams, a function per input, keyed state they share.

The keyed case is an enrichment join: events wait in keyed state for their user's profile,
which may come before or after them on the other input. Whatever the order, each event is
emitted once with its user's tier, so the expected output is exact: also after a failure
injected once a checkpoint completed (and provably fired), and after a restore at another
parallelism.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import (
    GraphError,
    KeyedCoProcessFunction,
    ListStateDescriptor,
    MemoryCheckpointStorage,
    OutputTag,
    ProcessContext,
    RestartStrategy,
    RuntimeContext,
    StreamEnvironment,
    TimeDomain,
    ValueStateDescriptor,
    WatermarkStrategy,
)
from lockgate.engine.testing import AwaitCheckpoint, FailOnce

USERS = 50
Event = tuple[str, int]  # (user, amount)
Profile = tuple[str, str]  # (user, tier)
Enriched = tuple[str, int, str]


def events(count: int, start: int = 0) -> list[Event]:
    return [(f"u{i % USERS}", i) for i in range(start, start + count)]


def profiles() -> list[Profile]:
    return [(f"u{user}", "gold" if user % 3 == 0 else "basic") for user in range(USERS)]


def enriched(all_events: list[Event]) -> Counter[Enriched]:
    tiers = dict(profiles())
    return Counter((user, amount, tiers[user]) for user, amount in all_events)


class Enrich(KeyedCoProcessFunction[str, Event, Profile, Enriched]):
    """Events (first input) get their user's tier (second input); early events wait."""

    def open(self, context: RuntimeContext) -> None:
        self.tier = context.get_state(ValueStateDescriptor[str]("tier"))
        self.waiting = context.get_state(ListStateDescriptor[int]("waiting"))

    def process_element1(self, value: Event, ctx: ProcessContext[str]) -> Iterator[Enriched]:
        tier = self.tier.value()
        if tier is None:
            self.waiting.add(value[1])
            return
        yield (value[0], value[1], tier)

    def process_element2(self, value: Profile, ctx: ProcessContext[str]) -> Iterator[Enriched]:
        self.tier.update(value[1])
        for amount in self.waiting.get():
            yield (value[0], amount, value[1])
        self.waiting.clear()


def enrichment_job(
    env: StreamEnvironment,
    event_elements: list[Any],
    sink: CollectSink[Enriched],
    *,
    with_profiles: bool = True,
    phase: int = 1,
) -> StreamEnvironment:
    profile_elements = profiles() if with_profiles else []
    (
        # One events subtask: a FailOnce among the events comes after their AwaitCheckpoint.
        env.from_source(CollectionSource(event_elements), uid=f"events-{phase}", parallelism=1)
        .connect(env.from_source(CollectionSource(profile_elements), uid=f"profiles-{phase}"))
        .key_by(lambda event: event[0], lambda profile: profile[0])
        .process(Enrich(), uid="enrich")
        .sink_to(sink, uid=f"out-{phase}")
    )
    return env


async def test_map_applies_each_inputs_function_to_its_records() -> None:
    env = StreamEnvironment(parallelism=2)
    sink: CollectSink[tuple[str, Any]] = CollectSink()
    numbers = env.from_source(CollectionSource(range(300)), uid="numbers")
    words = env.from_source(CollectionSource([f"w{i}" for i in range(200)]), uid="words")
    (
        numbers.connect(words)
        .map(lambda n: ("number", n * 2), lambda w: ("word", w.upper()), uid="both")
        .sink_to(sink, uid="out")
    )

    await env.execute("co-map")

    expected = [("number", n * 2) for n in range(300)] + [("word", f"W{i}") for i in range(200)]
    assert Counter(sink.results) == Counter(expected)


async def test_flat_map_emits_every_record_each_function_returns() -> None:
    env = StreamEnvironment(parallelism=2)
    sink: CollectSink[Any] = CollectSink()
    (
        env.from_source(CollectionSource(range(100)), uid="numbers")
        .connect(env.from_source(CollectionSource(["ab", "cde"]), uid="words"))
        .flat_map(lambda n: [n] * (n % 3), lambda w: list(w), uid="both")
        .sink_to(sink, uid="out")
    )

    await env.execute("co-flat-map")

    expected = [n for n in range(100) for _ in range(n % 3)] + list("abcde")
    assert Counter(sink.results) == Counter(expected)


async def test_keyed_process_sees_both_inputs_under_one_key() -> None:
    sink: CollectSink[Enriched] = CollectSink()
    env = enrichment_job(StreamEnvironment(parallelism=3), events(5_000), sink)

    await env.execute("enrich")

    assert Counter(sink.results) == enriched(events(5_000))


@pytest.mark.parametrize(
    ("backend", "unaligned"), [("memory", False), ("rocksdb", False), ("memory", True)]
)
async def test_a_failure_loses_and_repeats_no_enriched_event(
    backend: str, unaligned: bool, tmp_path: Path
) -> None:
    fail = FailOnce()
    elements: list[Any] = [*events(4_000), AwaitCheckpoint(), *events(500, 4_000), fail]
    elements += events(3_000, 4_500)
    env = StreamEnvironment(parallelism=2, batch_size=64)
    env.enable_checkpointing(0.01, unaligned=unaligned)
    env.set_restart_strategy(RestartStrategy.fixed_delay(attempts=2, delay=0.0))
    env.set_state_backend(backend, path=tmp_path if backend == "rocksdb" else None)
    sink: CollectSink[Enriched] = CollectSink()

    await enrichment_job(env, elements, sink).execute("enrich")

    assert fail.fired
    assert Counter(sink.results) == enriched(events(7_500))


async def test_shared_keyed_state_moves_with_its_keys_to_another_parallelism() -> None:
    storage, first, second = MemoryCheckpointStorage(), CollectSink(), CollectSink()
    env = StreamEnvironment(parallelism=2, max_parallelism=13)
    env.enable_checkpointing()
    env.set_checkpoint_storage(storage)
    await enrichment_job(env, events(1_000), first).execute("enrich")

    env = StreamEnvironment(parallelism=3, max_parallelism=13)
    env.enable_checkpointing()
    env.set_checkpoint_storage(storage)
    enrichment_job(env, events(600, 1_000), second, with_profiles=False, phase=2)
    await env.execute("enrich", restore_from="latest", allow_non_restored_state=True)

    assert Counter(first.results) == enriched(events(1_000))
    assert Counter(second.results) == enriched(events(600, 1_000))  # tiers came from state


LATE = OutputTag[Event]("unknown")


class EnrichKnown(Enrich):
    """Like ``Enrich``, but events of users it has no tier for go to a side output at once."""

    def process_element1(self, value: Event, ctx: ProcessContext[str]) -> Iterator[Enriched]:
        tier = self.tier.value()
        if tier is None:
            ctx.output(LATE, value)
            return
        yield (value[0], value[1], tier)


async def test_a_keyed_co_process_function_sends_to_side_outputs() -> None:
    env = StreamEnvironment(parallelism=2)
    main: CollectSink[Enriched] = CollectSink()
    side: CollectSink[Event] = CollectSink()
    known = [user for user in profiles() if user[0] != "u7"]
    enriched_stream = (
        env.from_source(CollectionSource(events(1_000)), uid="events")
        .connect(env.from_source(CollectionSource(known), uid="profiles"))
        .key_by(lambda event: event[0], lambda profile: profile[0])
        .process(EnrichKnown(), uid="enrich")
    )
    enriched_stream.sink_to(main, uid="out")
    enriched_stream.side_output(LATE).sink_to(side, uid="unknown")

    await env.execute("enrich-known")

    # Without an order between the inputs, an event of a known user may come before its
    # profile: each event is in exactly one of the outputs, and u7's only on the side.
    tiers = dict(profiles())
    outcomes = Counter((user, amount, tiers[user]) for user, amount in side.results)
    assert outcomes + Counter(main.results) == enriched(events(1_000))
    assert {user for user, _, _ in main.results} <= {user for user, _ in known}
    assert {(user, amount) for user, amount in events(1_000) if user == "u7"} <= set(side.results)


class Deadlines(KeyedCoProcessFunction[str, Event, Event, tuple[str, float]]):
    """Each record of either input sets an event-time timer 5 ms after it, per key."""

    def process_element1(self, value: Event, ctx: ProcessContext[str]) -> None:
        ctx.timer_service().register_event_time_timer(value[1] + 5)

    def process_element2(self, value: Event, ctx: ProcessContext[str]) -> None:
        ctx.timer_service().register_event_time_timer(value[1] + 5)

    def on_timer(self, timestamp: float, ctx: ProcessContext[str]) -> Iterator[tuple[str, float]]:
        assert ctx.time_domain is TimeDomain.EVENT_TIME
        yield (ctx.get_current_key(), timestamp)


async def test_event_time_timers_fire_once_per_key_and_time_from_both_inputs() -> None:
    env = StreamEnvironment(parallelism=2, auto_watermark_interval=0)
    strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(
        lambda event: event[1]
    )
    sink: CollectSink[tuple[str, float]] = CollectSink()
    odd = [(f"k{i % 4}", i) for i in range(1, 400, 2)]
    even = [(f"k{i % 4}", i) for i in range(0, 400, 2)]
    (
        env.from_source(CollectionSource(odd), uid="odd", watermark_strategy=strategy)
        .connect(env.from_source(CollectionSource(even), uid="even", watermark_strategy=strategy))
        .key_by(lambda event: event[0], lambda event: event[0])
        .process(Deadlines(), uid="deadlines")
        .sink_to(sink, uid="out")
    )

    await env.execute("deadlines")

    assert Counter(sink.results) == Counter((f"k{i % 4}", i + 5) for i in range(400))


def test_the_second_inputs_mark_chains_to_its_stream() -> None:
    env = StreamEnvironment(parallelism=2)
    (
        env.from_source(CollectionSource(range(3)), uid="numbers")
        .connect(env.from_source(CollectionSource(["a"]), uid="words"))
        .map(str, str, uid="both")
        .sink_to(CollectSink(), uid="out")
    )

    plan = env.plan()

    assert plan.chain_of("both-second-input").uids == ("words", "both-second-input")
    assert plan.chain_of("both").uids[0] == "both"


def test_process_needs_both_inputs_keyed() -> None:
    env = StreamEnvironment()
    connected = (
        env.from_source(CollectionSource(events(3)), uid="events")
        .key_by(lambda event: event[0])
        .connect(env.from_source(CollectionSource(profiles()), uid="profiles"))
    )

    with pytest.raises(GraphError, match=r"process 'enrich'.*both inputs keyed.*key_by\(key1"):
        connected.process(Enrich(), uid="enrich")


def test_process_needs_a_keyed_co_process_function() -> None:
    env = StreamEnvironment()
    connected = (
        env.from_source(CollectionSource(events(3)), uid="events")
        .connect(env.from_source(CollectionSource(profiles()), uid="profiles"))
        .key_by(lambda event: event[0], lambda profile: profile[0])
    )

    with pytest.raises(GraphError, match=r"process 'enrich'.*KeyedCoProcessFunction"):
        connected.process(lambda record: record, uid="enrich")  # type: ignore[arg-type]
