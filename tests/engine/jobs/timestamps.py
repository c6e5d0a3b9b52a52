"""Test doubles for timestamps on records: a probe that emits each record with its timestamp.

Sinks get values alone, so a test reads timestamps with ``stamps_of(stream)``: a process
function over the stream (keyed by one key) that emits ``(value, ctx.timestamp())``.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

from lockgate.engine import (
    DataStream,
    KeyedProcessFunction,
    ProcessContext,
    WatermarkStrategy,
)

Event = tuple[str, float, int]  # (key, event time, value)
DISORDER = 3.0
BY_TIME = WatermarkStrategy.for_bounded_out_of_orderness(DISORDER).with_timestamp_assigner(
    lambda event: event[1]
)


class Stamps(KeyedProcessFunction[Any, Any, tuple[Any, float | None]]):
    """Emits each record with the timestamp it carries: ``(record, ctx.timestamp())``."""

    def process_element(
        self, value: Any, ctx: ProcessContext[Any]
    ) -> Iterator[tuple[Any, float | None]]:
        yield value, ctx.timestamp()


def stamps_of(stream: DataStream[Any], uid: str = "stamps") -> DataStream[Any]:
    """``stream``'s records as ``(record, timestamp)`` pairs."""
    return stream.key_by(lambda _: 0).process(Stamps(), uid=uid)


def events(count: int, *, keys: int = 4, seed: int = 1, start: float = 0.0) -> list[Event]:
    """Events 0.25 s apart over ``keys`` keys, shuffled by less than ``DISORDER`` seconds."""
    draw = random.Random(seed)
    timed = [
        (start + n * 0.25 + draw.uniform(0, DISORDER - 0.01), (f"k{n % keys}", start + n * 0.25, n))
        for n in range(count)
    ]
    return [event for _, event in sorted(timed)]
