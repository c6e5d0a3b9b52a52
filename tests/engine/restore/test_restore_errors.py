"""Errors that no restart can cure end the job at once; deployment errors name the operator."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lockgate.connectors import CollectSink
from lockgate.engine import (
    IncompatibleState,
    KeyedProcessFunction,
    ListStateDescriptor,
    OperatorError,
    RestartStrategy,
    Sink,
    SinkContext,
    SinkWriter,
    StreamEnvironment,
    ValueStateDescriptor,
)
from tests.engine.jobs.checkpoints import cancel_and_wait
from tests.engine.jobs.savepoints import Topic, TopicSource


class Counting(KeyedProcessFunction[int, tuple[int, int], tuple[int, int]]):
    """Counts per key in a value state, or (``as_list``) in a list state of the same name."""

    def __init__(self, *, as_list: bool = False) -> None:
        self.as_list = as_list

    def open(self, context: Any) -> None:
        if self.as_list:
            self.seen = context.get_list_state(ListStateDescriptor[int]("count"))
        else:
            self.count = context.get_state(ValueStateDescriptor[int]("count", default=0))

    def process_element(self, value: tuple[int, int], ctx: Any) -> Any:
        if self.as_list:
            self.seen.add(1)
            yield (value[0], len(self.seen.get()))
        else:
            self.count.update(self.count.value() + 1)
            yield (value[0], self.count.value())


def job(topic: Topic, storage: Path, *, as_list: bool = False) -> StreamEnvironment:
    env = StreamEnvironment(parallelism=2)
    env.enable_checkpointing()
    env.set_checkpoint_storage(storage.as_uri())
    env.set_restart_strategy(RestartStrategy.fixed_delay(attempts=5, delay=0.0))
    env.from_source(TopicSource(topic), uid="events").map(topic.passed).key_by(
        lambda e: e[0]
    ).process(Counting(as_list=as_list), uid="counts").sink_to(CollectSink[Any](), uid="out")
    return env


async def test_a_state_restored_as_another_kind_fails_at_once_naming_uid_and_state(
    tmp_path: Path,
) -> None:
    topic = Topic(2)
    topic.append([(key, 1) for key in range(20)], partition_of=lambda e: e[0])
    async with job(topic, tmp_path).start("kinds") as running:
        await topic.all_read.wait()
        await running.trigger_checkpoint()
        await cancel_and_wait(running)

    changed = job(topic, tmp_path, as_list=True)
    async with changed.start("kinds", restore_from="latest") as restored:
        with pytest.raises(IncompatibleState, match=r"counts.*'count'.*value.*list"):
            await restored.wait()
    assert restored.metrics().attempt == 0  # not retried: every attempt would fail alike


class RefusingSink(Sink[Any]):
    def create_writer(self, context: SinkContext) -> SinkWriter[Any]:
        raise ConnectionError("the warehouse is closed")


async def test_a_sink_that_cannot_start_fails_the_job_with_an_error_naming_its_uid() -> None:
    env = StreamEnvironment()
    env.from_source(TopicSource(Topic(1)), uid="events").sink_to(RefusingSink(), uid="warehouse")

    with pytest.raises(OperatorError, match="warehouse") as failure:
        await env.execute("refused")
    assert isinstance(failure.value.__cause__, ConnectionError)
