"""The REST API's documents and errors, through httpx's ASGI transport against running jobs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import JobStatus, RestartStrategy, StreamEnvironment
from lockgate.engine.testing import FailOnce
from lockgate.engine.web import JobRegistry
from tests.engine.jobs.async_io import wait_until
from tests.engine.jobs.basic import EndlessSource
from tests.engine.jobs.savepoints import Topic
from tests.engine.jobs.web import (
    FIRST,
    api_client,
    append,
    counting_job,
    slow_sink_job,
    until_running,
)


def endless_job() -> StreamEnvironment:
    env = StreamEnvironment(parallelism=2)
    env.enable_checkpointing()
    env.set_checkpoint_storage("memory://")
    env.from_source(EndlessSource(), uid="endless").map(lambda x: x, uid="inc").rebalance().sink_to(
        CollectSink(), uid="out"
    )
    return env


async def test_get_jobs_lists_every_registered_job_with_its_status() -> None:
    registry = JobRegistry()
    async with endless_job().start("endless") as job, api_client(registry) as api:
        registry.add(job)
        await until_running(job)
        answer = await api.get("/jobs")

    assert answer.status_code == 200
    [listed] = answer.json()["jobs"]
    assert listed["name"] == "endless"
    assert listed["status"] == "RUNNING"


async def test_get_job_shows_status_attempt_start_time_and_the_plan() -> None:
    registry = JobRegistry()
    env = endless_job()
    async with env.start("endless") as job, api_client(registry) as api:
        registry.add(job)
        await until_running(job)
        document = (await api.get("/jobs/endless")).json()

    assert document["status"] == "RUNNING"
    assert document["attempt"] == 0
    assert document["start_time"] == round(job.start_time * 1000)  # type: ignore[operator]
    assert document["end_time"] is None
    assert document["plan"]["chains"] == [
        {
            "id": 0,
            "name": "endless -> inc",
            "parallelism": 2,
            "operators": [
                {"uid": "endless", "name": "endless", "kind": "source", "parallelism": 2},
                {"uid": "inc", "name": "inc", "kind": "map", "parallelism": 2},
            ],
        },
        {
            "id": 1,
            "name": "out",
            "parallelism": 2,
            "operators": [{"uid": "out", "name": "out", "kind": "sink", "parallelism": 2}],
        },
    ]
    assert document["plan"]["edges"] == [
        {"id": 0, "source": 0, "target": 1, "partitioning": "REBALANCE", "side_output": None}
    ]


async def test_a_finished_job_shows_its_end_time_and_duration() -> None:
    registry = JobRegistry()
    env = StreamEnvironment()
    env.from_source(CollectionSource(range(10)), uid="numbers").sink_to(CollectSink(), uid="out")
    async with env.start("short") as job, api_client(registry) as api:
        registry.add(job)
        await job.wait()
        document = (await api.get("/jobs/short")).json()

    assert document["status"] == "FINISHED"
    assert document["end_time"] >= document["start_time"]
    assert document["duration"] == document["end_time"] - document["start_time"]


async def test_vertices_show_every_subtask_of_every_chain_with_its_metrics() -> None:
    registry = JobRegistry()
    async with endless_job().start("endless") as job, api_client(registry) as api:
        registry.add(job)
        await wait_until(lambda: sum(s.records_in for s in job.metrics().of("out")) > 1000)
        document = (await api.get("/jobs/endless/vertices")).json()

    sources, sinks = document["vertices"]
    assert [v["id"] for v in document["vertices"]] == [0, 1]
    assert sources["uids"] == ["endless", "inc"]
    assert [s["subtask"] for s in sinks["subtasks"]] == [0, 1]
    assert sinks["records_in"] == sum(s["records_in"] for s in sinks["subtasks"]) > 1000
    subtask = sinks["subtasks"][0]
    assert subtask["busy_ratio"] + subtask["idle_ratio"] + subtask["backpressure_ratio"] == (
        pytest.approx(1.0)
    )
    assert subtask["backpressure_level"] in {"OK", "LOW", "HIGH"}
    assert subtask["input_capacity"] > 0


async def test_vertices_show_each_operator_of_a_chain_and_each_subtask_s_bytes() -> None:
    env = StreamEnvironment()
    env.from_source(CollectionSource(range(100)), uid="numbers").filter(
        lambda n: n % 4 == 0, uid="quarter"
    ).sink_to(CollectSink(), uid="out")
    registry = JobRegistry()
    async with env.start("counted") as job, api_client(registry) as api:
        registry.add(job)
        await job.wait()
        document = (await api.get("/jobs/counted/vertices")).json()

    (vertex,) = document["vertices"]
    (subtask,) = vertex["subtasks"]
    counted = [(o["uid"], o["records_in"], o["records_out"]) for o in vertex["operators"]]
    assert counted == [("numbers", 100, 100), ("quarter", 100, 25), ("out", 25, 25)]
    assert [o["uid"] for o in subtask["operators"]] == ["numbers", "quarter", "out"]
    (metrics,) = job.metrics().subtasks
    assert vertex["bytes_in"] == subtask["bytes_in"] == metrics.bytes_in
    assert vertex["bytes_out"] == subtask["bytes_out"] == metrics.bytes_out
    assert 0 < subtask["bytes_out"] < subtask["bytes_in"]


async def test_a_source_behind_a_slow_sink_is_backpressured_high_and_the_sink_is_not() -> None:
    received: list[int] = []
    registry = JobRegistry()
    async with (
        slow_sink_job(received, pause=0.01).start("slow") as job,
        api_client(registry) as api,
    ):
        registry.add(job)
        await wait_until(lambda: len(received) >= 30)
        document = (await api.get("/jobs/slow/vertices")).json()

    source, sink = document["vertices"]
    assert source["backpressure_level"] == "HIGH"
    assert source["subtasks"][0]["backpressure_ratio"] > 0.5
    assert sink["backpressure_level"] == "OK"


async def test_checkpoints_show_counts_the_latest_and_the_history_with_phases() -> None:
    registry = JobRegistry()
    async with endless_job().start("endless") as job, api_client(registry) as api:
        registry.add(job)
        first = await job.trigger_checkpoint()
        second = await job.trigger_checkpoint()
        document = (await api.get("/jobs/endless/checkpoints")).json()

    assert document["counts"] == {"completed": 2, "failed": 0, "in_progress": 0, "total": 2}
    assert [c["id"] for c in document["history"]] == [second.checkpoint_id, first.checkpoint_id]
    latest = document["latest"]["completed"]
    assert latest["id"] == second.checkpoint_id
    assert latest["status"] == "COMPLETED"
    assert latest["num_acknowledged_subtasks"] == latest["num_subtasks"] == 4
    assert latest["trigger_timestamp"] >= round(job.start_time * 1000)  # type: ignore[operator]
    assert {"alignment_duration", "sync_duration", "async_duration", "state_size"} <= set(latest)
    assert document["latest"]["failed"] is None


async def test_exceptions_list_each_failed_attempt_naming_the_operator_and_subtask() -> None:
    fail = FailOnce("broken map")

    def fragile(x: int) -> int:
        if x == 5:
            fail.maybe_fire()
        return x

    env = StreamEnvironment()
    env.enable_checkpointing()
    env.set_restart_strategy(RestartStrategy.fixed_delay(attempts=1, delay=0))
    env.from_source(CollectionSource(range(10)), uid="numbers").map(fragile, uid="fragile").sink_to(
        CollectSink(), uid="out"
    )
    registry = JobRegistry()
    async with env.start("fragile") as job, api_client(registry) as api:
        registry.add(job)
        await job.wait()
        document = (await api.get("/jobs/fragile/exceptions")).json()

    assert fail.fired
    [entry] = document["entries"]
    assert document["root_exception"] == entry
    assert entry["attempt"] == 0
    assert entry["type"] == "OperatorError"
    assert entry["uid"] == "fragile"
    assert entry["subtask"] == 0
    assert entry["message"] == str(job.failures[0].exception)
    assert "broken map" in entry["stacktrace"]


async def test_watermarks_list_every_subtask_of_every_chain() -> None:
    registry = JobRegistry()
    async with endless_job().start("endless") as job, api_client(registry) as api:
        registry.add(job)
        await until_running(job)
        document = (await api.get("/jobs/endless/watermarks")).json()

    assert [v["id"] for v in document["vertices"]] == [0, 1]
    assert document["vertices"][1]["subtasks"] == [
        {"subtask": 0, "input_watermark": None, "output_watermark": None},
        {"subtask": 1, "input_watermark": None, "output_watermark": None},
    ]


@pytest.mark.parametrize(
    "path", ["", "/vertices", "/checkpoints", "/exceptions", "/watermarks"], ids=repr
)
async def test_an_unknown_job_is_404_json_with_the_registry_s_message(path: str) -> None:
    registry = JobRegistry()
    async with endless_job().start("endless") as job, api_client(registry) as api:
        registry.add(job)
        answer = await api.get(f"/jobs/nope{path}")

    assert answer.status_code == 404
    assert answer.json() == {
        "error": "no job named 'nope' is registered; the jobs are: 'endless'",
        "type": "UnknownJob",
    }


async def test_an_unknown_path_is_404_json() -> None:
    async with api_client(JobRegistry()) as api:
        answer = await api.get("/nothing/here")

    assert answer.status_code == 404
    assert answer.json()["type"] == "HTTPException"
    assert "/nothing/here" in answer.json()["error"]


async def test_post_savepoints_answers_the_folder_of_the_completed_savepoint(
    tmp_path: Path,
) -> None:
    topic, registry = Topic(2), JobRegistry()
    append(topic, FIRST)
    async with (
        counting_job(topic, CollectSink()).start("counts") as job,
        api_client(registry) as api,
    ):
        registry.add(job)
        answer = await api.post("/jobs/counts/savepoints", json={"path": tmp_path.as_uri()})
        assert job.status is JobStatus.RUNNING

    assert answer.status_code == 200
    folder = Path(answer.json()["savepoint"])
    assert folder.parent == tmp_path
    assert (folder / "_metadata").is_file()


async def test_a_savepoint_to_a_relative_path_is_400_with_the_python_error_s_message() -> None:
    topic, registry = Topic(2), JobRegistry()
    async with (
        counting_job(topic, CollectSink()).start("counts") as job,
        api_client(registry) as api,
    ):
        registry.add(job)
        answer = await api.post("/jobs/counts/savepoints", json={"path": "relative/folder"})
        with pytest.raises(ValueError) as raised:
            await job.trigger_savepoint("relative/folder")

    assert answer.status_code == 400
    assert answer.json() == {"error": str(raised.value), "type": type(raised.value).__name__}


@pytest.mark.parametrize(
    "body", [None, {}, {"path": 3}, [1, 2]], ids=["no body", "no path", "a number", "a list"]
)
async def test_a_savepoint_without_a_path_is_400_saying_what_to_send(body: Any) -> None:
    topic, registry = Topic(2), JobRegistry()
    async with (
        counting_job(topic, CollectSink()).start("counts") as job,
        api_client(registry) as api,
    ):
        registry.add(job)
        answer = await api.post("/jobs/counts/savepoints", json=body)

    assert answer.status_code == 400
    assert answer.json()["type"] == "BadRequest"


async def test_stop_with_drain_that_is_not_a_boolean_is_400(tmp_path: Path) -> None:
    topic, registry = Topic(2), JobRegistry()
    async with (
        counting_job(topic, CollectSink()).start("counts") as job,
        api_client(registry) as api,
    ):
        registry.add(job)
        await until_running(job)
        body = {"savepoint": tmp_path.as_uri(), "drain": "yes"}
        answer = await api.post("/jobs/counts/stop", json=body)
        assert job.status is JobStatus.RUNNING

    assert answer.status_code == 400
    assert answer.json()["error"] == "'drain' must be true or false; got 'yes'"


async def test_post_cancel_answers_202_and_the_job_ends_cancelled() -> None:
    registry = JobRegistry()
    async with endless_job().start("endless") as job, api_client(registry) as api:
        registry.add(job)
        await until_running(job)
        answer = await api.post("/jobs/endless/cancel")
        with anyio.fail_after(10):
            result = await job.wait()

    assert answer.status_code == 202
    assert answer.json() == {"status": "FINISHING"}
    assert result.status is JobStatus.CANCELED


async def test_a_savepoint_of_a_job_that_ended_is_409() -> None:
    registry = JobRegistry()
    env = StreamEnvironment()
    env.from_source(CollectionSource(range(3)), uid="numbers").sink_to(CollectSink(), uid="out")
    async with env.start("short") as job, api_client(registry) as api:
        registry.add(job)
        await job.wait()
        answer = await api.post("/jobs/short/savepoints", json={"path": "/tmp/savepoints"})

    assert answer.status_code == 409
    assert answer.json() == {
        "error": "job 'short' has ended; no checkpoint can be taken",
        "type": "JobError",
    }
