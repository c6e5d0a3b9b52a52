"""CollectionSource to a CollectSink and a PrintSink across a stop with a savepoint and a
restore from it: both sinks show every element once, the first run a strict prefix."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from lockgate.connectors import CollectionSource, CollectSink, PrintSink
from lockgate.connectors.memory import CollectTransaction
from lockgate.engine import StreamEnvironment
from tests.connectors.savepoint_jobs import Gate, stop_at_the_gate

N = 1_000


class GatedCollectSink(CollectSink[int]):
    """A CollectSink whose writes wait at a ``Gate``."""

    def __init__(self, gate: Gate) -> None:
        super().__init__()
        self.gate = gate

    async def write(self, txn: CollectTransaction[int], records: list[int]) -> None:
        await self.gate.pass_through(records)
        await super().write(txn, records)


def numbers_job(sink: CollectSink[int]) -> StreamEnvironment:
    # Small channels: the gated sink holds the source back part-way through the input.
    env = StreamEnvironment(parallelism=1, batch_size=50, channel_capacity=100)
    env.enable_checkpointing(None)
    numbers = env.from_source(CollectionSource(range(N)), uid="numbers")
    numbers.sink_to(sink, uid="out")
    numbers.sink_to(PrintSink("n"), uid="print")
    return env


async def test_a_collection_job_stopped_with_a_savepoint_and_restored_emits_every_element_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gate = Gate(500)
    sink = GatedCollectSink(gate)  # the same "external system" for both runs

    with anyio.fail_after(20):
        async with numbers_job(sink).start("numbers") as job:
            savepoint = await stop_at_the_gate(job, gate, tmp_path.as_uri())
    first = list(sink.results)
    with anyio.fail_after(20):
        await numbers_job(sink).execute("numbers", restore_from=savepoint)

    assert 500 in first and len(first) < N, "the stop did not fall part-way"
    assert first == list(range(len(first)))
    assert sink.results == list(range(N))
    printed = capsys.readouterr().out.splitlines()
    assert sorted(printed) == sorted(f"n> {n}" for n in range(N))
