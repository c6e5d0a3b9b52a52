"""Tail counts: count the words of lines appended to a log file, exactly once, until "#end".

A job for the ``lockgate`` command, configured by environment variables::

    export TAIL_COUNTS_INPUT=events.log TAIL_COUNTS_OUTPUT=counts TAIL_COUNTS_CHECKPOINTS=ckpts
    lockgate run examples/tail_counts.py:build --rest 127.0.0.1:8081 \\
        --savepoint-on-stop file:///tmp/savepoints

``build`` reads the file ``TAIL_COUNTS_INPUT`` names as it grows (a ``TailSource``: the lines
written so far, then it waits for more; the line ``#end`` ends the input), counts each word
with keyed state, and writes the running ``[word, count]`` pairs to JSON-lines part files in
``TAIL_COUNTS_OUTPUT`` (a ``FileSink``: exactly once), checkpointing every 0.2 s to
``TAIL_COUNTS_CHECKPOINTS``. Stopped with a savepoint and started again from it
(``lockgate run ... --restore FOLDER``), it goes on where it stopped: every running count of
every word is committed once.

Run as a script (``python examples/tail_counts.py``), it writes a short log ending with
``#end`` into a temporary folder, runs the job to its end, and prints the final counts.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio.to_thread
import orjson

from lockgate.connectors import FileSink
from lockgate.engine import (
    FileSystemCheckpointStorage,
    Source,
    SourceContext,
    SourceReader,
    SourceSplit,
    StreamEnvironment,
    run,
)

END = "#end"
POLL = 0.05  # seconds between two looks at a file that has no new line
WORD = re.compile(r"[a-z']+")


class TailSource(Source[str]):
    """The lines of a growing text file, resumable by byte offset; the line ``#end`` ends it.

    One split, the file; its position is ``{"offset": bytes, "ended": bool}``. A reader
    returns only complete lines (ended by a newline), waits ``POLL`` seconds on the job's
    clock whenever there is none, and ends its input at ``#end``.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)

    def create_splits(self, parallelism: int) -> list[SourceSplit]:
        return [SourceSplit(self.path, {"offset": 0, "ended": False})]

    def create_reader(self, splits: Sequence[SourceSplit], context: SourceContext) -> TailReader:
        return TailReader(list(splits), context)


class TailReader(SourceReader[str]):
    """Reads its split (if it has one) from its offset, in a worker thread."""

    def __init__(self, splits: list[SourceSplit], context: SourceContext) -> None:
        self.split = splits[0] if splits else None
        self.clock = context.clock

    async def read(self, max_records: int) -> list[str]:
        while self.split is not None and not self.split.position["ended"]:
            position = self.split.position
            lines, offset = await anyio.to_thread.run_sync(
                complete_lines, self.split.split_id, position["offset"], max_records
            )
            ended = END in lines
            lines = lines[: lines.index(END)] if ended else lines
            self.split = SourceSplit(self.split.split_id, {"offset": offset, "ended": ended})
            if lines:
                return lines
            if not ended:
                await self.clock.sleep(POLL)
        return []

    def snapshot_splits(self) -> list[SourceSplit]:
        return [] if self.split is None else [self.split]


def complete_lines(path: str, offset: int, max_lines: int) -> tuple[list[str], int]:
    """Up to ``max_lines`` complete lines of ``path`` from ``offset``, and the offset after.

    Stops after an ``#end`` line; blocking.
    """
    lines: list[str] = []
    try:
        with open(path, "rb") as file:
            file.seek(offset)
            while len(lines) < max_lines and (line := file.readline()).endswith(b"\n"):
                offset += len(line)
                lines.append(line.decode().rstrip("\r\n"))
                if lines[-1] == END:
                    break
    except FileNotFoundError:
        pass  # not written yet: no line so far
    return lines, offset


def split_words(line: str) -> list[str]:
    """Lower-case words of a line, without punctuation."""
    return WORD.findall(line.lower())


def build(parallelism: int = 2, *, folder: Path | None = None) -> StreamEnvironment:
    """The job: its files in ``folder``, else where the variables ``TAIL_COUNTS_*`` say."""
    default = folder or Path(tempfile.gettempdir()) / "tail_counts"
    variables = {} if folder else os.environ
    source = variables.get("TAIL_COUNTS_INPUT", str(default / "input.log"))
    output = variables.get("TAIL_COUNTS_OUTPUT", str(default / "output"))
    checkpoints = variables.get("TAIL_COUNTS_CHECKPOINTS", str(default / "checkpoints"))
    env = StreamEnvironment(parallelism=parallelism)
    env.enable_checkpointing(0.2)
    env.set_checkpoint_storage(FileSystemCheckpointStorage(checkpoints))
    (
        env.from_source(TailSource(source), uid="lines", parallelism=1)
        .flat_map(split_words, uid="words", parallelism=1)
        .map(lambda word: (word, 1), uid="ones", parallelism=1)
        .key_by(lambda pair: pair[0])
        .reduce(lambda a, b: (a[0], a[1] + b[1]), uid="counts")
        .sink_to(FileSink(output, format="jsonl"), uid="sink")
    )
    return env


def committed_counts(output: str | os.PathLike[str]) -> dict[str, list[int]]:
    """Each word's committed running counts, in increasing order; blocking."""
    counts: dict[str, list[int]] = {}
    for part in sorted(Path(output).glob("[!.]*.jsonl")):
        for word, count in map(orjson.loads, part.read_bytes().splitlines()):
            counts.setdefault(word, []).append(count)
    return {word: sorted(values) for word, values in counts.items()}


def demo(folder: Path) -> dict[str, Any]:
    """Write a short log ending with ``#end`` in ``folder``, run the job, return final counts."""
    lines = ["the lock keeper opens the gate", "the boat enters the lock", END]
    (folder / "input.log").write_text("".join(f"{line}\n" for line in lines))
    run(build(folder=folder).execute, "tail_counts")
    return {word: values[-1] for word, values in committed_counts(folder / "output").items()}


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as folder:
        for word, count in sorted(demo(Path(folder)).items(), key=lambda item: -item[1]):
            print(f"{count:3d}  {word}")
