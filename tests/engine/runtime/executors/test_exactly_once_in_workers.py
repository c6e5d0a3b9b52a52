"""The exactly-once suite in two worker processes: the same jobs as on one loop (aligned,
unaligned and at-least-once; memory and RocksDB state; union, keyed and broadcast edges),
each with an injected failure after a completed checkpoint and its guard, exact results."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from lockgate.connectors import CollectSink
from lockgate.engine import CheckpointingMode, ProcessExecutor, RestartStrategy, StreamEnvironment
from lockgate.engine.testing import AwaitCheckpoint, FailOnce
from tests.engine.end_to_end.test_broadcast_state import limits_job, payments, reports
from tests.engine.end_to_end.test_exactly_once import (
    PREFIXES,
    check_union_sums,
    checkpointed_env,
    run_counting_job,
    union_sums_job,
)
from tests.engine.end_to_end.test_unaligned_checkpoints import ALIGNMENTS, committed_per_source
from tests.engine.jobs.unaligned import (
    SEQUENCE,
    SOURCES,
    Failures,
    SlowCollectSink,
    ordered_sequence_job,
)

BACKENDS = ["memory", "rocksdb"]
RULES_BY_NAME = [("max", 950), ("min", 1)]


def in_workers() -> ProcessExecutor:
    return ProcessExecutor(workers=2)


def shared_storage(tmp_path: Path, backend: str = "memory") -> Any:
    """Configure a job's storage (a folder every worker reaches) and its state backend."""

    def configure(env: StreamEnvironment) -> None:
        env.set_checkpoint_storage((tmp_path / "checkpoints").as_uri())
        env.set_state_backend(backend, path=tmp_path / "state" if backend == "rocksdb" else None)

    return configure


@pytest.mark.parametrize("backend", BACKENDS)
async def test_every_prefix_is_counted_exactly_once_across_a_failure_in_workers(
    tmp_path: Path, backend: str
) -> None:
    with anyio.fail_after(120):
        committed, fail = await run_counting_job(
            CheckpointingMode.EXACTLY_ONCE,
            configure=shared_storage(tmp_path, backend),
            executor=in_workers(),
        )

    assert fail.fired, "the injected failure never fired: the test proves nothing"
    assert sorted(committed) == [f"p{k:02d}" for k in range(PREFIXES)]
    for prefix, counts in committed.items():
        assert counts == list(range(1, 10_001)), f"{prefix}: not exactly 1..10000"


async def test_at_least_once_in_workers_loses_no_prefix_count(tmp_path: Path) -> None:
    with anyio.fail_after(120):
        committed, fail = await run_counting_job(
            CheckpointingMode.AT_LEAST_ONCE,
            configure=shared_storage(tmp_path),
            executor=in_workers(),
        )

    assert fail.fired, "the injected failure never fired: the test proves nothing"
    for prefix in (f"p{k:02d}" for k in range(PREFIXES)):
        assert set(range(1, 10_001)) <= set(committed[prefix])


@pytest.mark.parametrize("mode", list(CheckpointingMode))
async def test_two_unioned_sources_sum_every_key_exactly_in_workers(
    tmp_path: Path, mode: CheckpointingMode
) -> None:
    fail, sink = FailOnce(), CollectSink[tuple[int, int, int]]()
    env = checkpointed_env(2, mode)
    shared_storage(tmp_path)(env)
    union_sums_job(env, fail, sink)

    with anyio.fail_after(120):
        await env.execute("union-sums", executor=in_workers())

    check_union_sums(mode, fail, sink)


@pytest.mark.parametrize("backend", BACKENDS)
async def test_broadcast_state_comes_back_from_the_checkpoint_in_workers(
    tmp_path: Path, backend: str
) -> None:
    fail, sink = FailOnce(), CollectSink[Any]()
    elements: list[Any] = [*payments(600), AwaitCheckpoint(), *payments(300), fail]
    env = StreamEnvironment(parallelism=2, batch_size=32)
    env.enable_checkpointing(0.01)
    env.set_restart_strategy(RestartStrategy.fixed_delay(attempts=2, delay=0.0))
    shared_storage(tmp_path, backend)(env)

    with anyio.fail_after(120):
        # one rule per name: two rules subtasks in two workers reach a subtask in either order
        job = limits_job(env, [*elements, *payments(300)], RULES_BY_NAME, sink)
        await job.execute("limits", executor=in_workers())

    assert fail.fired, "the injected failure never fired: the test proves nothing"
    final = sorted({"max": 950, "min": 1}.items())
    assert reports(sink.results) == {f"acct{n}": (100, final) for n in range(12)}


@pytest.mark.parametrize("alignment", list(ALIGNMENTS))
async def test_every_sequence_commits_whole_once_in_order_across_five_failures_in_workers(
    tmp_path: Path, alignment: str
) -> None:
    failures, sink = Failures(), SlowCollectSink()
    env = ordered_sequence_job(sink, failures, event_time=True, **ALIGNMENTS[alignment])
    shared_storage(tmp_path)(env)

    with anyio.fail_after(120):
        await env.execute("ordered-sequences", executor=in_workers())

    assert [f.fired for f in failures.all] == [True] * 5, failures.all
    assert committed_per_source(sink.results) == {s: list(range(SEQUENCE)) for s in range(SOURCES)}
    assert failures.late == []
    assert failures.highest_watermark >= SEQUENCE // 2
