"""The broadcast state pattern: rules broadcast to every subtask, read by a keyed function.

Broadcast records are not ordered with keyed ones, so the tests read the broadcast state
where its contents are certain: in event-time timers that fire at the end of input, when
the operator's watermark (the minimum of both inputs') says both inputs are done. Every key
then reports the broadcast state of its subtask, which must be all the rules: on every
subtask, after a failure (the rules are not read again: they come back from the
checkpoint) and after a restore at another parallelism (every subtask gets a copy).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import (
    BroadcastContext,
    GraphError,
    KeyedBroadcastProcessFunction,
    MapStateDescriptor,
    OperatorError,
    ReadOnlyBroadcastContext,
    RestartStrategy,
    StreamEnvironment,
    ValueStateDescriptor,
    key_group_for,
    subtask_for_key_group,
)
from lockgate.engine.testing import AwaitCheckpoint, FailOnce
from tests.engine.jobs.savepoints import Topic, TopicSource

RULES = MapStateDescriptor[str, int]("rules")
END = 1e18  # an event-time timer there fires at the end of input only
Rule = tuple[str, int]  # (name, limit)
Payment = tuple[str, int]  # (account, amount)


class Applied:
    """Counts rules applied by every subtask's copy of ``Limits``; ``done`` at ``expected``."""

    def __init__(self, expected: int) -> None:
        self.expected = expected
        self.count = 0
        self.done = anyio.Event()

    def __deepcopy__(self, memo: dict[int, Any]) -> Applied:
        return self

    def add(self) -> None:
        self.count += 1
        if self.count >= self.expected:
            self.done.set()


class Limits(KeyedBroadcastProcessFunction[str, Payment, Rule, tuple[Any, ...]]):
    """Rules set limits by name; payments over the ``max`` limit known so far are flagged.

    Each account sets a timer at the end of input that reports the rules its subtask holds.
    """

    def __init__(self, applied: Applied | None = None) -> None:
        self.applied = applied

    def open(self, context: Any) -> None:
        self.seen = context.get_state(ValueStateDescriptor[int]("seen", default=0))

    def process_element(
        self, value: Payment, ctx: ReadOnlyBroadcastContext[str]
    ) -> list[tuple[Any, ...]]:
        if self.seen.value() == 0:
            ctx.timer_service().register_event_time_timer(END)
        self.seen.update(self.seen.value() + 1)
        limit = ctx.get_broadcast_state(RULES).get("max")
        return [("flagged", *value)] if limit is not None and value[1] > limit else []

    def process_broadcast_element(self, value: Rule, ctx: BroadcastContext) -> None:
        ctx.get_broadcast_state(RULES).put(*value)
        if self.applied is not None:
            self.applied.add()

    def on_timer(self, timestamp: float, ctx: ReadOnlyBroadcastContext[str]) -> list[Any]:
        rules = dict(ctx.get_broadcast_state(RULES).items())
        return [("rules", ctx.get_current_key(), self.seen.value(), sorted(rules.items()))]


def payments(count: int, accounts: int = 12) -> list[Payment]:
    return [(f"acct{n % accounts}", n % 1000) for n in range(count)]


RULE_LIST: list[Rule] = [("max", 900), ("min", 1), ("max", 950)]


def reports(results: list[Any]) -> dict[str, tuple[int, list[Rule]]]:
    return {r[1]: (r[2], r[3]) for r in results if r[0] == "rules"}


def limits_job(
    env: StreamEnvironment, payment_elements: list[Any], rules: list[Any], sink: CollectSink[Any]
) -> StreamEnvironment:
    # One payments subtask: a FailOnce among the payments comes after their AwaitCheckpoint.
    (
        env.from_source(CollectionSource(payment_elements), uid="payments", parallelism=1)
        .key_by(lambda payment: payment[0])
        .connect(env.from_source(CollectionSource(rules), uid="rules").broadcast(RULES))
        .process(Limits(), uid="limits")
        .sink_to(sink, uid="out")
    )
    return env


async def test_every_subtask_holds_every_rule_broadcast() -> None:
    sink = CollectSink[Any]()
    env = limits_job(StreamEnvironment(parallelism=3), payments(1_200), RULE_LIST, sink)

    await env.execute("limits")

    final = sorted({"max": 950, "min": 1}.items())
    assert reports(sink.results) == {f"acct{n}": (100, final) for n in range(12)}
    flagged = [r for r in sink.results if r[0] == "flagged"]
    assert all(amount > 900 for _, _, amount in flagged)  # 900 or 950, as the rules came


@pytest.mark.parametrize("backend", ["memory", "rocksdb"])
async def test_broadcast_state_comes_back_from_the_checkpoint_after_a_failure(
    backend: str, tmp_path: Path
) -> None:
    fail = FailOnce()
    elements: list[Any] = [*payments(600), AwaitCheckpoint(), *payments(300), fail]
    env = StreamEnvironment(parallelism=2, batch_size=32)
    env.enable_checkpointing(0.01)
    env.set_restart_strategy(RestartStrategy.fixed_delay(attempts=2, delay=0.0))
    env.set_state_backend(backend, path=tmp_path if backend == "rocksdb" else None)
    sink = CollectSink[Any]()

    await limits_job(env, [*elements, *payments(300)], RULE_LIST, sink).execute("limits")

    assert fail.fired
    final = sorted({"max": 950, "min": 1}.items())
    assert reports(sink.results) == {f"acct{n}": (100, final) for n in range(12)}


def topic_job(
    topic: Topic, rules: list[Rule], sink: CollectSink[Any], parallelism: int, applied: Applied
) -> StreamEnvironment:
    env = StreamEnvironment(parallelism=parallelism, max_parallelism=16)
    rules_uid = "rules" if rules else "no-rules"
    (
        env.from_source(TopicSource(topic), uid="payments")
        .map(topic.passed, uid="passed")
        .key_by(lambda payment: payment[0])
        .connect(env.from_source(CollectionSource(rules), uid=rules_uid).broadcast(RULES))
        .process(Limits(applied), uid="limits")
        .sink_to(sink, uid="out")
    )
    return env


async def test_a_restore_at_another_parallelism_gives_every_subtask_the_rules(
    tmp_path: Path,
) -> None:
    topic, first, second = Topic(partitions=1), CollectSink[Any](), CollectSink[Any]()
    applied = Applied(expected=len(RULE_LIST) * 2)  # every rule on both subtasks
    topic.append(payments(600), partition_of=lambda _: 0)
    async with topic_job(topic, RULE_LIST, first, 2, applied).start("before") as job:
        await topic.all_read.wait()
        await applied.done.wait()
        savepoint = await job.stop_with_savepoint(tmp_path.as_uri())
    topic.append(payments(600), partition_of=lambda _: 0)
    topic.close()

    # No rules after the restore: the three subtasks' rules can only come from the savepoint.
    after = topic_job(topic, [], second, 3, Applied(expected=0))
    await after.execute("after", restore_from=savepoint, allow_non_restored_state=True)

    final = sorted({"max": 950, "min": 1}.items())
    assert reports(second.results) == {f"acct{n}": (100, final) for n in range(12)}
    assert {subtask_of(key) for key in reports(second.results)} == {0, 1, 2}


def subtask_of(key: str) -> int:
    return subtask_for_key_group(key_group_for(key, 16), 16, 3)


class WritesWhileReading(Limits):
    def process_element(self, value: Payment, ctx: ReadOnlyBroadcastContext[str]) -> list[Any]:
        ctx.get_broadcast_state(MapStateDescriptor[str, int]("other")).get("max")
        return []


async def test_an_undeclared_broadcast_state_fails_the_job_naming_it() -> None:
    env = StreamEnvironment()
    (
        env.from_source(CollectionSource(payments(10)), uid="payments")
        .key_by(lambda payment: payment[0])
        .connect(env.from_source(CollectionSource(RULE_LIST), uid="rules").broadcast(RULES))
        .process(WritesWhileReading(), uid="limits")
        .sink_to(CollectSink(), uid="out")
    )

    with pytest.raises(OperatorError, match="'limits'") as failure:
        await env.execute("limits")

    assert "broadcast state 'other' was not declared" in str(failure.value.__cause__)


def test_the_pattern_needs_a_keyed_stream_a_broadcast_function_and_descriptors() -> None:
    env = StreamEnvironment()
    rules = env.from_source(CollectionSource(RULE_LIST), uid="rules")
    plain = env.from_source(CollectionSource(payments(3)), uid="payments")

    with pytest.raises(GraphError, match=r"process 'limits'.*needs a keyed first stream"):
        plain.connect(rules.broadcast(RULES)).process(Limits(), uid="limits")
    with pytest.raises(GraphError, match=r"KeyedBroadcastProcessFunction"):
        keyed = plain.key_by(lambda payment: payment[0])
        keyed.connect(rules.broadcast(RULES)).process(print, uid="limits")  # type: ignore[arg-type]
    with pytest.raises(GraphError, match=r"broadcast\(\) takes MapStateDescriptors"):
        rules.broadcast("rules")  # type: ignore[call-overload]
