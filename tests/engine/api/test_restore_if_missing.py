"""restore_from="latest", if_missing="start": a service starts fresh on an empty storage,
and resumes from its latest checkpoint on the next start, with the same call."""

from __future__ import annotations

from pathlib import Path

import anyio

from lockgate.engine import JobStarted, RestoredFromCheckpoint
from tests.engine.jobs.queryable import Feed, ProcessedSink, answers, every_kind_job, expected


async def test_latest_or_start_begins_fresh_on_an_empty_storage_then_resumes_from_it(
    tmp_path: Path,
) -> None:
    feed, first, second = Feed(), ProcessedSink(), ProcessedSink()

    with anyio.fail_after(30):
        env = every_kind_job(feed, first)
        env.set_checkpoint_storage(tmp_path.as_uri())
        async with env.start("orders", restore_from="latest", if_missing="start") as job:
            fresh_events = job.events()
            feed.release(60)
            await first.wait_for(60)
            checkpoint = await job.trigger_checkpoint()
            job.cancel()
        fresh = [type(event) async for event in fresh_events]

        env = every_kind_job(feed, second, parallelism=3)
        env.set_checkpoint_storage(tmp_path.as_uri())
        async with env.start("orders", restore_from="latest", if_missing="start") as job:
            resumed_events = job.events()
            feed.release(100)
            await second.wait_for(40)
            read = await answers(job)
            job.cancel()
        resumed = [event async for event in resumed_events]

    assert fresh[0] is JobStarted and RestoredFromCheckpoint not in fresh
    restored = [event for event in resumed if isinstance(event, RestoredFromCheckpoint)]
    assert [event.checkpoint_id for event in restored] == [checkpoint.checkpoint_id]
    assert read == expected(range(100))
