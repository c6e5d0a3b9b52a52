"""The differential scenarios: engine-neutral descriptions, and the outputs Flink gave for them.

Each ``scenarios/<name>.json`` describes one job (see README.md): the records with their event
times, the watermark rule, the steps and the job, and how outputs compare. A description with
``variants`` stands for one job per variant (``{"function": [...]}``: one per window function
style). Beside it, ``<name>.flink.json`` holds what Flink emitted (written by
``scripts/flink_reference/generate.py``), with the SHA-256 of the description it ran.

An output entry is ``[watermark, timestamp, output]``: the watermark the output stream had seen
when the output arrived (Flink's milliseconds; ``None`` before the first), the output's
timestamp, and the output as a JSON list.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "FIXTURE_SUFFIX",
    "FOLDER",
    "Case",
    "cases",
    "comparable",
    "descriptions",
    "fixture_path",
    "jobs",
    "sha256",
]

FOLDER = Path(__file__).parent / "scenarios"
FIXTURE_SUFFIX = ".flink.json"

Entry = list[Any]  # [watermark, timestamp, output]
Streams = dict[str, list[Entry]]


@dataclass(frozen=True)
class Case:
    """One job to run in both engines: a scenario, or one variant of it.

    ``job`` is the description with the variant applied; ``expected`` what Flink emitted,
    per output stream (``main``, and ``late`` for a window's late output).
    """

    scenario: str
    variant: str | None
    job: dict[str, Any]
    expected: Streams

    @property
    def name(self) -> str:
        """The scenario's name, with the variant in brackets."""
        return self.scenario if self.variant is None else f"{self.scenario}[{self.variant}]"


def descriptions() -> dict[str, dict[str, Any]]:
    """Every scenario description, by name."""
    return {
        path.name.removesuffix(".json"): json.loads(path.read_text())
        for path in sorted(FOLDER.glob("*.json"))
        if not path.name.endswith(FIXTURE_SUFFIX)
    }


def fixture_path(name: str) -> Path:
    """Where Flink's outputs for scenario ``name`` are kept."""
    return FOLDER / f"{name}{FIXTURE_SUFFIX}"


def sha256(name: str) -> str:
    """The SHA-256 of scenario ``name``'s description file, as a fixture records it."""
    return hashlib.sha256((FOLDER / f"{name}.json").read_bytes()).hexdigest()


def jobs(description: dict[str, Any]) -> Iterator[tuple[str | None, dict[str, Any]]]:
    """The description's jobs: ``(None, itself)``, or ``(label, job)`` per variant.

    ``"variants": {field: values}`` sets the window's ``field`` to each value in turn:
    ``values`` is a list of strings (each its own label) or an object of labelled values.
    """
    variants = description.get("variants")
    if not variants:
        yield None, description
        return
    [(field, values)] = variants.items()
    labelled = values if isinstance(values, dict) else {value: value for value in values}
    for label, value in labelled.items():
        job = copy.deepcopy(description)
        del job["variants"]
        job["job"]["window"][field] = value
        yield label, job


def cases() -> list[Case]:
    """Every job of every scenario, with what Flink emitted for it."""
    found = []
    for name, description in descriptions().items():
        fixture = json.loads(fixture_path(name).read_text())
        for variant, job in jobs(description):
            runs = fixture["streams"] if variant is None else fixture["variants"][variant]
            found.append(Case(name, variant, job, runs))
    return found


def comparable(streams: Streams, compare: str, *, timestamps: bool = False) -> dict[str, list[str]]:
    """Outputs in a form two engines must agree on exactly, per stream.

    ``per_watermark``: each output with the watermark it came under, sorted; since a stream's
    watermark only grows, this is the sequence of watermarks, each with the multiset of
    outputs that came under it (Flink leaves the order of equal timers, so of windows firing
    at one watermark, undefined). ``as_multiset``: the outputs alone, for jobs whose
    watermarks at an operator depend on how two inputs interleave (joins, unions). With
    ``timestamps``, each output's timestamp is part of it.
    """
    shown = {}
    for stream, entries in streams.items():
        keyed = []
        for watermark, timestamp, out in entries:
            shown_out = [timestamp, out] if timestamps else out
            if compare == "per_watermark":
                keyed.append((_order(watermark), json.dumps([watermark, shown_out])))
            else:
                keyed.append((0.0, json.dumps(shown_out)))
        shown[stream] = [text for _, text in sorted(keyed)]
    return shown


def _order(watermark: int | None) -> float:
    return -float("inf") if watermark is None else watermark
