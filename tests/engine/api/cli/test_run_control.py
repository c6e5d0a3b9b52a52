"""``lockgate run --rest`` in one process, ``lockgate status|savepoint|stop`` from another.

The job is examples/tail_counts.py: running word counts of a growing log, exactly once to
part files. Exactly-once across processes: the first run is stopped with a savepoint (by
``lockgate stop``, or by SIGTERM with ``--savepoint-on-stop``), lines are appended with the
``#end`` that ends the input, and a second ``lockgate run --restore FOLDER`` runs to the end;
the part files then hold every word's running counts 1..n once each.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from tests.engine.jobs.cli import (
    EXAMPLE,
    ROOT,
    LockgateRun,
    lockgate,
    tail_counts_env,
    until,
)

FIRST, MORE = 100, 50
NAME = "tail_counts"


def example() -> ModuleType:
    spec = importlib.util.spec_from_file_location(NAME, ROOT / "examples" / f"{NAME}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def append_lines(folder: Path, numbers: range, *, end: bool = False) -> None:
    lines = [f"alpha beta line {n}" for n in numbers] + (["#end"] if end else [])
    with (folder / "input.log").open("a") as log:
        log.writelines(f"{line}\n" for line in lines)


def exact_counts(lines: int) -> dict[str, list[int]]:
    return {word: list(range(1, lines + 1)) for word in ("alpha", "beta", "line")}


def counted_all(run: LockgateRun, words: int) -> bool:
    sink = run.vertices(NAME)[1]
    return bool(sink["records_in"] == words)


def restored_to_the_end(folder: Path, savepoint: str) -> dict[str, list[int]]:
    append_lines(folder, range(FIRST, FIRST + MORE), end=True)
    done = lockgate("run", EXAMPLE, "--restore", savepoint, env=tail_counts_env(folder))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == f"lockgate: job '{NAME}' FINISHED"
    counts: dict[str, list[int]] = example().committed_counts(folder / "output")
    return counts


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    append_lines(tmp_path, range(FIRST))
    return tmp_path


def test_status_savepoint_and_stop_from_a_second_process_and_the_restore_is_exact(
    folder: Path,
) -> None:
    env = tail_counts_env(folder)
    with LockgateRun(EXAMPLE, "--rest", "127.0.0.1:0", env=env) as run:
        until(lambda: counted_all(run, 3 * FIRST))
        status = lockgate("status", NAME, "--address", run.url)
        taken = lockgate("savepoint", NAME, (folder / "taken").as_uri(), "--address", run.url)
        stopped = lockgate(
            "stop", NAME, "--savepoint", (folder / "stop").as_uri(), "--address", run.url
        )
        code, out, err = run.wait()

    assert status.returncode == 0, status.stderr
    assert "status:      RUNNING" in status.stdout
    assert f"chain 1 x2: counts -> sink (in {3 * FIRST}, out {3 * FIRST}" in status.stdout
    assert taken.returncode == 0, taken.stderr
    assert Path(taken.stdout.strip(), "_metadata").is_file()
    assert stopped.returncode == 0, stopped.stderr
    savepoint = stopped.stdout.strip()
    assert Path(savepoint).parent == folder / "stop"
    assert (code, out.splitlines()[-1]) == (0, f"lockgate: job '{NAME}' FINISHED"), err
    assert restored_to_the_end(folder, savepoint) == exact_counts(FIRST + MORE)


def test_sigterm_with_savepoint_on_stop_leaves_a_savepoint_that_restores_exactly_once(
    folder: Path,
) -> None:
    env = tail_counts_env(folder)
    target = (folder / "savepoints").as_uri()
    with LockgateRun(
        EXAMPLE, "--rest", "127.0.0.1:0", "--savepoint-on-stop", target, env=env
    ) as run:
        until(lambda: counted_all(run, 3 * FIRST))
        run.terminate()
        code, out, err = run.wait()

    assert code == 0, err
    [savepoint] = [
        line.removeprefix("lockgate: savepoint ")
        for line in out.splitlines()
        if line.startswith("lockgate: savepoint ")
    ]
    assert Path(savepoint).parent == folder / "savepoints"
    assert out.splitlines()[-1] == f"lockgate: job '{NAME}' FINISHED"
    assert restored_to_the_end(folder, savepoint) == exact_counts(FIRST + MORE)


def test_sigterm_without_savepoint_on_stop_cancels_the_job(folder: Path) -> None:
    with LockgateRun(EXAMPLE, env=tail_counts_env(folder)) as run:
        run.terminate()
        code, out, err = run.wait()

    assert code == 0, err
    assert out.splitlines()[-1] == f"lockgate: job '{NAME}' CANCELED"


def test_with_a_token_a_stop_without_it_is_refused_and_one_with_it_is_done(folder: Path) -> None:
    env = tail_counts_env(folder)
    target = (folder / "stop").as_uri()
    with LockgateRun(EXAMPLE, "--rest", "127.0.0.1:0", "--token", "t0k", env=env) as run:
        refused = lockgate("stop", NAME, "--savepoint", target, "--address", run.url)
        done = lockgate("stop", NAME, "--savepoint", target, "--address", run.url, "--token", "t0k")
        code, _, err = run.wait()

    assert refused.returncode == 1
    assert refused.stderr.startswith("lockgate: error: POST /jobs/tail_counts/stop needs the API")
    assert "(HTTP 401)" in refused.stderr
    assert done.returncode == 0, done.stderr
    assert code == 0, err


def test_parallelism_is_given_to_the_job_function(folder: Path) -> None:
    env = tail_counts_env(folder)
    with LockgateRun(EXAMPLE, "--rest", "127.0.0.1:0", "--parallelism", "3", env=env) as run:
        listed = lockgate("list", "--address", run.url)
        chains = [(v["name"], v["parallelism"]) for v in run.vertices(NAME)]
        cancelled = lockgate("cancel", NAME, "--address", run.url)
        code, out, _ = run.wait()

    assert listed.stdout.splitlines()[1].split()[:3] == [NAME, "RUNNING", "0"]
    assert chains == [("lines -> words -> ones", 1), ("counts -> sink", 3)]
    assert cancelled.stdout.strip() in {"FINISHING", "CANCELED"}
    assert (code, out.splitlines()[-1]) == (0, f"lockgate: job '{NAME}' CANCELED")
