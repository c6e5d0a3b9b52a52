"""An AsyncFunction given to async_map is opened by each subtask before its first call and
closed after its last (Flink's RichAsyncFunction), on asyncio and on trio, in every attempt."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import (
    AsyncFunction,
    OperatorError,
    RestartStrategy,
    RuntimeContext,
    StreamEnvironment,
)
from lockgate.engine.testing import AwaitCheckpoint, FailOnce

BACKENDS = ("asyncio", "trio")


@dataclass
class Timeline:
    """What every copy of a function did, in order; shared by all of them."""

    steps: list[tuple[str, int]] = field(default_factory=list)

    def __deepcopy__(self, memo: dict[int, Any]) -> Timeline:
        return self

    def of(self, subtask: int) -> list[str]:
        return [step for step, index in self.steps if index == subtask]


class Doubling(AsyncFunction[int, int]):
    """Doubles through a "session" it opens per subtask, as a client session would be."""

    def __init__(self, timeline: Timeline, *, open_fails: bool = False) -> None:
        self.timeline = timeline
        self.open_fails = open_fails
        self.session: dict[str, bool] | None = None

    async def open(self, context: RuntimeContext) -> None:
        await anyio.lowlevel.checkpoint()
        if self.open_fails:
            raise ConnectionError("the service is down")
        self.subtask = context.subtask_index
        self.session = {"open": True}
        self.timeline.steps.append(("open", self.subtask))

    async def __call__(self, number: int) -> int:
        assert self.session is not None and self.session["open"], "called outside open/close"
        self.timeline.steps.append(("call", self.subtask))
        await anyio.lowlevel.checkpoint()
        return 2 * number

    async def close(self) -> None:
        self.timeline.steps.append(("close", getattr(self, "subtask", -1)))
        assert self.session is not None, "closed without an open that returned"
        self.session["open"] = False


def job(
    function: Any, elements: list[Any], sink: CollectSink[int], *, parallelism: int = 1
) -> StreamEnvironment:
    env = StreamEnvironment(parallelism=parallelism, batch_size=16)
    env.from_source(CollectionSource(elements), uid="numbers").async_map(
        function, capacity=8, uid="doubled"
    ).sink_to(sink, uid="out")
    return env


def run_on(backend: str, main: Callable[[], Awaitable[Any]]) -> Any:
    async def bounded() -> Any:
        with anyio.fail_after(20):
            return await main()

    return anyio.run(bounded, backend=backend)


def called_between_open_and_close(steps: list[str], calls: int) -> bool:
    return steps == ["open", *["call"] * calls, "close"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_each_subtask_opens_its_own_copy_before_its_first_call_and_closes_it_after_its_last(
    backend: str,
) -> None:
    timeline, sink = Timeline(), CollectSink[int]()
    env = job(Doubling(timeline), list(range(100)), sink, parallelism=2)

    run_on(backend, lambda: env.execute("doubling"))

    assert sorted(sink.results) == [2 * number for number in range(100)]
    assert called_between_open_and_close(timeline.of(0), 50)
    assert called_between_open_and_close(timeline.of(1), 50)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_failed_attempt_closes_its_function_and_the_next_attempt_opens_a_new_one(
    backend: str, tmp_path: Any
) -> None:
    timeline, sink, fail = Timeline(), CollectSink[int](), FailOnce()
    elements = [*range(40), AwaitCheckpoint(), *range(40, 60), fail, *range(60, 80)]
    env = job(Doubling(timeline), elements, sink)
    env.enable_checkpointing(0.01)
    env.set_checkpoint_storage(tmp_path.as_uri())
    env.set_restart_strategy(RestartStrategy.fixed_delay(attempts=1, delay=0.0))

    result = run_on(backend, lambda: env.execute("doubling"))

    assert fail.fired, "the injected failure never fired"
    assert result.metrics.attempt == 1
    assert sink.results == [2 * number for number in range(80)]
    steps = timeline.of(0)
    assert steps.count("open") == steps.count("close") == 2
    first_close = steps.index("close")
    assert called_between_open_and_close(steps[: first_close + 1], first_close - 1)
    assert called_between_open_and_close(steps[first_close + 1 :], len(steps) - first_close - 3)


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_open_that_raises_fails_the_job_naming_the_operator_and_nothing_is_closed(
    backend: str,
) -> None:
    timeline = Timeline()
    env = job(Doubling(timeline, open_fails=True), list(range(10)), CollectSink())

    with pytest.raises(OperatorError) as failed:
        run_on(backend, lambda: env.execute("doubling"))

    assert str(failed.value).startswith("operator 'doubled' (subtask 1/1) failed: ConnectionError")
    assert timeline.steps == []


class Hanging(Doubling):
    """Calls that never return until cancelled; ``started`` is set by the first."""

    started: anyio.Event

    async def __call__(self, number: int) -> int:
        self.timeline.steps.append(("call", self.subtask))
        self.started.set()
        try:
            await anyio.sleep_forever()
        finally:
            self.timeline.steps.append(("ended", self.subtask))
        raise AssertionError("unreachable")


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_cancelled_job_closes_its_function_once_its_calls_have_ended(backend: str) -> None:
    timeline = Timeline()
    function = Hanging(timeline)

    async def cancel_while_calling() -> None:
        Hanging.started = anyio.Event()  # shared by the subtask's copy: a class attribute
        async with job(function, list(range(10)), CollectSink()).start("hanging") as running:
            await Hanging.started.wait()
            running.cancel()

    run_on(backend, cancel_while_calling)

    steps = timeline.of(0)
    assert (steps[0], steps[-1], steps.count("close")) == ("open", "close", 1)
    assert steps.count("call") == steps.count("ended") == 8  # capacity=8, each cancelled


class PlainHooks(AsyncFunction[int, int]):
    """An AsyncFunction whose hooks are plain functions."""

    def __init__(self, timeline: Timeline) -> None:
        self.timeline = timeline

    def open(self, context: RuntimeContext) -> None:  # type: ignore[override]
        self.timeline.steps.append(("open", context.subtask_index))

    async def __call__(self, number: int) -> int:
        return number

    def close(self) -> None:  # type: ignore[override]
        self.timeline.steps.append(("close", 0))


async def test_hooks_defined_with_a_plain_def_are_called_too() -> None:
    timeline, sink = Timeline(), CollectSink[int]()

    await job(PlainHooks(timeline), [1, 2, 3], sink).execute("plain")

    assert (sink.results, timeline.of(0)) == ([1, 2, 3], ["open", "close"])


class OpenMeansSomethingElse:
    """An async callable, not an AsyncFunction, whose open() is a method of its own."""

    def __init__(self) -> None:
        self.opened = False

    def open(self) -> None:
        self.opened = True

    async def __call__(self, number: int) -> int:
        return number + 1


async def test_an_async_callable_that_is_not_an_async_function_is_only_called() -> None:
    function, sink = OpenMeansSomethingElse(), CollectSink[int]()

    await job(function, [1, 2, 3], sink).execute("plain")

    assert (sink.results, function.opened) == ([2, 3, 4], False)
