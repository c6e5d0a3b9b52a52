from __future__ import annotations

import importlib.util
import subprocess
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType

import pytest

EXAMPLES = Path(__file__).parents[2] / "examples"


def load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # as when run: its classes can be pickled into checkpoints
    spec.loader.exec_module(module)
    return module


def expected_top(module: ModuleType, path: Path, top: int) -> list[tuple[str, int]]:
    counts = Counter(w for line in path.read_text().splitlines() for w in module.split_words(line))
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:top]


@pytest.mark.parametrize("parallelism", [1, 2, 4])
async def test_word_count_finds_the_same_top_words_as_a_plain_count(parallelism: int) -> None:
    word_count = load("word_count")

    top = await word_count.word_count(word_count.DEFAULT_TEXT, 20, parallelism)

    assert top == expected_top(word_count, word_count.DEFAULT_TEXT, 20)


@pytest.mark.parametrize("script", sorted(p.name for p in EXAMPLES.glob("*.py")))
def test_every_example_runs_to_completion_as_a_script(script: str) -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / script)], capture_output=True, text=True, timeout=120
    )

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip()


def test_word_count_script_prints_the_top_words() -> None:
    word_count = load("word_count")

    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "word_count.py"), "--top", "3"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )

    lines = done.stdout.splitlines()
    printed = [(line.split()[1], int(line.split()[0])) for line in lines[1:]]
    assert printed == expected_top(word_count, word_count.DEFAULT_TEXT, 3)
