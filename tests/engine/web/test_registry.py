"""JobRegistry: jobs by name, kept after they end, one running job per name."""

from __future__ import annotations

import pytest

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import StreamEnvironment
from lockgate.engine.web import JobRegistry, UnknownJob
from tests.engine.jobs.basic import EndlessSource


def endless() -> StreamEnvironment:
    env = StreamEnvironment()
    env.from_source(EndlessSource(), uid="endless").sink_to(CollectSink(), uid="out")
    return env


def short() -> StreamEnvironment:
    env = StreamEnvironment()
    env.from_source(CollectionSource(range(3)), uid="numbers").sink_to(CollectSink(), uid="out")
    return env


async def test_a_registered_job_is_found_by_its_name_and_listed_in_order() -> None:
    registry = JobRegistry()
    async with endless().start("a") as a, endless().start("b") as b:
        registry.add(a)
        registry.add(b)

        assert registry.get("b") is b
        assert registry.jobs() == (a, b)
        assert "a" in registry
        assert len(registry) == 2


async def test_an_unknown_name_raises_unknown_job_naming_the_jobs_there_are() -> None:
    registry = JobRegistry()
    async with endless().start("a") as a:
        registry.add(a)

        with pytest.raises(
            UnknownJob, match=r"^no job named 'b' is registered; the jobs are: 'a'$"
        ):
            registry.get("b")


async def test_a_second_running_job_of_a_name_is_refused() -> None:
    registry = JobRegistry()
    async with endless().start("a") as first, endless().start("a") as second:
        registry.add(first)

        with pytest.raises(
            ValueError, match=r"a job named 'a' is registered and (CREATED|RUNNING)"
        ):
            registry.add(second)
        assert registry.get("a") is first


async def test_a_job_that_ended_stays_listed_until_a_new_job_of_its_name_replaces_it() -> None:
    registry = JobRegistry()
    async with short().start("a") as first:
        registry.add(first)
        await first.wait()
    assert registry.get("a") is first

    async with endless().start("a") as second:
        registry.add(second)

        assert registry.jobs() == (second,)


async def test_a_removed_job_is_no_longer_listed() -> None:
    registry = JobRegistry()
    async with endless().start("a") as a:
        registry.add(a)
        registry.remove("a")

        assert registry.jobs() == ()
        with pytest.raises(UnknownJob, match="the jobs are: none"):
            registry.remove("a")
