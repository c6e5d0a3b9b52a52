"""What ProcessExecutor refuses at submission, before any process starts or record flows."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import (
    ExecutorError,
    GraphError,
    ManualClock,
    ProcessExecutor,
    StreamEnvironment,
    WatermarkStrategy,
)
from tests.engine.runtime.executors.jobs import file_checkpointed_env


class HoldsALock:
    """A map function holding a lock: locks cannot be pickled."""

    def __init__(self) -> None:
        self.lock = threading.Lock()

    def __call__(self, record: int) -> int:
        return record


async def test_a_function_that_cannot_be_pickled_fails_at_submission_naming_its_operator(
    tmp_path: Path,
) -> None:
    env = file_checkpointed_env(tmp_path)
    env.from_source(CollectionSource(range(10)), uid="numbers").map(
        HoldsALock(), uid="holds-a-lock"
    ).sink_to(CollectSink(), uid="out")
    executor = ProcessExecutor(workers=2)

    with pytest.raises(GraphError, match=r"operator 'holds-a-lock': its function .* cannot be"):
        await env.execute("locked", executor=executor)

    assert executor.statistics().started == 0


def test_a_key_selector_that_cannot_be_pickled_is_named_by_its_keyed_operator(
    tmp_path: Path,
) -> None:
    lock = threading.Lock()
    env = file_checkpointed_env(tmp_path, parallelism=1)
    env.from_source(CollectionSource(range(10)), uid="numbers").key_by(
        lambda n: (n, lock)[0]
    ).reduce(max, uid="maximum").sink_to(CollectSink(), uid="out")

    with pytest.raises(GraphError, match="operator 'maximum': its key selector"):
        env.plan(executor=ProcessExecutor(workers=1))


async def test_memory_checkpoint_storage_is_refused_at_submission() -> None:
    env = StreamEnvironment(parallelism=2)
    env.enable_checkpointing(0.1)
    env.from_source(CollectionSource(range(10)), uid="numbers").sink_to(CollectSink(), uid="out")
    executor = ProcessExecutor(workers=2)

    with pytest.raises(ExecutorError, match=r"memory:// lives in the driving process only"):
        await env.execute("in-memory", executor=executor)

    assert executor.statistics().started == 0


def test_a_manual_clock_is_refused(tmp_path: Path) -> None:
    env = StreamEnvironment(parallelism=1, clock=ManualClock())
    env.set_checkpoint_storage(tmp_path.as_uri())
    env.from_source(CollectionSource(range(10)), uid="numbers").sink_to(CollectSink(), uid="out")

    with pytest.raises(ExecutorError, match="cannot be shared by the worker processes"):
        env.plan(executor=ProcessExecutor(workers=1))


def test_the_plan_shows_which_worker_hosts_which_subtask(tmp_path: Path) -> None:
    env = file_checkpointed_env(tmp_path, parallelism=2)
    env.from_source(CollectionSource(range(10)), uid="numbers").map(
        str, uid="text"
    ).disable_chaining().sink_to(CollectSink(), uid="out")

    plan = env.plan(executor=ProcessExecutor(workers=2))

    assert plan.describe().splitlines()[-2:] == [
        "worker 0: chain 0 [0], chain 1 [0], chain 2 [0]",
        "worker 1: chain 0 [1], chain 1 [1], chain 2 [1]",
    ]


def test_the_local_executor_plan_is_not_placed(tmp_path: Path) -> None:
    env = file_checkpointed_env(tmp_path)
    env.from_source(CollectionSource(range(10)), uid="numbers").sink_to(CollectSink(), uid="out")

    assert env.plan().placement is None


ALIGNED = (
    WatermarkStrategy.for_monotonous_timestamps()
    .with_timestamp_assigner(float)
    .with_watermark_alignment("clicks", max_drift=10.0)
)


def aligned_job(tmp_path: Path) -> StreamEnvironment:
    env = file_checkpointed_env(tmp_path)
    env.from_source(CollectionSource(range(10)), uid="clicks", watermark_strategy=ALIGNED).sink_to(
        CollectSink(), uid="out"
    )
    return env


def test_a_watermark_alignment_group_placed_on_several_workers_is_refused(
    tmp_path: Path,
) -> None:
    env = aligned_job(tmp_path)

    with pytest.raises(ExecutorError, match=r"group 'clicks', .* on workers \[0, 1\]"):
        env.plan(executor=ProcessExecutor(workers=2))


def test_a_watermark_alignment_group_on_one_worker_is_accepted(tmp_path: Path) -> None:
    env = aligned_job(tmp_path)

    plan = env.plan(executor=ProcessExecutor(workers=1))

    assert plan.placement is not None
