"""ExactlyOnceSearch: seeds of a job killed at random virtual times commit exactly what
they must, and the search finds a sink that breaks that."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from lockgate.engine.io.sinks import SinkContext, TwoPhaseCommitSink
from lockgate.engine.simulation import CrashScenario, ExactlyOnceSearch
from lockgate.engine.testing import RecordingTwoPhaseCommitSink
from tests.engine.jobs.scenarios import counted_per_key

Record = tuple[int, int, int]
SEEDS = 200  # in some 30 s of wall time: bench/exactly_once.py measures it


def exactly_once(seed: int) -> CrashScenario:
    sink: RecordingTwoPhaseCommitSink[Record] = RecordingTwoPhaseCommitSink()
    env, expected = counted_per_key(sink, records=200)
    return CrashScenario(env, lambda: sink.committed, expected)


SEARCH = ExactlyOnceSearch(exactly_once, until=60.0, window=(0.25, 1.95), kills=2)


def test_two_hundred_seeds_killed_twice_each_commit_exactly_once() -> None:
    result = SEARCH.run(range(SEEDS))

    assert result.exact, result.describe()
    assert result.kills_struck >= 1.8 * SEEDS  # the kills fired (some fall in a restart)
    assert result.restores_from_checkpoints >= 1.75 * SEEDS  # after completed checkpoints


def test_a_seeds_kill_times_come_from_the_seed_alone() -> None:
    assert SEARCH.kill_times(7) == SEARCH.kill_times(7) != SEARCH.kill_times(8)
    assert all(0.25 <= t <= 1.95 for t in SEARCH.kill_times(7))


@dataclass
class Transaction:
    name: str
    records: list[Record] = field(default_factory=list)


class CommitsTwice(TwoPhaseCommitSink[Record, Transaction]):
    """Broken on purpose: commit is not idempotent, so a transaction that a restored
    checkpoint holds, committed before the crash, is committed a second time."""

    def __init__(self) -> None:
        self.committed: list[Record] = []
        self.count = 0

    async def begin_transaction(self, context: SinkContext) -> Transaction:
        self.count += 1
        return Transaction(f"{context.attempt}/{context.subtask_index}/{self.count}")

    async def write(self, txn: Transaction, records: list[Record]) -> None:
        txn.records.extend(records)

    async def pre_commit(self, txn: Transaction) -> None:
        pass

    async def commit(self, txn: Transaction) -> None:
        self.committed.extend(txn.records)

    async def abort(self, txn: Transaction) -> None:
        pass


def committing_twice(seed: int) -> CrashScenario:
    sink = CommitsTwice()
    env, expected = counted_per_key(sink, records=200)
    return CrashScenario(env, lambda: sink.committed, expected)


def test_the_search_finds_the_duplicates_of_a_sink_that_commits_twice() -> None:
    search = ExactlyOnceSearch(committing_twice, until=60.0, window=(0.25, 1.95))

    result = search.run(range(10))

    assert not result.exact
    assert len(result.failures) >= 8
    assert all(outcome.duplicated and not outcome.missing for outcome in result.failures)
    assert "duplicated" in result.describe()


def test_without_kills_the_broken_sink_commits_exactly_once() -> None:
    # what makes it fail is recovery: the search's kills are what find it
    search = ExactlyOnceSearch(committing_twice, until=60.0, window=(0.25, 1.95), kills=0)

    assert search.run(range(3)).exact


def test_a_window_outside_the_run_is_refused() -> None:
    with pytest.raises(ValueError, match="window must be \\(start, end\\)"):
        ExactlyOnceSearch(exactly_once, until=5.0, window=(1.0, 10.0))
