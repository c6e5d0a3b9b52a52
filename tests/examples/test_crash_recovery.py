"""The word-count example, killed with SIGKILL at seeded random moments and started again each
time, commits exactly the running counts a run without failures commits: each once."""

from __future__ import annotations

import importlib.util
import random
import signal
import subprocess
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import orjson
import pytest

from lockgate.connectors import FileSink

EXAMPLE = Path(__file__).parents[2] / "examples" / "word_count.py"
KILLS = 5
SEED = 1_170
REPEATS = 6_000  # copies of the shipped text: a run of several seconds
DEADLINE = 30.0  # seconds a run may take to complete a checkpoint


def load_example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("word_count", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def start(text: Path, output: Path, checkpoints: Path, log: Path) -> subprocess.Popen[bytes]:
    command = [sys.executable, str(EXAMPLE), str(text), "--output", str(output)]
    with log.open("ab") as stderr:
        return subprocess.Popen(
            [*command, "--checkpoints", str(checkpoints)], stdout=subprocess.DEVNULL, stderr=stderr
        )


def latest_checkpoint(checkpoints: Path) -> int:
    """The id of the newest completed checkpoint (0 for none): a folder holding metadata."""
    return max(
        (int(path.parent.name.removeprefix("chk-")) for path in checkpoints.glob("*/*/_metadata")),
        default=0,
    )


def wait_for_checkpoint_after(checkpoints: Path, seen: int, run: subprocess.Popen[bytes]) -> None:
    # Another OS process writes the checkpoints, so there is no event to wait on: poll the
    # folder, briefly and within a deadline.
    deadline = time.monotonic() + DEADLINE
    while latest_checkpoint(checkpoints) <= seen:
        assert run.poll() is None, "the run ended before it completed a checkpoint"
        assert time.monotonic() < deadline, "no checkpoint completed within the deadline"
        time.sleep(0.01)


def kill_at_random_moments(text: Path, output: Path, checkpoints: Path, log: Path) -> list[int]:
    """Start the job KILLS times, each killed a random moment after a new checkpoint."""
    moments = random.Random(SEED)
    return_codes = []
    for _ in range(KILLS):
        seen = latest_checkpoint(checkpoints)
        run = start(text, output, checkpoints, log)
        wait_for_checkpoint_after(checkpoints, seen, run)
        time.sleep(moments.uniform(0.0, 0.25))
        run.send_signal(signal.SIGKILL)
        return_codes.append(run.wait())
    return return_codes


def final_counts(word_count: ModuleType, text: Path) -> dict[str, int]:
    """How often each word occurs: a plain Python count."""
    lines = text.read_text().splitlines()
    return Counter(word for line in lines for word in word_count.split_words(line))


def committed_counts(output: Path) -> dict[str, list[int]]:
    """Every running count committed for each word, in the order read."""
    counts: dict[str, list[int]] = defaultdict(list)
    for part_file in FileSink(output, format="jsonl").part_files():
        for word, count in map(orjson.loads, part_file.read_bytes().splitlines()):
            counts[word].append(count)
    return counts


@dataclass(frozen=True)
class KilledRuns:
    """Five runs killed, then a sixth that ran to its end, and where they wrote."""

    text: Path
    output: Path
    checkpoints: Path
    return_codes: list[int]


@pytest.fixture(scope="module")
def killed_five_times(tmp_path_factory: pytest.TempPathFactory) -> KilledRuns:
    tmp_path = tmp_path_factory.mktemp("killed")
    text = tmp_path / "text.txt"
    text.write_text(load_example().DEFAULT_TEXT.read_text() * REPEATS)
    output, checkpoints, log = tmp_path / "output", tmp_path / "checkpoints", tmp_path / "log"

    return_codes = kill_at_random_moments(text, output, checkpoints, log)
    last = start(text, output, checkpoints, log)

    assert last.wait(timeout=60) == 0, log.read_text()
    return KilledRuns(text, output, checkpoints, return_codes)


def test_word_count_killed_five_times_commits_exactly_the_failure_free_output(
    killed_five_times: KilledRuns,
) -> None:
    runs = killed_five_times
    assert runs.return_codes == [-signal.SIGKILL] * KILLS, "a run ended before it was killed"
    # a run without failures commits each word with each count 1..total once
    totals = final_counts(load_example(), runs.text)
    committed = committed_counts(runs.output)
    assert sorted(committed) == sorted(totals)
    inexact = [w for w, total in totals.items() if sorted(committed[w]) != [*range(1, total + 1)]]
    assert inexact == [], f"words whose running counts are not 1..total once each: {inexact}"
    assert [path.name for path in runs.output.iterdir() if path.name.startswith(".")] == []


def test_word_count_killed_five_times_keeps_only_its_retained_checkpoint(
    killed_five_times: KilledRuns,
) -> None:
    # max_retained is 1: each run restored from "latest" took the checkpoint it restored over
    assert [path.parent.name for path in killed_five_times.checkpoints.glob("*/*/_metadata")] == [
        f"chk-{latest_checkpoint(killed_five_times.checkpoints)}"
    ]
