"""With a token, the REST API's mutating endpoints refuse requests that do not carry it."""

from __future__ import annotations

from pathlib import Path

import pytest

from lockgate.connectors import CollectSink
from lockgate.engine import JobStatus
from lockgate.engine.web import JobRegistry, rest_app
from tests.engine.jobs.savepoints import Topic
from tests.engine.jobs.web import api_client, counting_job, until_running

TOKEN = "s3cret-token"
MUTATING = ["/jobs/counts/savepoints", "/jobs/counts/stop", "/jobs/counts/cancel"]


def no_files_in(folder: Path) -> bool:
    return not any(folder.iterdir())


def body(path: str, tmp_path: Path) -> dict[str, object]:
    return {"path": tmp_path.as_uri(), "savepoint": tmp_path.as_uri()}


@pytest.mark.parametrize("path", MUTATING)
async def test_a_mutating_request_without_the_token_is_401_and_changes_nothing(
    path: str, tmp_path: Path
) -> None:
    topic, registry = Topic(2), JobRegistry()
    async with (
        counting_job(topic, CollectSink()).start("counts") as job,
        api_client(registry, token=TOKEN) as api,
    ):
        registry.add(job)
        await until_running(job)
        answer = await api.post(path, json=body(path, tmp_path))
        status = job.status

    assert answer.status_code == 401
    assert answer.headers["www-authenticate"] == "Bearer"
    assert answer.json() == {
        "error": f"POST {path} needs the API's token: send the header "
        "'Authorization: Bearer <token>'",
        "type": "Unauthorized",
    }
    assert status is JobStatus.RUNNING
    assert no_files_in(tmp_path)


@pytest.mark.parametrize("path", MUTATING)
async def test_a_mutating_request_with_another_token_is_403_and_changes_nothing(
    path: str, tmp_path: Path
) -> None:
    topic, registry = Topic(2), JobRegistry()
    async with (
        counting_job(topic, CollectSink()).start("counts") as job,
        api_client(registry, token=TOKEN) as api,
    ):
        registry.add(job)
        await until_running(job)
        headers = {"Authorization": "Bearer not-the-token"}
        answer = await api.post(path, json=body(path, tmp_path), headers=headers)
        status = job.status

    assert answer.status_code == 403
    assert answer.json() == {
        "error": f"POST {path}: the bearer token is wrong",
        "type": "Forbidden",
    }
    assert status is JobStatus.RUNNING
    assert no_files_in(tmp_path)


async def test_a_mutating_request_with_the_token_is_carried_out(tmp_path: Path) -> None:
    topic, registry = Topic(2), JobRegistry()
    async with (
        counting_job(topic, CollectSink()).start("counts") as job,
        api_client(registry, token=TOKEN) as api,
    ):
        registry.add(job)
        headers = {"Authorization": f"Bearer {TOKEN}"}
        answer = await api.post(
            "/jobs/counts/savepoints", json={"path": tmp_path.as_uri()}, headers=headers
        )

    assert answer.status_code == 200
    assert Path(answer.json()["savepoint"]).parent == tmp_path


@pytest.mark.parametrize("path", ["/jobs", "/jobs/counts", "/jobs/counts/checkpoints"])
async def test_reading_needs_no_token(path: str) -> None:
    topic, registry = Topic(2), JobRegistry()
    async with (
        counting_job(topic, CollectSink()).start("counts") as job,
        api_client(registry, token=TOKEN) as api,
    ):
        registry.add(job)
        answer = await api.get(path)

    assert answer.status_code == 200


def test_an_empty_token_is_refused() -> None:
    with pytest.raises(ValueError, match="token must not be empty"):
        rest_app(JobRegistry(), token="")
