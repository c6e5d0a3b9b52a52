"""trial_restore: a restore carried out up to the operators' open(), reporting what fails."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import KeyedProcessFunction, RuntimeContext, StreamEnvironment
from lockgate.engine.checkpointing.storage import storage_reading
from lockgate.engine.restore.reader import read_metadata
from lockgate.engine.restore.resolve import RestoreSettings
from lockgate.engine.runtime.job.trial_restore import trial_restore
from lockgate.engine.time.clock import ManualClock
from tests.engine.restore.test_reader import MAX_PARALLELISM, POINTS, write_snapshot


class Opening(KeyedProcessFunction[int, int, int]):
    """Records that open() and close() ran; ``fails`` makes open() raise."""

    def __init__(self, calls: list[str], *, fails: bool = False) -> None:
        self.calls, self.fails = calls, fails

    def open(self, context: RuntimeContext) -> None:
        self.calls.append(f"open {context.subtask_index}")
        if self.fails:
            raise ConnectionError("the lookup table is not reachable")

    def process_element(self, value: int, ctx: Any) -> Any:
        yield value

    def close(self) -> None:
        self.calls.append("close")

    def __deepcopy__(self, memo: dict[int, Any]) -> Opening:
        return self  # one list of calls for every subtask's copy


def job(function: Opening) -> StreamEnvironment:
    env = StreamEnvironment(parallelism=2, max_parallelism=MAX_PARALLELISM)
    env.from_source(CollectionSource(range(3)), uid="numbers").key_by(lambda n: n).process(
        function, uid="sums"
    ).sink_to(CollectSink(), uid="out")
    return env


async def tried(location: str, env: StreamEnvironment) -> list[str]:
    restore = RestoreSettings(await read_metadata(location), storage_reading(location), location)
    return await trial_restore(
        restore, env.plan(), env.max_parallelism, codec=POINTS, clock=ManualClock()
    )


async def test_every_subtask_of_an_operator_with_state_is_opened_and_closed(
    tmp_path: Path,
) -> None:
    calls: list[str] = []

    problems = await tried(await write_snapshot(tmp_path), job(Opening(calls)))

    assert problems == []
    assert calls == ["open 0", "close", "open 1", "close"]


async def test_an_open_that_raises_is_a_problem_naming_the_operator(tmp_path: Path) -> None:
    calls: list[str] = []

    problems = await tried(await write_snapshot(tmp_path), job(Opening(calls, fails=True)))

    assert problems == [
        "operator 'sums' (subtask 1/2) failed: ConnectionError('the lookup table is not reachable')"
    ]
    assert calls == ["open 0", "close"]  # closed again; one problem per operator
