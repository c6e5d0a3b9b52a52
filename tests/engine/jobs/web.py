"""Jobs for the REST API's tests: a running count over a topic, a slow sink, a failing map."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx

from lockgate.connectors import CollectSink
from lockgate.engine import JobClient, RestartStrategy, SinkContext, StreamEnvironment
from lockgate.engine.testing import FailOnce
from lockgate.engine.web import JobRegistry, rest_app
from tests.engine.jobs.basic import CallbackSink, EndlessSource
from tests.engine.jobs.savepoints import Topic, TopicSource

KEYS, FIRST, MORE = 10, 100, 50
Event = tuple[int, int]


def events(per_key: int) -> list[Event]:
    """``per_key`` events ``(key, 1)`` for each of the ``KEYS`` keys, keys interleaved."""
    return [(key, 1) for _ in range(per_key) for key in range(KEYS)]


def append(topic: Topic, per_key: int) -> None:
    topic.append(events(per_key), partition_of=lambda event: event[0])


def counting_job(
    topic: Topic, sink: CollectSink[Any], *, fail: FailOnce | None = None, after: int = 0
) -> StreamEnvironment:
    """Per key the running count, checkpointed only when asked (no interval), no restarts.

    With ``fail``, the map right after the source fires it once ``after`` records passed.
    """

    def passed(event: Event) -> Event:
        topic.passed(event)
        if fail is not None and topic.processed > after:
            fail.maybe_fire()
        return event

    env = StreamEnvironment(parallelism=2, max_parallelism=16)
    env.enable_checkpointing()
    env.set_checkpoint_storage("memory://")
    env.set_restart_strategy(RestartStrategy.none())
    (
        env.from_source(TopicSource(topic), uid="events")
        .map(passed, uid="passed")
        .key_by(lambda event: event[0])
        .reduce(lambda a, b: (a[0], a[1] + b[1]), uid="counts")
        .sink_to(sink, uid="out")
    )
    return env


def exact_running_counts(per_key: int) -> dict[int, list[int]]:
    return {key: list(range(1, per_key + 1)) for key in range(KEYS)}


def running_counts(sink: CollectSink[Any]) -> dict[int, list[int]]:
    """Each key's running counts as the sink committed them, in order."""
    running: dict[int, list[int]] = defaultdict(list)
    for key, total in sink.results:
        running[key].append(total)
    return dict(running)


def slow_sink_job(received: list[int], *, pause: float) -> StreamEnvironment:
    """An endless source into a sink that pauses after every batch: the source backpressured."""

    def count(context: SinkContext, records: list[Any]) -> None:
        received.append(len(records))

    env = StreamEnvironment(parallelism=1, batch_size=16, channel_capacity=16)
    env.from_source(EndlessSource(), uid="endless").sink_to(
        CallbackSink(count, pause=pause), uid="slow"
    ).disable_chaining()
    return env


@asynccontextmanager
async def api_client(registry: JobRegistry, *, token: str | None = None) -> AsyncIterator[Any]:
    """An httpx client of ``rest_app(registry)`` through httpx's ASGI transport (no socket)."""
    transport = httpx.ASGITransport(app=rest_app(registry, token=token))
    async with httpx.AsyncClient(transport=transport, base_url="http://lockgate") as client:
        yield client


async def until_running(job: JobClient) -> None:
    """Wait until the job's first attempt has deployed its subtasks (their metrics exist)."""
    with anyio.fail_after(10):
        while not job.metrics().subtasks:
            await anyio.lowlevel.checkpoint()
