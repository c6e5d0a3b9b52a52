"""The lockgate command: ``savepoint inspect`` and ``savepoint check``, with their exit codes."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import orjson
import pytest

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import (
    KeyedProcessFunction,
    ListStateDescriptor,
    RuntimeContext,
    StreamEnvironment,
    run,
)
from lockgate.engine.api.cli import EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE, main
from tests.engine.checkpointing.test_metadata import resealed
from tests.engine.restore.test_reader import MAX_PARALLELISM, write_snapshot

ROOT = Path(__file__).parents[4]
THIS = "tests.engine.api.cli.test_savepoint"


def sums_job(*, with_sums: bool = True, parallelism: int = 2) -> StreamEnvironment:
    """The job test_reader's savepoint belongs to: numbers -> sums -> out."""
    env = StreamEnvironment(parallelism=parallelism, max_parallelism=MAX_PARALLELISM)
    numbers = env.from_source(CollectionSource(range(10)), uid="numbers")
    if with_sums:
        numbers = numbers.key_by(lambda n: n % 3).reduce(lambda a, b: a + b, uid="sums")
    numbers.sink_to(CollectSink(), uid="out")
    return env


def job_without_sums() -> StreamEnvironment:
    return sums_job(with_sums=False)


class LastAsList(KeyedProcessFunction[int, int, int]):
    """Declares in open() the state 'last', a value state in the savepoint, as a list state."""

    def open(self, context: RuntimeContext) -> None:
        self.last = context.get_list_state(ListStateDescriptor[int]("last"))

    def process_element(self, value: int, ctx: Any) -> Iterator[int]:
        yield value


def job_with_last_as_list() -> StreamEnvironment:
    env = StreamEnvironment(parallelism=2, max_parallelism=MAX_PARALLELISM)
    env.from_source(CollectionSource(range(10)), uid="numbers").key_by(lambda n: n % 3).process(
        LastAsList(), uid="sums"
    ).sink_to(CollectSink(), uid="out")
    return env


SUMS = sums_job()
RESCALED = sums_job(parallelism=4)
NOT_A_JOB = 42


@pytest.fixture
def savepoint(tmp_path: Path) -> str:
    return run(write_snapshot, tmp_path)  # the command runs in its own loop, as here


@pytest.fixture
def checkpoint(tmp_path: Path) -> str:
    return run(partial(write_snapshot, tmp_path, savepoint=False))


def one_error_line(err: str) -> str:
    assert "Traceback" not in err
    [line] = err.strip().splitlines()
    return line


def test_inspect_prints_the_job_the_id_the_kind_and_the_max_parallelism(
    savepoint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(["savepoint", "inspect", savepoint])

    out = capsys.readouterr().out
    assert status == EXIT_OK
    assert "job:             sums\ncheckpoint id:   7\ntype:            savepoint\n" in out
    assert f"max parallelism: {MAX_PARALLELISM}\n" in out


def test_inspect_prints_every_operator_with_its_states_kinds_counts_and_bytes(
    savepoint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["savepoint", "inspect", savepoint])

    lines = capsys.readouterr().out.splitlines()
    sums = lines.index(next(line for line in lines if line.startswith("operator 'sums'")))
    assert lines[sums].startswith("operator 'sums': parallelism 2, ")
    assert lines[sums].endswith(" bytes")
    assert lines[sums + 1 : sums + 3] == [
        "  total: keyed reducing, 3 keys",
        "  last: keyed value, 1 key",
    ]
    assert "  __splits__: operator list, 2 entries" in lines
    assert lines[lines.index("operator 'out': parallelism 2, 0 bytes") + 1] == "  no state"


def test_inspect_json_is_machine_readable(
    savepoint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["savepoint", "inspect", savepoint, "--json"])

    summary = orjson.loads(capsys.readouterr().out)
    assert (summary["job_name"], summary["checkpoint_id"], summary["is_savepoint"]) == (
        "sums",
        7,
        True,
    )
    sums = next(op for op in summary["operators"] if op["uid"] == "sums")
    assert (sums["parallelism"], sums["key_count"]) == (2, 3)
    assert {"name": "total", "kind": "keyed reducing", "count": 3} in sums["states"]


def test_inspect_refuses_a_pickled_checkpoint_without_allow_pickle(
    checkpoint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(["savepoint", "inspect", checkpoint])

    assert status == EXIT_USAGE
    assert "--allow-pickle" in one_error_line(capsys.readouterr().err)


def test_inspect_opens_a_pickled_checkpoint_with_allow_pickle(
    checkpoint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(["savepoint", "inspect", checkpoint, "--allow-pickle"])

    assert status == EXIT_OK
    assert "type:            checkpoint" in capsys.readouterr().out


def test_inspect_of_a_missing_savepoint_is_one_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(["savepoint", "inspect", str(tmp_path / "nothing")])

    assert status == EXIT_USAGE
    assert one_error_line(capsys.readouterr().err).startswith("lockgate: error: no checkpoint")


def test_inspect_json_of_an_id_of_309_digits_is_one_error_line_naming_the_file(
    savepoint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    metadata = Path(savepoint)
    content = orjson.dumps(orjson.loads(metadata.read_bytes())["content"])
    huge = b'"checkpoint_id":1' + b"0" * 308
    metadata.write_bytes(resealed(content.replace(b'"checkpoint_id":7', huge)))

    status = main(["savepoint", "inspect", savepoint, "--json"])

    assert status == EXIT_USAGE
    line = one_error_line(capsys.readouterr().err)
    assert f"{metadata} is corrupt" in line
    assert "checkpoint_id must be an integer" in line


def test_check_of_the_same_job_succeeds_and_prints_the_mapping(
    savepoint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(["savepoint", "check", savepoint, "--job", f"{THIS}:SUMS"])

    out = capsys.readouterr().out
    assert status == EXIT_OK
    assert "  'sums': parallelism 2 -> 2\n" in out
    assert out.endswith("the restore would succeed\n")


def test_check_reports_rescaled_operators(
    savepoint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(["savepoint", "check", savepoint, "--job", f"{THIS}:RESCALED"])

    assert status == EXIT_OK
    assert "  'sums': parallelism 2 -> 4 (rescaled)\n" in capsys.readouterr().out


def test_check_fails_with_state_for_an_operator_the_job_lost(
    savepoint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(["savepoint", "check", savepoint, "--job", f"{THIS}:job_without_sums"])

    out = capsys.readouterr().out
    assert status == EXIT_PROBLEMS
    assert "'sums': parallelism 2 -> no such operator, state not restored" in out
    assert "the restore would fail (1 problem):" in out
    assert "  - savepoint 7 holds state for operator 'sums'" in out


def test_check_with_allow_non_restored_state_drops_that_state_and_succeeds(
    savepoint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["savepoint", "check", savepoint, "--job", f"{THIS}:job_without_sums"]

    status = main([*argv, "--allow-non-restored-state"])

    assert status == EXIT_OK
    assert "'sums': parallelism 2 -> no such operator, state dropped" in capsys.readouterr().out


def test_check_opens_the_functions_and_fails_for_a_state_declared_as_another_kind(
    savepoint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(["savepoint", "check", savepoint, "--job", f"{THIS}:job_with_last_as_list"])

    out = capsys.readouterr().out
    assert status == EXIT_PROBLEMS
    assert "the restore would succeed" not in out
    assert "the restore would fail (1 problem):" in out
    assert (
        "  - operator 'sums': state 'last' was restored as value state but is declared as "
        "list state;" in out
    )


def test_check_fails_for_a_state_file_that_cannot_be_read(
    savepoint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    state_file = next(Path(savepoint).parent.glob("sums-1"))
    state_file.write_bytes(state_file.read_bytes()[:-1])

    status = main(["savepoint", "check", savepoint, "--job", f"{THIS}:SUMS"])

    out = capsys.readouterr().out
    assert status == EXIT_PROBLEMS
    assert f"  - checkpoint file {state_file} is corrupt: it holds " in out


def test_check_of_a_pickled_checkpoint_from_elsewhere_fails_as_its_restore_would(
    checkpoint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(["savepoint", "check", checkpoint, "--job", f"{THIS}:SUMS"])

    assert status == EXIT_PROBLEMS
    assert "is pickled, as checkpoints are" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("job", "message"),
    [
        ("no_colon", "is not MODULE:ATTR"),
        ("no_such_module_for_lockgate:env", "cannot import the module"),
        (f"{THIS}:MISSING", "has no 'MISSING'"),
        (f"{THIS}:NOT_A_JOB", "is a int, not a StreamEnvironment"),
    ],
)
def test_check_with_a_bad_job_is_a_usage_error(
    savepoint: str, capsys: pytest.CaptureFixture[str], job: str, message: str
) -> None:
    status = main(["savepoint", "check", savepoint, "--job", job])

    assert status == EXIT_USAGE
    assert message in one_error_line(capsys.readouterr().err)


@pytest.fixture
def job_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "lockgate_cli_job.py").write_text(
        f"from {THIS} import sums_job\n\ndef build():\n    return sums_job()\n"
    )
    monkeypatch.chdir(folder)
    yield "lockgate_cli_job"
    sys.modules.pop("lockgate_cli_job", None)


def test_check_imports_the_job_module_from_the_current_folder(
    savepoint: str, job_module: str, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(["savepoint", "check", savepoint, "--job", f"{job_module}:build"])

    assert status == EXIT_OK
    assert str(Path.cwd()) not in sys.path  # it was searched, then taken off the path again


def test_a_missing_command_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["savepoint"])

    assert status == EXIT_USAGE
    assert "Usage: lockgate savepoint" in capsys.readouterr().err


def test_python_m_runs_the_command(savepoint: str) -> None:
    command = [sys.executable, "-m", "lockgate.engine.api.cli"]

    done = subprocess.run(
        [*command, "savepoint", "check", savepoint, "--job", f"{THIS}:job_without_sums"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )

    assert done.returncode == EXIT_PROBLEMS
    assert "holds state for operator 'sums'" in done.stdout


def test_the_installed_lockgate_script_runs_the_command(savepoint: str) -> None:
    script = Path(sys.executable).with_name("lockgate")

    done = subprocess.run(
        [str(script), "savepoint", "inspect", savepoint, "--json"],
        capture_output=True,
        text=True,
        check=False,
    )

    assert done.returncode == EXIT_OK
    assert orjson.loads(done.stdout)["job_name"] == "sums"
