"""Jobs that ``lockgate run`` tests name as MODULE:ATTR."""

from __future__ import annotations

from lockgate.connectors import CollectionSource, CollectSink, PrintSink
from lockgate.engine import StreamEnvironment

SINK = CollectSink[int]()


def short(parallelism: int = 1) -> StreamEnvironment:
    """Ten numbers into SINK."""
    env = StreamEnvironment(parallelism=parallelism)
    env.from_source(CollectionSource(range(10)), uid="numbers").sink_to(SINK, uid="out")
    return env


def explode(value: int) -> int:
    if value == 3:
        raise ZeroDivisionError(f"boom at {value}")
    return value


def failing() -> StreamEnvironment:
    """A map that raises on 3."""
    env = StreamEnvironment()
    env.from_source(CollectionSource(range(10)), uid="numbers").map(explode, uid="fragile").sink_to(
        PrintSink(), uid="out"
    )
    return env


def without_parallelism() -> StreamEnvironment:
    return short()


def raising() -> StreamEnvironment:
    raise RuntimeError("no job today")


BUILT = short()
