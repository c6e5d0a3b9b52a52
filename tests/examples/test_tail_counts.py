"""examples/tail_counts.py: a growing log's word counts, read until "#end"."""

from __future__ import annotations

from pathlib import Path

from tests.examples.test_examples import load


def test_the_demo_counts_every_word_of_its_log_once(tmp_path: Path) -> None:
    tail_counts = load("tail_counts")

    counts = tail_counts.demo(tmp_path)

    assert counts == {
        "the": 4,
        "lock": 2,
        "keeper": 1,
        "opens": 1,
        "gate": 1,
        "boat": 1,
        "enters": 1,
    }
    assert tail_counts.committed_counts(tmp_path / "output")["the"] == [1, 2, 3, 4]


def test_only_complete_lines_are_read_and_the_end_marker_stops_reading(tmp_path: Path) -> None:
    tail_counts = load("tail_counts")
    log = tmp_path / "input.log"
    log.write_bytes(b"one\ntwo\n#end\nafter\nhalf a li")

    lines, offset = tail_counts.complete_lines(str(log), 0, 10)

    assert lines == ["one", "two", "#end"]
    assert offset == len(b"one\ntwo\n#end\n")
    assert tail_counts.complete_lines(str(log), offset + len(b"after\n"), 10) == ([], offset + 6)
