from __future__ import annotations

import gc
import pickle

from lockgate.connectors import CollectionSource, CollectSink, memory
from lockgate.connectors.memory import CollectTransaction
from lockgate.engine import RestartStrategy, SinkContext, StreamEnvironment, SystemClock, run
from lockgate.engine.io.record_chunks import CHUNK_RECORDS
from lockgate.engine.io.young_generation import YOUNG_THRESHOLD, YoungGeneration
from lockgate.engine.testing import FailOnce


def context(index: int = 0, *, attempt: int = 0, restored: tuple[object, ...] = ()) -> SinkContext:
    return SinkContext(
        uid="out",
        subtask_index=index,
        parallelism=2,
        clock=SystemClock(),
        restored_state=restored,
        attempt=attempt,
    )


async def test_written_records_stay_invisible_until_their_checkpoint_completes() -> None:
    sink: CollectSink[int] = CollectSink()
    writer = sink.create_writer(context())
    await writer.open()

    await writer.write([1, 2])
    await writer.snapshot_state(1)

    assert sink.results == []
    await writer.notify_checkpoint_complete(1)
    assert sink.results == [1, 2]


async def test_records_after_the_barrier_wait_for_the_next_checkpoint() -> None:
    sink: CollectSink[str] = CollectSink()
    writer = sink.create_writer(context())
    await writer.open()

    await writer.write(["a"])
    await writer.snapshot_state(1)
    await writer.write(["b"])
    await writer.notify_checkpoint_complete(1)

    assert sink.results == ["a"]


async def test_a_transaction_recovered_after_its_commit_is_not_added_twice() -> None:
    sink: CollectSink[int] = CollectSink()
    writer = sink.create_writer(context())
    await writer.open()
    await writer.write([7])
    state = await writer.snapshot_state(1)
    await writer.notify_checkpoint_complete(1)

    recovered = sink.create_writer(context(attempt=1, restored=tuple(state)))
    await recovered.open()

    assert sink.results == [7]


async def test_a_pre_committed_transaction_is_committed_on_recovery() -> None:
    sink: CollectSink[int] = CollectSink()
    writer = sink.create_writer(context())
    await writer.open()
    await writer.write([5, 6])
    state = await writer.snapshot_state(1)
    await writer.close()  # the attempt dies before notify-complete arrives

    recovered = sink.create_writer(context(attempt=1, restored=tuple(state)))
    await recovered.open()

    assert sink.results == [5, 6]


async def test_records_of_an_unfinished_transaction_are_dropped_on_close() -> None:
    sink: CollectSink[int] = CollectSink()
    writer = sink.create_writer(context())
    await writer.open()

    await writer.write([1])
    await writer.close()

    assert sink.results == []


async def test_clear_forgets_committed_records() -> None:
    sink: CollectSink[int] = CollectSink()
    writer = sink.create_writer(context())
    await writer.open()
    await writer.write([1])
    await writer.snapshot_state(1)
    await writer.notify_checkpoint_complete(1)

    sink.clear()

    assert sink.results == []


async def test_a_transaction_says_how_many_records_it_holds() -> None:
    sink: CollectSink[int] = CollectSink()

    assert sink.transaction_size(CollectTransaction("t", [1, 2, 3])) == 3


def test_a_transaction_survives_pickling_with_its_records() -> None:
    txn = CollectTransaction("job/run/0/0/1", [(i, str(i)) for i in range(5_000)])

    assert pickle.loads(pickle.dumps(txn)) == txn


def test_a_transaction_pickles_its_records_chunk_by_chunk() -> None:
    txn = CollectTransaction("t", list(range(2 * CHUNK_RECORDS + 1)))

    _, (transaction_id, chunks) = txn.__reduce__()

    assert (transaction_id, [len(pickle.loads(chunk)) for chunk in chunks]) == (
        "t",
        [CHUNK_RECORDS, CHUNK_RECORDS, 1],
    )


class FirstCommitFails(CollectSink[int]):
    """Fails once when it commits: the records must come back from the checkpoint."""

    def __init__(self, fail: FailOnce) -> None:
        super().__init__()
        self.fail = fail

    async def commit(self, txn: CollectTransaction[int]) -> None:
        self.fail.maybe_fire()
        await super().commit(txn)


def test_a_transaction_too_large_to_encode_on_the_loop_commits_once_after_a_restore() -> None:
    fail = FailOnce("commit after the final checkpoint")
    env = StreamEnvironment()
    env.enable_checkpointing(3600.0)  # only the final checkpoint: one transaction of 50,000
    env.set_restart_strategy(RestartStrategy.fixed_delay(attempts=1, delay=0.0))
    sink = FirstCommitFails(fail)
    env.from_source(CollectionSource(range(50_000)), uid="numbers").sink_to(sink, uid="out")

    run(env.execute, "restored-commit")

    assert fail.fired
    assert sink.results == list(range(50_000))


class Thresholds:
    """Reads the young collections' threshold while records pass."""

    def __init__(self) -> None:
        self.seen: set[int] = set()

    def __call__(self, record: int) -> int:
        self.seen.add(gc.get_threshold()[0])
        return record


def test_young_collections_run_rarely_while_a_collect_sink_keeps_records(monkeypatch) -> None:
    monkeypatch.setattr(memory, "YOUNG_GENERATION", YoungGeneration())
    saved = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    thresholds, sink = Thresholds(), CollectSink[int]()
    env = StreamEnvironment()
    env.from_source(CollectionSource(range(1_000))).map(thresholds).sink_to(sink)

    try:
        run(env.execute, "thresholds")
        after = gc.get_threshold()
    finally:
        gc.set_threshold(*saved)

    assert (thresholds.seen, after, len(sink.results)) == ({YOUNG_THRESHOLD}, (700, 10, 10), 1_000)
