from __future__ import annotations

from typing import Any

import anyio
import pytest

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import JobStatus, OperatorError, SinkContext, StreamEnvironment
from tests.engine.jobs.basic import CallbackSink, EndlessSource


def explode_at(bad: int) -> Any:
    def fn(x: int) -> int:
        if x == bad:
            raise ZeroDivisionError(f"boom at {x}")
        return x

    return fn


async def test_a_failing_user_function_names_the_operator_and_subtask() -> None:
    env = StreamEnvironment(parallelism=2)
    (
        env.from_source(CollectionSource(range(100)))
        .rebalance()
        .map(explode_at(42), uid="fragile")
        .sink_to(CollectSink())
    )

    with pytest.raises(OperatorError, match=r"operator 'fragile' \(subtask [12]/2\) failed"):
        await env.execute("failing")


async def test_the_user_exception_is_the_cause_of_the_job_failure() -> None:
    env = StreamEnvironment()
    env.from_source(CollectionSource(range(10))).map(explode_at(3), uid="fragile").sink_to(
        CollectSink()
    )

    with pytest.raises(OperatorError) as caught:
        await env.execute("failing")

    assert isinstance(caught.value.__cause__, ZeroDivisionError)
    assert caught.value.uid == "fragile"
    assert caught.value.subtask_index == 0


async def test_a_failure_cancels_every_other_subtask_of_the_job() -> None:
    env = StreamEnvironment()
    env.from_source(EndlessSource(), uid="endless").sink_to(CollectSink(), uid="drain")
    env.from_source(CollectionSource(range(10))).map(explode_at(5), uid="fragile").sink_to(
        CollectSink()
    )

    with anyio.fail_after(10), pytest.raises(OperatorError, match="fragile"):
        await env.execute("failing")


async def test_a_failing_sink_writer_names_the_sink() -> None:
    def reject(context: SinkContext, records: list[Any]) -> None:
        raise OSError("disk full")

    env = StreamEnvironment()
    env.from_source(CollectionSource(range(10))).sink_to(CallbackSink(reject), uid="archive")

    with pytest.raises(OperatorError, match="operator 'archive'") as caught:
        await env.execute("failing")

    assert isinstance(caught.value.__cause__, OSError)


async def test_a_failing_key_selector_names_the_keyed_operator() -> None:
    env = StreamEnvironment()
    (
        env.from_source(CollectionSource([{"k": 1}, {}]))
        .key_by(lambda record: record["k"])
        .reduce(lambda a, b: b, uid="latest")
        .sink_to(CollectSink())
    )

    with pytest.raises(OperatorError, match="operator 'latest'") as caught:
        await env.execute("failing")

    assert isinstance(caught.value.__cause__, KeyError)


async def test_a_job_left_running_is_cancelled_when_its_start_block_ends() -> None:
    env = StreamEnvironment()
    env.from_source(EndlessSource()).sink_to(CollectSink())

    with anyio.fail_after(10):
        async with env.start("endless") as job:
            pass

    assert job.status is JobStatus.CANCELED
