"""Unaligned checkpoints under backpressure, as Flink's UnalignedCheckpointITCase tests them.

Each source emits an ordered sequence; records change subtasks twice on their way to a slow
transactional sink, and five failures fire once each along the way. Whatever the alignment,
every source's sequence is committed whole, once, in order. Unaligned checkpoints do store
in-flight records: the channels were full when their barriers passed.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from lockgate.engine.checkpointing.statistics import CheckpointStatsSnapshot
from tests.engine.jobs.unaligned import (
    SEQUENCE,
    SOURCES,
    Failures,
    Record,
    SlowCollectSink,
    ordered_sequence_job,
)

ALIGNMENTS: dict[str, dict[str, Any]] = {
    "aligned": {},
    "unaligned": {"unaligned": True},
    "aligned-timeout": {"unaligned": True, "aligned_timeout": 1e-6},
}


async def run_ordered_sequences(
    alignment: dict[str, Any], *, event_time: bool = False
) -> tuple[list[Record], Failures, CheckpointStatsSnapshot]:
    failures, sink = Failures(), SlowCollectSink()
    env = ordered_sequence_job(sink, failures, event_time=event_time, **alignment)
    with anyio.fail_after(30):
        async with env.start("ordered-sequences") as job:
            await job.wait()
            checkpoints = job.metrics().checkpoints
    return sink.results, failures, checkpoints


def committed_per_source(results: list[Record]) -> dict[int, list[int]]:
    return {source: [n for s, n in results if s == source] for source in range(SOURCES)}


@pytest.mark.parametrize("alignment", list(ALIGNMENTS))
async def test_every_sequence_commits_whole_once_and_in_order_across_five_failures(
    alignment: str,
) -> None:
    results, failures, _ = await run_ordered_sequences(ALIGNMENTS[alignment])

    assert [f.fired for f in failures.all] == [True] * 5, failures.all
    assert committed_per_source(results) == {s: list(range(SEQUENCE)) for s in range(SOURCES)}


@pytest.mark.parametrize("alignment", list(ALIGNMENTS))
async def test_watermarks_flow_through_five_failures_and_no_record_is_ever_late(
    alignment: str,
) -> None:
    results, failures, _ = await run_ordered_sequences(ALIGNMENTS[alignment], event_time=True)

    assert [f.fired for f in failures.all] == [True] * 5, failures.all
    assert committed_per_source(results) == {s: list(range(SEQUENCE)) for s in range(SOURCES)}
    assert failures.late == []
    assert failures.highest_watermark >= SEQUENCE // 2


@pytest.mark.parametrize("alignment", ["unaligned", "aligned-timeout"])
async def test_unaligned_checkpoints_persist_the_records_in_full_channels(alignment: str) -> None:
    _, _, checkpoints = await run_ordered_sequences(ALIGNMENTS[alignment])

    completed = [r for r in checkpoints.history if r.failure_reason is None]
    assert any(record.unaligned for record in completed)
    assert max(record.persisted_in_flight for record in completed) > 0


async def test_aligned_checkpoints_persist_no_in_flight_records() -> None:
    _, _, checkpoints = await run_ordered_sequences(ALIGNMENTS["aligned"])

    assert not any(record.unaligned for record in checkpoints.history)
    assert all(record.persisted_in_flight == 0 for record in checkpoints.history)


async def test_checkpoints_that_align_within_their_timeout_stay_aligned() -> None:
    results, _, checkpoints = await run_ordered_sequences(
        {"unaligned": True, "aligned_timeout": 60.0}
    )

    assert committed_per_source(results) == {s: list(range(SEQUENCE)) for s in range(SOURCES)}
    assert checkpoints.completed > 0
    assert not any(record.unaligned for record in checkpoints.history)
