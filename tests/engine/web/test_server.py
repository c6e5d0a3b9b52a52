"""serve(): the REST API on a real uvicorn server, driven by a real HTTP client (httpx).

Exactly-once through the API: a savepoint taken by POST is the last snapshot of a run that
then fails by an injected failure (no restart, no checkpoint after it), and the restore from
it ends with every running count committed once; a stop by POST ends the job with a
savepoint that a restore continues exactly.
"""

from __future__ import annotations

import socket
from pathlib import Path

import anyio
import httpx
import pytest

from lockgate.connectors import CollectSink
from lockgate.engine import AsyncioRequired, JobStatus, OperatorError
from lockgate.engine.testing import FailOnce
from lockgate.engine.web import JobRegistry, serve
from tests.engine.jobs.savepoints import Topic
from tests.engine.jobs.web import (
    FIRST,
    KEYS,
    MORE,
    append,
    counting_job,
    exact_running_counts,
    running_counts,
    until_running,
)

pytestmark = pytest.mark.asyncio_only(reason="uvicorn serves on asyncio only")


async def test_serve_binds_127_0_0_1_on_a_free_port_and_answers_there() -> None:
    async with serve(JobRegistry()) as server, httpx.AsyncClient(base_url=server.url) as http:
        answer = await http.get("/jobs")

    assert server.host == "127.0.0.1"
    assert server.port > 0
    assert server.url == f"http://127.0.0.1:{server.port}"
    assert answer.json() == {"jobs": []}


async def test_the_port_is_free_again_once_the_block_is_left() -> None:
    async with serve(JobRegistry()) as server:
        port = server.port

    with socket.create_server(("127.0.0.1", port)):
        pass  # binding it again succeeds


async def test_a_port_in_use_is_refused_naming_the_address() -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]

        with pytest.raises(OSError, match=f"the REST API cannot listen on 127.0.0.1:{port}"):
            async with serve(JobRegistry(), port=port):
                pass


async def test_a_savepoint_taken_by_post_restores_exactly_once_after_an_injected_failure(
    tmp_path: Path,
) -> None:
    topic, sink, fail = Topic(4), CollectSink[tuple[int, int]](), FailOnce("after the savepoint")
    append(topic, FIRST)
    registry = JobRegistry()
    env = counting_job(topic, sink, fail=fail, after=FIRST * KEYS + KEYS)
    async with serve(registry) as server, httpx.AsyncClient(base_url=server.url) as http:
        async with env.start("counts") as job:
            registry.add(job)
            await topic.all_read.wait()
            answer = await http.post("/jobs/counts/savepoints", json={"path": tmp_path.as_uri()})
            append(topic, MORE)  # the map fails once it has passed KEYS of these
            with anyio.fail_after(10), pytest.raises(OperatorError, match="after the savepoint"):
                await job.wait()
        failed = (await http.get("/jobs/counts")).json()

    assert fail.fired
    assert failed["status"] == "FAILED"
    savepoint = answer.json()["savepoint"]
    topic.close()
    await counting_job(topic, sink).execute("counts", restore_from=savepoint)
    assert running_counts(sink) == exact_running_counts(FIRST + MORE)


async def test_a_stop_by_post_ends_the_job_with_a_savepoint_a_restore_continues_exactly(
    tmp_path: Path,
) -> None:
    topic, sink = Topic(4), CollectSink[tuple[int, int]]()
    append(topic, FIRST)
    registry = JobRegistry()
    async with (
        serve(registry) as server,
        httpx.AsyncClient(base_url=server.url) as http,
        counting_job(topic, sink).start("counts") as job,
    ):
        registry.add(job)
        await topic.all_read.wait()
        body = {"savepoint": tmp_path.as_uri(), "drain": False}
        answer = await http.post("/jobs/counts/stop", json=body, timeout=30)
        status = job.status

    assert answer.status_code == 200
    assert answer.json()["status"] == "FINISHED"
    assert status is JobStatus.FINISHED
    assert running_counts(sink) == exact_running_counts(FIRST)  # the stop committed all of it
    append(topic, MORE)
    topic.close()
    await counting_job(topic, sink).execute("counts", restore_from=answer.json()["savepoint"])
    assert running_counts(sink) == exact_running_counts(FIRST + MORE)


async def test_with_a_token_the_server_refuses_a_stop_without_it(tmp_path: Path) -> None:
    topic, registry = Topic(2), JobRegistry()
    async with (
        serve(registry, token="t0ken") as server,
        httpx.AsyncClient(base_url=server.url) as http,
        counting_job(topic, CollectSink()).start("counts") as job,
    ):
        registry.add(job)
        await until_running(job)
        refused = await http.post("/jobs/counts/stop", json={"savepoint": tmp_path.as_uri()})
        status = job.status

    assert refused.status_code == 401
    assert refused.json()["type"] == "Unauthorized"
    assert status is JobStatus.RUNNING


def test_serve_on_trio_raises_asyncio_required() -> None:
    async def serve_on_trio() -> None:
        async with serve(JobRegistry()):
            pass

    with pytest.raises(AsyncioRequired, match="the REST server needs asyncio: uvicorn"):
        anyio.run(serve_on_trio, backend="trio")
