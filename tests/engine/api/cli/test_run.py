"""``lockgate run`` in this process: how a job's end becomes the exit status, and bad arguments."""

from __future__ import annotations

import pytest

from lockgate.engine.api.cli import EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE, main
from lockgate.engine.api.cli.job_loading import default_job_name
from tests.engine.api.cli import jobs

JOBS = "tests.engine.api.cli.jobs"


def test_a_bounded_job_runs_to_its_end_and_says_it_finished(
    capsys: pytest.CaptureFixture[str],
) -> None:
    jobs.SINK.clear()

    status = main(["run", f"{JOBS}:short", "--name", "numbers"])

    assert status == EXIT_OK
    assert capsys.readouterr().out.splitlines() == [
        "lockgate: job 'numbers' started",
        "lockgate: job 'numbers' FINISHED",
    ]
    assert sorted(jobs.SINK.results) == list(range(10))


def test_a_failing_job_exits_with_1_and_its_error_on_standard_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status = main(["run", f"{JOBS}:failing"])

    err = capsys.readouterr().err
    assert status == EXIT_PROBLEMS
    assert err.startswith("lockgate: error: job 'jobs' failed: operator 'fragile' (subtask 1/1)")
    assert "boom at 3" in err


def test_parallelism_is_passed_to_the_function(capsys: pytest.CaptureFixture[str]) -> None:
    jobs.SINK.clear()

    status = main(["run", f"{JOBS}:short", "--parallelism", "3"])

    assert status == EXIT_OK
    assert sorted(jobs.SINK.results) == list(range(10))


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ([f"{JOBS}:BUILT", "--parallelism", "2"], "is a StreamEnvironment built already"),
        ([f"{JOBS}:without_parallelism", "--parallelism", "2"], "takes no keyword argument"),
        ([f"{JOBS}:raising"], "calling it failed: RuntimeError('no job today')"),
        ([f"{JOBS}:short", "--rest", "localhost"], "is not HOST:PORT"),
        ([f"{JOBS}:short", "--rest", "127.0.0.1:70000"], "is not HOST:PORT"),
        ([f"{JOBS}:short", "--savepoint-on-stop", "relative/folder"], "relative"),
        (["examples/no_such_file.py:build"], "there is no file 'examples/no_such_file.py'"),
        ([f"{JOBS}:short", "--restore", "/nothing/here"], "/nothing/here"),
    ],
)
def test_a_run_that_cannot_start_is_a_usage_error_in_one_line(
    arguments: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(["run", *arguments])

    [line] = capsys.readouterr().err.strip().splitlines()
    assert status == EXIT_USAGE
    assert line.startswith("lockgate: error: ")
    assert message in line


def test_the_default_name_is_the_module_s_last_part() -> None:
    assert default_job_name("examples/tail_counts.py:build") == "tail_counts"
    assert default_job_name("my.jobs.orders:build") == "orders"


def test_an_address_that_does_not_answer_is_a_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status = main(["status", "counts", "--address", "http://127.0.0.1:9"])

    assert status == EXIT_USAGE
    assert "no answer from the REST API at http://127.0.0.1:9" in capsys.readouterr().err
