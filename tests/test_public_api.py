"""The public surface: every exported class documents its guarantee; DESIGN's example runs."""

from __future__ import annotations

import inspect
from types import ModuleType

import pytest

import lockgate.actors
import lockgate.connectors
import lockgate.engine
from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import CheckpointingMode, RestartStrategy, StreamEnvironment

PACKAGES = (lockgate.engine, lockgate.actors, lockgate.connectors)
# Errors are described by their package's errors tree (errors.py docstrings).


def public_classes(package: ModuleType) -> list[tuple[str, type]]:
    found = []
    for name in package.__all__:
        value = getattr(package, name)
        if inspect.isclass(value) and not issubclass(value, BaseException):
            found.append((name, value))
    return found


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.__name__)
def test_every_public_class_has_a_summary_and_a_paragraph(package: ModuleType) -> None:
    missing = [
        name
        for name, cls in public_classes(package)
        if len([p for p in (inspect.getdoc(cls) or "").split("\n\n") if p.strip()]) < 2
    ]

    assert missing == []


async def test_the_design_example_runs_and_commits_exact_sums() -> None:
    env = StreamEnvironment(parallelism=2, max_parallelism=128)
    env.enable_checkpointing(interval=0.5, mode=CheckpointingMode.EXACTLY_ONCE)
    env.set_checkpoint_storage("memory://")
    env.set_state_backend("memory")
    env.set_restart_strategy(RestartStrategy.fixed_delay(attempts=3, delay=0.1))
    sink = CollectSink()
    (
        env.from_source(CollectionSource(range(1000)), uid="numbers")
        .map(lambda x: (x % 10, x))
        .key_by(lambda kv: kv[0])
        .reduce(lambda a, b: (a[0], a[1] + b[1]), uid="sums")
        .sink_to(sink, uid="out")
    )

    await env.execute("sums")

    final = {key: total for key, total in sink.results}
    assert final == {k: sum(range(k, 1000, 10)) for k in range(10)}


def test_the_job_lifecycle_has_the_names_of_the_design() -> None:
    statuses = [status.name for status in lockgate.engine.JobStatus]
    client = set(dir(lockgate.engine.JobClient))

    assert statuses == [
        "CREATED",
        "RUNNING",
        "RESTARTING",
        "FINISHING",
        "FINISHED",
        "FAILED",
        "CANCELED",
    ]
    assert {"status", "failures", "events"} <= client


def test_the_joins_have_the_names_of_flinks_datastream_api() -> None:
    engine = lockgate.engine
    windowed = {"trigger", "evictor", "allowed_lateness", "apply"}

    assert {"join", "co_group"} <= set(dir(engine.DataStream))
    assert "interval_join" in dir(engine.KeyedStream)
    for two_streams in (engine.JoinedStreams, engine.CoGroupedStreams):
        assert {"where", "equal_to", "window"} <= set(dir(two_streams))
    assert windowed <= set(dir(engine.WindowedJoin)) & set(dir(engine.WindowedCoGroup))
    assert "between" in dir(engine.IntervalJoin)
    assert {
        "lower_bound_exclusive",
        "upper_bound_exclusive",
        "side_output_left_late_data",
        "side_output_right_late_data",
        "process",
    } <= set(dir(engine.IntervalJoined))
    assert {"left_timestamp", "right_timestamp", "timestamp", "output"} <= set(
        dir(engine.ProcessJoinContext)
    )
