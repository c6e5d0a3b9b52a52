"""An IngressSource into a CommittedSink across a stop with a savepoint part-way and a restore
at another parallelism: the records the ingress still held are read by the restored job, its
splits redistributed, and subscribers see every record once."""

from __future__ import annotations

from pathlib import Path

import anyio

from lockgate.connectors import CommittedSink, IngressSource
from lockgate.connectors.service import CommittedTransaction
from tests.connectors.savepoint_jobs import Gate, stop_at_the_gate
from tests.connectors.service.jobs import service_env, take

N = 300


class GatedCommittedSink(CommittedSink[int]):
    """A CommittedSink whose writes wait at a ``Gate``."""

    def __init__(self, gate: Gate) -> None:
        super().__init__()
        self.gate = gate

    async def write(self, txn: CommittedTransaction[int], records: list[int]) -> None:
        await self.gate.pass_through(records)
        await super().write(txn, records)


async def test_a_stop_with_savepoint_and_a_restore_at_another_parallelism_lose_and_repeat_nothing(
    tmp_path: Path,
):
    ingress: IngressSource[int] = IngressSource(capacity=N, splits=3)
    gate = Gate(50)
    sink = GatedCommittedSink(gate)  # the same objects for both runs: one process
    records = sink.subscribe(buffer=N)

    with anyio.fail_after(20):
        env = service_env(1, batch_size=5)
        env.from_source(ingress, uid="in").sink_to(sink, uid="out")
        async with env.start("service") as job:
            await ingress.send_many(range(N))
            savepoint = await stop_at_the_gate(job, gate, tmp_path.as_uri())
    first = await take(records, sink.statistics().committed)
    held = ingress.statistics().held

    with anyio.fail_after(20):
        env = service_env(2, batch_size=5)
        env.from_source(ingress, uid="in").sink_to(sink, uid="out")
        async with env.start("service", restore_from=savepoint) as job:
            ingress.close()
            await job.wait()
    readers = [subtask.records_out for subtask in job.metrics().subtasks]
    rest = await take(records, N - len(first))

    assert 50 in first and held > 0, "the stop did not fall part-way"
    assert len(readers) == 2 and all(readers)  # the three splits went to both subtasks
    assert sorted(first + rest) == list(range(N))
    assert records.buffered == 0 and sink.statistics().committed == N
