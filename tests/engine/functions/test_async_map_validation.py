"""async_map checks its options when the stream method is called, and again at planning."""

from __future__ import annotations

import functools
import re
from typing import Any

import pytest

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import AsyncRetry, DataStream, GraphError, StreamEnvironment
from lockgate.engine.functions.async_io import AsyncMapSpec


async def lookup(record: int) -> int:
    return record


class Client:
    async def __call__(self, record: int) -> int:
        return record


def numbers(env: StreamEnvironment) -> DataStream[int]:
    return env.from_source(CollectionSource([1, 2, 3]), uid="numbers")


def rejected(message: str) -> Any:
    return pytest.raises(GraphError, match=re.escape(message))


def test_a_plain_function_is_rejected_naming_the_uid_and_pointing_to_map() -> None:
    env = StreamEnvironment()

    with rejected("async_map 'enrich': the function must be a coroutine function"):
        numbers(env).async_map(abs, uid="enrich")  # type: ignore[arg-type]


def test_a_lambda_returning_a_coroutine_is_not_taken_for_an_async_function() -> None:
    env = StreamEnvironment()

    with rejected("for a plain function use map()"):
        numbers(env).async_map(lambda r: lookup(r), uid="enrich")


@pytest.mark.parametrize(
    "fn", [lookup, Client(), functools.partial(lookup)], ids=["def", "__call__", "partial"]
)
def test_async_defs_objects_with_an_async_call_and_partials_are_accepted(fn: Any) -> None:
    env = StreamEnvironment()
    numbers(env).async_map(fn, uid="enrich").sink_to(CollectSink(), uid="out")

    assert env.plan().chain_of("enrich").uids == ("numbers", "enrich", "out")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"capacity": 0}, "capacity must be an int >= 1; got 0"),
        ({"capacity": 2.5}, "capacity must be an int >= 1; got 2.5"),
        ({"timeout": 0}, "timeout must be > 0 seconds, or None for no timeout; got 0"),
        ({"timeout": -1.0}, "timeout must be > 0 seconds"),
        ({"rate_limit": 0}, "rate_limit must be > 0 calls per second"),
        (
            {"on_failure": "skip"},
            "on_failure must be 'fail', 'retry', an OutputTag (a side output for failed records) "
            "or a callable; got 'skip'",
        ),
        ({"retry": AsyncRetry(attempts=0)}, "retry: attempts must be at least 1; got 0"),
    ],
)
def test_an_invalid_option_is_rejected_when_the_method_is_called(
    options: dict[str, Any], message: str
) -> None:
    env = StreamEnvironment()

    with rejected(f"async_map 'enrich': {message}"):
        numbers(env).async_map(lookup, uid="enrich", **options)


def test_a_rejected_async_map_adds_nothing_to_the_graph() -> None:
    env = StreamEnvironment()
    stream = numbers(env)
    with pytest.raises(GraphError):
        stream.async_map(lookup, capacity=0, uid="enrich")
    stream.sink_to(CollectSink(), uid="out")

    assert env.plan().chain_of("out").uids == ("numbers", "out")


def test_an_option_broken_after_the_call_is_caught_when_the_graph_is_validated() -> None:
    env = StreamEnvironment()
    numbers(env).async_map(lookup, uid="enrich").sink_to(CollectSink(), uid="out")
    node = next(node for node in env._builder.graph if node.uid == "enrich")
    node.function = AsyncMapSpec(function=lookup, capacity=-1)

    with rejected("async_map 'enrich': capacity must be an int >= 1; got -1"):
        env.plan()


def test_an_auto_generated_uid_is_named_in_the_error() -> None:
    env = StreamEnvironment()

    with rejected("async_map 'async_map-1': timeout must be > 0"):
        numbers(env).async_map(lookup, timeout=0)


def test_async_map_chains_with_the_operators_around_it_at_equal_parallelism() -> None:
    env = StreamEnvironment(parallelism=2)
    (
        numbers(env)
        .map(lambda r: r + 1, uid="before")
        .async_map(lookup, uid="enrich")
        .map(str, uid="after")
        .sink_to(CollectSink(), uid="out")
    )

    assert env.plan().describe() == "chain 0 x2: numbers -> before -> enrich -> after -> out"
