"""Arrival: a record a modelled source emits, with the times its latency is measured from."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Arrival"]


@dataclass(frozen=True, slots=True)
class Arrival:
    """One modelled record: its place in its split, its key, and when it came.

    ``event_time`` is when the record was meant to arrive (its arrival process says so),
    ``admitted_at`` when the source handed it to the job: later when the job backpressures
    the source. A modelled sink measures in-engine latency from ``admitted_at`` and
    event-time lag from ``event_time``, so waiting outside the job is counted (no
    coordinated omission). Functions between source and sink keep an arrival measurable by
    passing it on, or ``dataclasses.replace(arrival, value=...)``.
    """

    seq: int
    key: Any
    event_time: float
    admitted_at: float
    value: Any = None
