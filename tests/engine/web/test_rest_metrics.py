"""GET /metrics answers with the Prometheus export's text, or 501 JSON while there is none."""

from __future__ import annotations

import pytest
from prometheus_client.parser import text_string_to_metric_families

from lockgate.connectors import CollectSink
from lockgate.engine.web import JobRegistry, rest
from tests.engine.jobs.savepoints import Topic
from tests.engine.jobs.web import api_client, counting_job


async def test_metrics_answer_the_export_s_text_of_every_registered_job(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(rest, "PROMETHEUS_MODULE", "tests.engine.web.fake_prometheus")
    topic, registry = Topic(2), JobRegistry()
    async with (
        counting_job(topic, CollectSink()).start("counts") as job,
        api_client(registry) as api,
    ):
        registry.add(job)
        answer = await api.get("/metrics")

    assert answer.status_code == 200
    assert answer.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8"
    assert answer.text == 'lockgate_job{job="counts"} 1\n'


async def test_metrics_answer_the_prometheus_export_of_every_registered_job() -> None:
    topic, registry = Topic(2), JobRegistry()
    async with (
        counting_job(topic, CollectSink()).start("counts") as job,
        api_client(registry) as api,
    ):
        registry.add(job)
        answer = await api.get("/metrics")

    families = {f.name: f for f in text_string_to_metric_families(answer.text)}
    restarts = families["lockgate_job_numRestarts"]
    assert answer.status_code == 200
    assert [(s.labels["job"], s.value) for s in restarts.samples] == [("counts", 0.0)]


async def test_metrics_without_an_export_module_are_501_json(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    missing = "lockgate.engine.web.no_such_export"
    monkeypatch.setattr(rest, "PROMETHEUS_MODULE", missing)
    async with api_client(JobRegistry()) as api:
        answer = await api.get("/metrics")

    assert answer.status_code == 501
    assert answer.json() == {
        "error": "GET /metrics cannot answer: this lockgate has no Prometheus export",
        "type": "MetricsExportMissing",
    }
