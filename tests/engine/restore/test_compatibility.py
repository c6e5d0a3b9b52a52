"""check_restore: Flink's rules for what a restore would do, judged before the job runs."""

from __future__ import annotations

import pytest

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import StreamEnvironment
from lockgate.engine.checkpointing.messages import StateHandle
from lockgate.engine.checkpointing.metadata import CheckpointMetadata, OperatorStateHandles
from lockgate.engine.restore.compatibility import OperatorMapping, RestoreReport, check_restore

HANDLE = StateHandle("/savepoints/sp-1/file", 10, "sha256:00")


def sums_job(
    *, parallelism: int = 2, max_parallelism: int = 8, sums_uid: str | None = "sums"
) -> StreamEnvironment:
    """numbers -> keyed sums -> out; ``sums_uid=None`` leaves the uid to be generated."""
    env = StreamEnvironment(parallelism=2, max_parallelism=max_parallelism)
    (
        env.from_source(CollectionSource(range(10)), uid="numbers")
        .key_by(lambda number: number % 3)
        .reduce(lambda a, b: a + b, uid=sums_uid, parallelism=parallelism)
        .sink_to(CollectSink(), uid="out")
    )
    return env


def savepoint(
    parallelism: dict[str, int], *, max_parallelism: int = 8, without_state: tuple[str, ...] = ()
) -> CheckpointMetadata:
    operators = {
        uid: OperatorStateHandles(p, (None if uid in without_state else HANDLE,) * p)
        for uid, p in parallelism.items()
    }
    return CheckpointMetadata("sums", 7, 1.0, max_parallelism, operators, is_savepoint=True)


def check(metadata: CheckpointMetadata, env: StreamEnvironment, **options: bool) -> RestoreReport:
    return check_restore(metadata, env.plan(), env.max_parallelism, **options)


def test_the_same_job_restores_every_uid_at_its_parallelism() -> None:
    report = check(savepoint({"numbers": 2, "sums": 2}), sums_job())

    assert report.ok
    assert report.mapping == [OperatorMapping("numbers", 2, 2), OperatorMapping("sums", 2, 2)]


def test_another_parallelism_is_rescaling_not_a_problem() -> None:
    report = check(savepoint({"numbers": 2, "sums": 2}), sums_job(parallelism=4))

    assert report.ok
    assert [entry.uid for entry in report.mapping if entry.rescaled] == ["sums"]
    assert OperatorMapping("sums", 2, 4) in report.mapping


def test_another_max_parallelism_is_a_problem_saying_to_set_it_back() -> None:
    report = check(savepoint({"sums": 2}, max_parallelism=128), sums_job(max_parallelism=8))

    assert not report.ok
    assert report.problems == [
        "savepoint 7 was taken with max_parallelism 128, but the job has 8; keyed state is "
        "split into that many key groups, so set max_parallelism back to 128"
    ]


def test_state_of_a_uid_the_job_no_longer_has_is_a_problem_naming_it() -> None:
    report = check(savepoint({"numbers": 2, "counts": 3}), sums_job())

    assert report.problems == [
        "savepoint 7 holds state for operator 'counts', which the job no longer has; give the "
        "operator that owns it uid='counts' again, or pass allow_non_restored_state=True to "
        "drop that state"
    ]
    assert OperatorMapping("counts", 3, None) in report.mapping


def test_allow_non_restored_state_reports_that_state_as_dropped_not_as_a_problem() -> None:
    report = check(
        savepoint({"numbers": 2, "counts": 3}), sums_job(), allow_non_restored_state=True
    )

    assert report.ok
    assert report.dropped == ["counts"]


def test_operators_of_the_job_without_state_start_empty() -> None:
    report = check(savepoint({"numbers": 2}), sums_job())

    assert report.ok
    assert report.starting_empty == ["sums", "out"]


def test_a_uid_whose_subtasks_all_wrote_nothing_has_no_state_to_restore() -> None:
    report = check(savepoint({"numbers": 2, "gone": 2}, without_state=("gone",)), sums_job())

    assert report.ok
    assert [entry.uid for entry in report.mapping] == ["numbers"]


def test_a_missing_uid_with_generated_uids_in_the_job_points_them_out() -> None:
    report = check(savepoint({"sums": 2}), sums_job(sums_uid=None))

    assert len(report.problems) == 1
    assert "'reduce-1' are generated" in report.problems[0]
    assert "give every stateful operator a uid" in report.problems[0]


def test_every_problem_is_reported_at_once() -> None:
    report = check(savepoint({"a": 1, "b": 1}, max_parallelism=16), sums_job())

    first, second, third = report.problems
    assert "max_parallelism 16" in first
    assert ("operator 'a'" in second, "operator 'b'" in third) == (True, True)


@pytest.mark.parametrize("is_savepoint", [True, False])
def test_problems_name_the_snapshot_as_a_savepoint_or_a_checkpoint(is_savepoint: bool) -> None:
    metadata = CheckpointMetadata("sums", 3, 1.0, 16, {}, is_savepoint=is_savepoint)

    report = check(metadata, sums_job())

    assert report.problems[0].startswith("savepoint 3" if is_savepoint else "checkpoint 3")
