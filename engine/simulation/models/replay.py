"""Replay: arrivals at the times of a recorded trace, with the trace's keys."""

from __future__ import annotations

import csv
import itertools
import json
import math
import os
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Replay"]


@dataclass(frozen=True, slots=True, init=False)
class Replay:
    """The arrivals of a recorded trace, at their recorded times, then no more.

    ``times`` are the recorded event times in seconds, in order; they are shifted so that
    ``start`` (by default the first time) falls when the source starts, and each arrival's
    ``event_time`` is its shifted time. ``keys``, if the trace has them, are the records'
    keys (any hashable values); an ``ArrivalSource`` given no key distribution uses them.
    Split over several source subtasks, subtask ``i`` of ``n`` replays records ``i``,
    ``i + n``, ... The source's input ends after the trace's last record.
    """

    at: tuple[float, ...]
    keys: tuple[Any, ...] | None

    def __init__(
        self,
        times: Sequence[float],
        keys: Sequence[Any] | None = None,
        *,
        start: float | None = None,
    ) -> None:
        recorded = [float(time) for time in times]
        _check_times(recorded)
        if keys is not None and len(keys) != len(recorded):
            raise ValueError(
                f"Replay: the trace has {len(recorded)} times and {len(keys)} keys; give one "
                "key per time, or none"
            )
        origin = start if start is not None else (recorded[0] if recorded else 0.0)
        if recorded and origin > recorded[0]:
            raise ValueError(
                f"Replay: start ({origin:g}) is after the trace's first time ({recorded[0]:g})"
            )
        object.__setattr__(self, "at", tuple(time - origin for time in recorded))
        object.__setattr__(self, "keys", None if keys is None else tuple(keys))

    @classmethod
    def from_csv(
        cls, path: str | os.PathLike[str], *, time: str = "time", key: str | None = "key"
    ) -> Replay:
        """A trace from a CSV file with a header: its column ``time`` and, if any, ``key``.

        A key that reads as a whole number becomes an ``int``; others stay strings.
        """
        with Path(path).open(newline="") as file:
            rows = list(csv.DictReader(file))
        if rows and time not in rows[0]:
            raise ValueError(
                f"Replay: {os.fspath(path)} has no column '{time}'; its columns are "
                f"{', '.join(rows[0])}"
            )
        keyed = key is not None and bool(rows) and key in rows[0]
        keys = [_key(row[key]) for row in rows] if keyed and key is not None else None
        return cls([float(row[time]) for row in rows], keys)

    @classmethod
    def from_json(cls, path: str | os.PathLike[str]) -> Replay:
        """A trace from a JSON file: a list of times, or of objects, or one object.

        The objects are ``{"time": t, "key": k}``, one per record; the one object is
        ``{"times": [...], "keys": [...]}`` (``keys`` may be left out).
        """
        data = json.loads(Path(path).read_text())
        if isinstance(data, dict):
            return cls(data["times"], data.get("keys"))
        if data and isinstance(data[0], dict):
            keys = [row["key"] for row in data] if "key" in data[0] else None
            return cls([row["time"] for row in data], keys)
        return cls(data)

    @property
    def rate(self) -> float:
        """Arrivals per second over the trace's span (its length if all come at once)."""
        span = self.at[-1] - self.at[0] if self.at else 0.0
        return (len(self.at) - 1) / span if span > 0 else float(len(self.at))

    def times(self, rng: random.Random) -> Iterator[float]:
        """The trace's times, shifted; drawing nothing."""
        return iter(self.at)

    def key_sequence(self) -> Iterator[Any] | None:
        """The trace's keys in order, or ``None`` for a trace without keys."""
        return None if self.keys is None else iter(self.keys)

    def share(self, parts: int, index: int = 0) -> Replay:
        """Records ``index``, ``index + parts``, ... of the trace."""
        share = Replay.__new__(Replay)
        object.__setattr__(share, "at", self.at[index::parts])
        object.__setattr__(share, "keys", None if self.keys is None else self.keys[index::parts])
        return share

    def __repr__(self) -> str:
        keyed = "with keys" if self.keys is not None else "without keys"
        return f"Replay({len(self.at)} arrivals over {self._span():g} s, {keyed})"

    def _span(self) -> float:
        return self.at[-1] - self.at[0] if self.at else 0.0


def _check_times(times: list[float]) -> None:
    for index, (before, after) in enumerate(itertools.pairwise(times), start=1):
        if after < before:
            raise ValueError(
                f"Replay: the trace's times must be in order; time {index} ({after:g}) comes "
                f"before time {index - 1} ({before:g})"
            )
    if any(not math.isfinite(time) for time in times):
        raise ValueError("Replay: every time of the trace must be a finite number of seconds")


def _key(text: str) -> Any:
    try:
        return int(text)
    except ValueError:
        return text
