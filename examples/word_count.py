"""Word count: read a text file, count each word with keyed state, print the top words.

Run it with ``make run``, or ``python examples/word_count.py PATH [--top N] [--parallelism P]``.

With ``--output DIR`` the running ``[word, count]`` pairs go, exactly once, to JSON-lines part
files in ``DIR`` (a ``FileSink``). Add ``--checkpoints DIR`` to checkpoint there every 0.05 s:
a run that finds a completed checkpoint in ``DIR`` resumes from it, so a run killed at any
moment and started again with the same options ends with the same output as one that never
stopped — every running count of every word committed once.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio.to_thread
import orjson

from lockgate.connectors import CollectSink, FileSink, FileSource
from lockgate.engine import (
    FileSystemCheckpointStorage,
    RestartStrategy,
    Sink,
    StreamEnvironment,
    run,
)

WORD = re.compile(r"[a-z']+")
DEFAULT_TEXT = Path(__file__).parent / "data" / "canal_locks.txt"
JOB_NAME = "word-count"
CHECKPOINT_INTERVAL = 0.05

WordCount = tuple[str, int]


def split_words(line: str) -> list[str]:
    """Lower-case words of a line, without punctuation."""
    return WORD.findall(line.lower())


def build(env: StreamEnvironment, path: Path, sink: Sink[Any]) -> None:
    """Lines -> words -> (word, 1) -> key by word -> running count -> sink."""
    (
        env.from_source(FileSource(path), uid="lines")
        .flat_map(split_words, uid="words")
        .map(lambda word: (word, 1), uid="ones")
        .key_by(lambda pair: pair[0])
        .reduce(lambda a, b: (a[0], a[1] + b[1]), uid="counts")
        .sink_to(sink, uid="sink")
    )


def top_words(running_counts: Sequence[WordCount], top: int) -> list[WordCount]:
    """The ``top`` most frequent words, from the running counts the job emitted."""
    final: dict[str, int] = {}
    for word, count in running_counts:
        final[word] = max(count, final.get(word, 0))
    return sorted(final.items(), key=lambda item: (-item[1], item[0]))[:top]


async def word_count(path: Path, top: int = 10, parallelism: int = 2) -> list[WordCount]:
    """Count the words of ``path`` and return the ``top`` most frequent."""
    env = StreamEnvironment(parallelism=parallelism)
    sink: CollectSink[WordCount] = CollectSink()
    build(env, path, sink)
    await env.execute(JOB_NAME)
    return top_words(sink.results, top)


async def word_count_to_files(
    path: Path, output: Path, checkpoints: Path | None = None, top: int = 10, parallelism: int = 2
) -> list[WordCount]:
    """Write the running counts of ``path`` to part files in ``output``; return the top words.

    With ``checkpoints``, checkpoint there, and resume from its latest completed checkpoint
    if it has one. The top words come from every committed pair, of this run and the ones
    before it.
    """
    env = StreamEnvironment(parallelism=parallelism)
    if checkpoints is not None:
        env.enable_checkpointing(CHECKPOINT_INTERVAL)
        env.set_checkpoint_storage(FileSystemCheckpointStorage(checkpoints))
        env.set_restart_strategy(RestartStrategy.fixed_delay(attempts=3, delay=0.0))
    sink = FileSink(output, format="jsonl")
    build(env, path, sink)
    resumable = checkpoints is not None and await env.checkpoint_storage.latest(JOB_NAME)
    await env.execute(JOB_NAME, restore_from="latest" if resumable else None)
    final = await anyio.to_thread.run_sync(committed_final_counts, sink)
    return top_words(list(final.items()), top)


def committed_final_counts(sink: FileSink) -> dict[str, int]:
    """Each word's highest committed running count, read file by file; blocking."""
    final: dict[str, int] = {}
    for part_file in sink.part_files():
        for word, count in map(orjson.loads, part_file.read_bytes().splitlines()):
            final[word] = max(count, final.get(word, 0))
    return final


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", type=Path, default=DEFAULT_TEXT)
    parser.add_argument("--top", type=int, default=10)
    parser.add_argument("--parallelism", type=int, default=2)
    parser.add_argument("--output", type=Path, help="write running counts to part files here")
    parser.add_argument("--checkpoints", type=Path, help="checkpoint here; resume if possible")
    args = parser.parse_args(argv)
    if args.checkpoints is not None and args.output is None:
        parser.error("--checkpoints needs --output: only files keep counts across restarts")
    if args.output is None:
        counts = run(word_count, args.path, args.top, args.parallelism)
    else:
        counts = run(
            word_count_to_files,
            args.path,
            args.output,
            args.checkpoints,
            args.top,
            args.parallelism,
        )
    print(f"top {args.top} words of {args.path.name}:")
    for word, count in counts:
        print(f"{count:6d}  {word}")


if __name__ == "__main__":
    main()
