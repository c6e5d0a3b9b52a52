"""Restoring at another parallelism: keyed state moves by key groups, operator list state is
split evenly, union state reaches every subtask whole (max_parallelism 13, 42 keys)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import pytest

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import (
    MemoryCheckpointStorage,
    StreamEnvironment,
)
from tests.engine.jobs.rescaling import Registering

KEYS, FIRST, MORE, MAX_PARALLELISM = 42, 1_000, 500, 13


def events(per_key: int) -> list[tuple[int, int]]:
    return [(key, 1) for _ in range(per_key) for key in range(KEYS)]


def totals_job(
    parallelism: int, storage: MemoryCheckpointStorage, sink: CollectSink[Any], *, phase: int
) -> StreamEnvironment:
    env = StreamEnvironment(parallelism=parallelism, max_parallelism=MAX_PARALLELISM)
    env.enable_checkpointing()
    env.set_checkpoint_storage(storage)
    source = CollectionSource(events(FIRST if phase == 1 else MORE))
    (
        env.from_source(source, uid=f"events-{phase}")
        .map(Registering(), uid="counting")
        .key_by(lambda event: event[0])
        .reduce(lambda a, b: (a[0], a[1] + b[1]), uid="totals")
        .sink_to(sink, uid=f"out-{phase}")
    )
    return env


@pytest.mark.parametrize(("before", "after"), [(2, 4), (4, 2)])
async def test_a_job_restored_at_another_parallelism_keeps_every_key_exact(
    before: int, after: int
) -> None:
    Registering.reset()
    storage, first, second = MemoryCheckpointStorage(), CollectSink(), CollectSink()
    await totals_job(before, storage, first, phase=1).execute("totals")
    Registering.reset(restored=False)

    await totals_job(after, storage, second, phase=2).execute(
        "totals", restore_from="latest", allow_non_restored_state=True
    )

    running: dict[int, list[int]] = defaultdict(list)
    for key, total in second.results:
        running[key].append(total)
    assert sorted(running) == list(range(KEYS))
    for key, totals in running.items():
        assert totals == list(range(FIRST + 1, FIRST + MORE + 1)), f"key {key}"
    assert (
        sum(Registering.restored_counts) == KEYS * FIRST
    )  # list state split, nothing lost or doubled
    assert [
        list(range(before))
    ] * after == Registering.restored_unions  # the whole union, everywhere
