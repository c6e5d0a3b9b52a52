"""Sessions by inactivity: event time, per-key timers and a side output for late clicks.

A clickstream of ``(user, time)`` events arrives up to ``DISORDER`` seconds out of order. A
``KeyedProcessFunction`` keeps each user's open session in keyed state and sets an
event-time timer ``GAP`` seconds after the user's latest click; when the watermark reaches
it with no newer click, the session is closed and emitted. A click behind the watermark
(its session may be closed already) goes to the side output ``LATE`` instead. Sessions and
late clicks go to transactional ``CollectSink``s; the job checkpoints every 0.1 s.

Run it with ``python examples/inactive_sessions.py [--users N] [--clicks N]``; it prints the
sessions per user and the late clicks.
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Sequence
from typing import Any, NamedTuple

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import (
    KeyedProcessFunction,
    OutputTag,
    ProcessContext,
    RuntimeContext,
    StreamEnvironment,
    ValueStateDescriptor,
    WatermarkStrategy,
    run,
)

GAP = 30.0  # seconds of event time without a click that close a session
DISORDER = 2.0  # how far out of order clicks may arrive and still count
LATE = OutputTag[tuple[int, float]]("late-clicks")

Click = tuple[int, float]  # (user, event time in seconds)


class Session(NamedTuple):
    """A user's clicks with no gap of ``GAP`` seconds or more between them."""

    user: int
    start: float
    end: float
    clicks: int


def clickstream(users: int, clicks: int, *, late: int = 5, seed: int = 3) -> list[Click]:
    """``clicks`` clicks in bursts, shuffled within ``DISORDER``; the last ``late`` replayed.

    The replayed ones (a client retrying clicks from the start) arrive last with event time
    0.5, behind any watermark by then.
    """
    draw = random.Random(seed)
    times = [0.0] * users
    stream: list[tuple[float, Click]] = []
    for _ in range(clicks):
        user = draw.randrange(users)
        pause = draw.choice((1.0, 2.0, 5.0, 45.0))  # now and then a gap: a new session
        times[user] += pause
        arrival = times[user] + draw.uniform(0.0, DISORDER)
        stream.append((arrival, (user, times[user])))
    ordered = [click for _, click in sorted(stream)]
    return ordered + [(user, 0.5) for user in range(late)]


class CloseInactiveSessions(KeyedProcessFunction[int, Click, Session]):
    """Per user: the open session in keyed state; a timer ``GAP`` after its latest click."""

    def open(self, context: RuntimeContext) -> None:
        self.session = context.get_state(ValueStateDescriptor[Session]("session"))

    def process_element(self, value: Click, ctx: ProcessContext[int]) -> list[Session]:
        user, time = value
        if time <= ctx.current_watermark():
            ctx.output(LATE, value)
            return []
        session, closed = self.session.value(), []
        if session is not None and time >= session.end + GAP:
            closed, session = [session], None  # over, though the watermark is not there yet
        if session is None:
            session = Session(user, time, time, 0)
        latest = max(session.end, time)
        self.session.update(Session(user, min(session.start, time), latest, session.clicks + 1))
        ctx.timer_service().register_event_time_timer(latest + GAP)
        return closed

    def on_timer(self, timestamp: float, ctx: ProcessContext[int]) -> list[Session]:
        session = self.session.value()
        if session is None or timestamp != session.end + GAP:
            return []  # a newer click moved the session's end
        self.session.clear()
        return [session]


def sessions_of(clicks: Sequence[Click]) -> list[Session]:
    """The sessions a plain loop finds in ``clicks`` (no late ones among them), sorted."""
    by_user: dict[int, list[float]] = {}
    for user, time in clicks:
        by_user.setdefault(user, []).append(time)
    sessions = []
    for user, times in by_user.items():
        times.sort()
        start = previous = times[0]
        count = 0
        for time in times:
            if time - previous >= GAP:
                sessions.append(Session(user, start, previous, count))
                start, count = time, 0
            previous, count = time, count + 1
        sessions.append(Session(user, start, previous, count))
    return sorted(sessions)


async def find_sessions(users: int, clicks: int) -> tuple[list[Session], list[Click]]:
    """Run the job; return the committed sessions (sorted) and late clicks."""
    env = StreamEnvironment(parallelism=2, batch_size=64, auto_watermark_interval=0.0)
    env.enable_checkpointing(0.1)
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(DISORDER).with_timestamp_assigner(
        lambda click: click[1]
    )
    sessions, late = CollectSink[Session](), CollectSink[Click]()
    closed = (
        env.from_source(
            CollectionSource(clickstream(users, clicks)),
            uid="clicks",
            parallelism=1,
            watermark_strategy=strategy,
        )
        .key_by(lambda click: click[0])
        .process(CloseInactiveSessions(), uid="sessions")
    )
    closed.sink_to(sessions, uid="closed-sessions")
    closed.side_output(LATE).sink_to(late, uid="late-clicks")
    await env.execute("inactive-sessions")
    return sorted(sessions.results), sorted(late.results)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=20)
    parser.add_argument("--clicks", type=int, default=5_000)
    args = parser.parse_args(argv)
    sessions, late = run(find_sessions, args.users, args.clicks)
    per_user: dict[int, int] = {}
    for session in sessions:
        per_user[session.user] = per_user.get(session.user, 0) + 1
    print(f"{len(sessions):,} sessions of {args.users} users from {args.clicks:,} clicks")
    for user, count in sorted(per_user.items()):
        print(f"  user {user:>3}: {count} sessions")
    print(f"late clicks (behind the watermark, in the side output): {describe(late)}")


def describe(late: Sequence[Any]) -> str:
    """The late clicks as ``user@time`` items."""
    return ", ".join(f"{user}@{time:g}" for user, time in late) or "none"


if __name__ == "__main__":
    main()
