"""count_window(size, slide): Flink's sliding count windows, as Flink builds them."""

from __future__ import annotations

from typing import Any

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import StreamEnvironment
from tests.engine.jobs.windows import Seen

NUMBERS = [(f"k{n % 2}", float(n), n) for n in range(14)]


async def count_windows(size: int, slide: int | None, how: str = "process") -> list[Any]:
    env, sink = StreamEnvironment(parallelism=2), CollectSink[Any]()
    windowed = (
        env.from_source(CollectionSource(NUMBERS), uid="numbers", parallelism=1)
        .key_by(lambda event: event[0])
        .count_window(size, slide)
    )
    if how == "process":
        windowed.process(Seen(), uid="windows").sink_to(sink, uid="out")
    else:
        windowed.reduce(lambda a, b: (a[0], b[1], a[2] + b[2]), uid="sums").sink_to(sink, uid="out")
    await env.execute("count-windows")
    return sorted(sink.results)


def sliding(size: int, slide: int) -> list[tuple[str, list[int]]]:
    """Per key, every ``slide`` records, the last ``size`` of them: a plain loop."""
    found = []
    for key in ("k0", "k1"):
        values = [n for k, _, n in NUMBERS if k == key]
        for seen in range(slide, len(values) + 1, slide):
            found.append((key, values[max(0, seen - size) : seen]))
    return found


async def test_sliding_count_windows_emit_the_last_size_records_every_slide_records() -> None:
    results = await count_windows(3, 2)

    assert [(key, values) for key, _, _, values in results] == sorted(sliding(3, 2))
    assert ("k0", [0, 2]) in [(key, values) for key, _, _, values in results]  # fewer at first


async def test_sliding_count_windows_reduce_the_records_the_evictor_keeps() -> None:
    results = await count_windows(4, 1, how="reduce")

    expected = sorted((key, sum(values)) for key, values in sliding(4, 1))
    assert sorted((key, total) for key, _, total in results) == expected


async def test_a_count_window_without_slide_emits_each_size_records_once() -> None:
    results = await count_windows(3, None)

    assert [(key, values) for key, _, _, values in results] == sorted(sliding(3, 3))
