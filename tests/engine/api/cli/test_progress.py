"""The progress bar of ``lockgate run``: what it counts, and where it is drawn."""

from __future__ import annotations

import os
import pty
import re
import selectors
import subprocess
from collections.abc import Sequence
from typing import Any

import pytest

from lockgate.connectors import CollectionSource
from lockgate.engine import Source, SourceContext, SourceProgress, SourceReader, SourceSplit
from lockgate.engine.api.cli import EXIT_OK, main
from lockgate.engine.api.cli.progress import overall_progress
from tests.engine.jobs.basic import EndlessSource
from tests.engine.jobs.cli import DEADLINE, LOCKGATE, ROOT

SHORT = "tests.engine.api.cli.jobs:short"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


class Sized(Source[Any]):
    """A source that reports a fixed progress and reads nothing."""

    def __init__(self, progress: SourceProgress | None) -> None:
        self._progress = progress

    def progress(self) -> SourceProgress | None:
        return self._progress

    def create_splits(self, parallelism: int) -> list[SourceSplit]:
        return []

    def create_reader(
        self, splits: Sequence[SourceSplit], context: SourceContext
    ) -> SourceReader[Any]:
        raise NotImplementedError


def test_sources_of_one_unit_add_up() -> None:
    sources = [Sized(SourceProgress(3, 10, "records")), Sized(SourceProgress(2, 5, "records"))]

    assert overall_progress(sources) == SourceProgress(5, 15, "records")


def test_sources_of_several_units_count_the_mean_of_their_fractions_in_percent() -> None:
    sources = [Sized(SourceProgress(5, 10, "records")), Sized(SourceProgress(0, 100, "bytes"))]

    assert overall_progress(sources) == SourceProgress(25, 100, "%")


@pytest.mark.parametrize("other", [Sized(None), EndlessSource()], ids=["size unknown", "unbounded"])
def test_a_job_with_a_source_that_does_not_know_its_size_has_no_progress(other: Any) -> None:
    assert overall_progress([CollectionSource(range(3)), other]) is None


def test_no_bar_is_drawn_when_the_output_is_not_a_terminal(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["run", SHORT]) == EXIT_OK

    assert "records" not in capsys.readouterr().out


def test_progress_draws_the_last_state_also_when_the_output_is_not_a_terminal(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["run", SHORT, "--progress"]) == EXIT_OK

    [bar] = [line for line in capsys.readouterr().out.splitlines() if "records" in line]
    assert bar.startswith("job 'jobs' ")
    assert bar.endswith(" 10/10 records")


def test_on_a_terminal_the_bar_is_drawn_without_being_asked() -> None:
    controller, terminal = pty.openpty()
    with subprocess.Popen(
        [LOCKGATE, "run", SHORT], cwd=ROOT, stdout=terminal, stderr=subprocess.DEVNULL
    ) as process:
        os.close(terminal)
        shown = ANSI.sub("", read_all(controller).decode())
        assert process.wait(timeout=DEADLINE) == 0

    assert "job 'jobs' " in shown
    assert "10/10 records" in shown


def read_all(fd: int) -> bytes:
    """Everything the other side writes until it closes; each read waits DEADLINE at most."""
    output = b""
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while True:
            assert selector.select(DEADLINE), f"nothing more after {output!r}"
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # the terminal's other side closed: everything was read
                break
            if not chunk:
                break
            output += chunk
    os.close(fd)
    return output
