"""Word count: read a text file, count each word with keyed state, print the top words.

Run it with ``make run``, or ``python examples/word_count.py PATH [--top N] [--parallelism P]``.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence
from pathlib import Path

from lockgate.connectors import CollectSink, FileSource
from lockgate.engine import StreamEnvironment, run

WORD = re.compile(r"[a-z']+")
DEFAULT_TEXT = Path(__file__).parent / "data" / "canal_locks.txt"


def split_words(line: str) -> list[str]:
    """Lower-case words of a line, without punctuation."""
    return WORD.findall(line.lower())


def build(env: StreamEnvironment, path: Path, sink: CollectSink) -> None:
    """Lines -> words -> (word, 1) -> key by word -> running count -> sink."""
    (
        env.from_source(FileSource(path), uid="lines")
        .flat_map(split_words, uid="words")
        .map(lambda word: (word, 1), uid="ones")
        .key_by(lambda pair: pair[0])
        .reduce(lambda a, b: (a[0], a[1] + b[1]), uid="counts")
        .sink_to(sink, uid="collect")
    )


def top_words(running_counts: Sequence[tuple[str, int]], top: int) -> list[tuple[str, int]]:
    """The ``top`` most frequent words, from the running counts the job emitted."""
    final: dict[str, int] = {}
    for word, count in running_counts:
        final[word] = max(count, final.get(word, 0))
    return sorted(final.items(), key=lambda item: (-item[1], item[0]))[:top]


async def word_count(path: Path, top: int = 10, parallelism: int = 2) -> list[tuple[str, int]]:
    """Count the words of ``path`` and return the ``top`` most frequent."""
    env = StreamEnvironment(parallelism=parallelism)
    sink = CollectSink()
    build(env, path, sink)
    await env.execute("word-count")
    return top_words(sink.results, top)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", type=Path, default=DEFAULT_TEXT)
    parser.add_argument("--top", type=int, default=10)
    parser.add_argument("--parallelism", type=int, default=2)
    args = parser.parse_args(argv)
    counts = run(word_count, args.path, args.top, args.parallelism)
    print(f"top {args.top} words of {args.path.name}:")
    for word, count in counts:
        print(f"{count:6d}  {word}")


if __name__ == "__main__":
    main()
