"""Page views per minute and per five minutes: event-time windows with late views set aside.

Page views ``(page, time)`` arrive up to ``DISORDER`` seconds out of order, and a few much
later (a mobile client that was offline). A watermark strategy with bounded
out-of-orderness gives the windows their event time; per page, a tumbling window counts the
views of each minute (``aggregate``), and a sliding window the views of the last five
minutes, every minute (``process``, which also sees the window's bounds). Views that come
after their minute is closed, plus ``LATENESS`` seconds, go to a side output instead of
being lost. Everything goes to transactional sinks; the job checkpoints every 0.1 s.

Run it with ``python examples/page_views.py [--views N]``; it prints the busiest minutes
and how many views came too late.
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Iterator, Sequence

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import (
    AggregateFunction,
    OutputTag,
    ProcessWindowFunction,
    SlidingEventTimeWindows,
    StreamEnvironment,
    TimeWindow,
    TumblingEventTimeWindows,
    WatermarkStrategy,
    WindowContext,
    run,
)

PAGES = ("/", "/pricing", "/docs", "/blog")
DISORDER = 5.0  # seconds views may arrive out of order and still count
LATENESS = 10.0  # seconds a closed minute still takes late views
LATE = OutputTag[tuple[str, float]]("late-views")

View = tuple[str, float]  # (page, event time in seconds)
Count = tuple[str, float, int]  # (page, window start, views)


def page_views(count: int, *, offline: int = 4, seed: int = 7) -> list[View]:
    """``count`` views over about ``count / 10`` seconds, shuffled within ``DISORDER``.

    The last ``offline`` views happened at time 30 but arrive at the end, minutes late.
    """
    draw = random.Random(seed)
    arrivals = []
    for n in range(count):
        time = n / 10
        arrivals.append((time + draw.uniform(0, DISORDER), (draw.choice(PAGES), time)))
    views = [view for _, view in sorted(arrivals)]
    return views + [(PAGES[n % len(PAGES)], 30.0) for n in range(offline)]


class CountViews(AggregateFunction[View, tuple[str, float, int], Count]):
    """Counts the views of a page in a minute: ``(page, minute start, views)``."""

    def create_accumulator(self) -> tuple[str, float, int]:
        return ("", 0.0, 0)

    def add(self, value: View, accumulator: tuple[str, float, int]) -> tuple[str, float, int]:
        page, time = value
        return (page, time - time % 60.0, accumulator[2] + 1)

    def get_result(self, accumulator: tuple[str, float, int]) -> Count:
        return accumulator


class ViewsInWindow(ProcessWindowFunction[View, Count, str]):
    """Emits ``(page, window start, views)`` for a window of a page."""

    def process(self, key: str, context: WindowContext, elements: list[View]) -> Iterator[Count]:
        window = context.window
        assert isinstance(window, TimeWindow)
        yield (key, window.start, len(elements))


async def count_views(views: list[View]) -> tuple[list[Count], list[Count], list[View]]:
    """Run the job; return per-minute counts, five-minute counts and late views, sorted."""
    env = StreamEnvironment(parallelism=2, batch_size=128, auto_watermark_interval=0.0)
    env.enable_checkpointing(0.1)
    by_time = WatermarkStrategy.for_bounded_out_of_orderness(DISORDER).with_timestamp_assigner(
        lambda view: view[1]
    )
    per_minute, last_five, late = CollectSink[Count](), CollectSink[Count](), CollectSink[View]()
    keyed = env.from_source(
        CollectionSource(views), uid="views", parallelism=1, watermark_strategy=by_time
    ).key_by(lambda view: view[0])
    minutes = (
        keyed.window(TumblingEventTimeWindows.of(60.0))
        .allowed_lateness(LATENESS)
        .side_output_late_data(LATE)
        .aggregate(CountViews(), uid="views-per-minute")
    )
    minutes.sink_to(per_minute, uid="per-minute")
    minutes.side_output(LATE).sink_to(late, uid="late")
    (
        keyed.window(SlidingEventTimeWindows.of(300.0, 60.0))
        .process(ViewsInWindow(), uid="views-last-five-minutes")
        .sink_to(last_five, uid="last-five")
    )
    await env.execute("page-views")
    return sorted(per_minute.results), sorted(last_five.results), sorted(late.results)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--views", type=int, default=20_000)
    args = parser.parse_args(argv)
    per_minute, last_five, late = run(count_views, page_views(args.views))
    print(f"{args.views:,} page views, {len(per_minute)} page-minutes")
    for page, start, views in sorted(per_minute, key=lambda count: -count[2])[:5]:
        print(f"  {page:<9} minute {start / 60:>4.0f}: {views} views")
    busiest = max(last_five, key=lambda count: count[2])
    print(f"busiest five minutes: {busiest[0]} from minute {busiest[1] / 60:.0f}, {busiest[2]}")
    print(f"too late (in the side output): {len(late)} views")


if __name__ == "__main__":
    main()
