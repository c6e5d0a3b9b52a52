"""A key selector that fails is reported as the keyed operator's error, wherever it runs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import KeySelectorError, OperatorError, StreamEnvironment


async def run_keyed(records: list[Any], key: Callable[[Any], Any]) -> None:
    # The source runs in one subtask and the reduce in two: the key selector runs in the
    # source's subtask, where records are routed to the reduce's subtasks.
    env = StreamEnvironment(parallelism=2)
    (
        env.from_source(CollectionSource(records), uid="numbers", parallelism=1)
        .key_by(key)
        .reduce(max, uid="sums")
        .sink_to(CollectSink(), uid="out")
    )
    await env.execute("keys")


async def test_a_raising_key_selector_fails_the_job_naming_the_keyed_operator() -> None:
    with pytest.raises(KeySelectorError, match="key selector of operator 'sums'") as caught:
        await run_keyed(list(range(10)), lambda x: 1 // (x - 5))

    assert isinstance(caught.value, OperatorError)
    assert isinstance(caught.value.__cause__, ZeroDivisionError)
    assert (caught.value.uid, caught.value.upstream) == ("sums", "numbers")


async def test_a_record_the_key_selector_cannot_read_names_the_keyed_operator() -> None:
    with pytest.raises(KeySelectorError, match="'sums'") as caught:
        await run_keyed([1, 2, None, 4], lambda x: x % 3)

    assert isinstance(caught.value.__cause__, TypeError)


async def test_an_unhashable_key_says_which_keys_are_allowed() -> None:
    with pytest.raises(KeySelectorError, match="'sums'") as caught:
        await run_keyed([1, 2, 3], lambda x: [x])

    assert "list" in str(caught.value.__cause__)
