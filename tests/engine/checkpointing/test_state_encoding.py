"""State that cannot be pickled into a checkpoint fails the job at once, naming the operator."""

from __future__ import annotations

import anyio
import pytest

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import RestartStrategy, StateEncodingError, StreamEnvironment


async def test_unpicklable_keyed_state_fails_the_job_without_restarting_it() -> None:
    class Local:  # a class defined in a function cannot be pickled
        def __init__(self, value: int) -> None:
            self.value = value

    env = StreamEnvironment()
    env.enable_checkpointing(0.01)
    env.set_restart_strategy(RestartStrategy.fixed_delay(attempts=1000, delay=0.0))
    (
        env.from_source(CollectionSource(range(100)), uid="numbers")
        .key_by(lambda n: n % 3)
        .reduce(lambda a, b: Local(b) if isinstance(a, int) else a, uid="holds-locals")
        .map(lambda value: 0)
        .sink_to(CollectSink(), uid="out")
    )

    with anyio.fail_after(10), pytest.raises(StateEncodingError) as failure:
        await env.execute("unpicklable")

    message = str(failure.value)
    assert "operator 'holds-locals' keeps state that cannot be pickled" in message
    assert "Local" in message
