"""Sweep: a scenario run over a grid of parameters, and the capacity answers it finds."""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lockgate.engine.api.environment import StreamEnvironment
from lockgate.engine.simulation.capacity import Criterion
from lockgate.engine.simulation.faults.fault import Fault
from lockgate.engine.simulation.report import SimulationReport
from lockgate.engine.simulation.simulation import Backend, Simulation

__all__ = ["CapacityAnswer", "Sweep", "SweepResult", "SweepRun"]


@dataclass(frozen=True, slots=True)
class SweepRun:
    """One point of a sweep: its parameters and the report of its run."""

    parameters: Mapping[str, Any]
    report: SimulationReport


@dataclass(frozen=True, slots=True)
class SweepResult:
    """Every run of a grid, in the grid's order (the last parameter varies fastest)."""

    runs: tuple[SweepRun, ...]

    def to_table(self) -> str:
        """One line per run: its parameters, throughput and p99 latency per sink, bottleneck."""
        if not self.runs:
            return "no runs"
        names = list(self.runs[0].parameters)
        header = [*names, "sink", "records/s", "latency p99", "lag growth", "bottleneck"]
        rows = [
            [
                *(str(run.parameters[name]) for name in names),
                sink.uid,
                f"{sink.throughput:.2f}",
                _number(sink.in_engine_latency.p99, "s"),
                _number(sink.event_time_lag_growth, "s/s"),
                ", ".join(run.report.bottleneck.uids) if run.report.bottleneck else "-",
            ]
            for run in self.runs
            for sink in run.report.sinks
        ]
        widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
        lines = [
            "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in [header, *rows]
        ]
        return "\n".join(line.rstrip() for line in lines)

    def to_json(self) -> str:
        """Every run's parameters and report, as JSON."""
        data = [
            {"parameters": dict(run.parameters), "report": run.report.to_dict()}
            for run in self.runs
        ]
        return json.dumps(data, sort_keys=True)


@dataclass(frozen=True, slots=True)
class CapacityAnswer:
    """The answer to a capacity question: the setting found, and the runs that showed it.

    ``value`` is ``None`` when no setting tried answers yes. ``tried`` maps each value
    run to whether it did, in the order they ran; ``reports`` holds their reports.
    """

    question: str
    parameter: str
    value: Any
    tried: Mapping[Any, bool]
    reports: Mapping[Any, SimulationReport]

    def describe(self) -> str:
        """One sentence: the answer, then what was tried."""
        tried = ", ".join(f"{value!r} {'yes' if ok else 'no'}" for value, ok in self.tried.items())
        if self.value is None:
            return f"no {self.parameter} tried gives {self.question} (tried: {tried})"
        return f"{self.parameter} = {self.value!r} gives {self.question} (tried: {tried})"


class Sweep:
    """Runs ``build(**parameters)``'s job for each setting, on virtual time.

    ``build`` takes the swept parameters as keywords (``parallelism``, ``capacity``,
    ``channel_capacity``, ``interval``, ``rate``: whatever the scenario's knobs are) and
    returns a fresh ``StreamEnvironment`` with its job built. Every run is a
    ``Simulation`` with the same ``seed``, ``until``, ``report_every`` and ``faults``, so
    settings are compared on the same world. ``run`` covers a whole grid; ``smallest``
    and ``largest`` bisect one parameter for a capacity answer, assuming the answer is
    monotone in it (more capacity never hurts), so they run a handful of settings only.
    """

    def __init__(
        self,
        build: Callable[..., StreamEnvironment],
        *,
        until: float,
        seed: int = 0,
        report_every: float = 1.0,
        faults: Sequence[Fault] = (),
        backend: Backend = "asyncio",
    ) -> None:
        self.build = build
        self.until = until
        self.seed = seed
        self.report_every = report_every
        self.faults = tuple(faults)
        self.backend = backend

    def simulate(self, **parameters: Any) -> SimulationReport:
        """The report of one setting."""
        simulation = Simulation(
            self.build(**parameters),
            seed=self.seed,
            until=self.until,
            report_every=self.report_every,
            backend=self.backend,
            faults=self.faults,
        )
        name = ",".join(f"{key}={value}" for key, value in parameters.items()) or "sweep"
        return simulation.run(name)

    def run(self, **grid: Sequence[Any]) -> SweepResult:
        """Run every combination of the values ``grid`` gives each parameter."""
        names = list(grid)
        runs = []
        for values in itertools.product(*(grid[name] for name in names)):
            parameters = dict(zip(names, values, strict=True))
            runs.append(SweepRun(parameters, self.simulate(**parameters)))
        return SweepResult(tuple(runs))

    def smallest(
        self, parameter: str, values: Sequence[Any], holds: Criterion, **fixed: Any
    ) -> CapacityAnswer:
        """The smallest of ``values`` (ascending) whose run ``holds``, the others ``fixed``."""
        return self._bisect(parameter, sorted(values), holds, fixed, first=True)

    def largest(
        self,
        parameter: str,
        between: tuple[float, float],
        holds: Criterion,
        *,
        tolerance: float,
        **fixed: Any,
    ) -> CapacityAnswer:
        """The largest value in ``between`` whose run ``holds``, to within ``tolerance``.

        The parameter is a number (a source rate, say): the range is cut in steps of
        ``tolerance`` and bisected, so the answer is within ``tolerance`` of the boundary.
        """
        low, high = between
        if not (tolerance > 0 and low < high):
            raise ValueError(
                f"largest needs low < high and tolerance > 0; got {between}, {tolerance}"
            )
        steps = math.ceil((high - low) / tolerance)
        values = [min(high, low + step * tolerance) for step in range(steps + 1)]
        return self._bisect(parameter, values, holds, fixed, first=False)

    def _bisect(
        self,
        parameter: str,
        values: list[Any],
        holds: Criterion,
        fixed: Mapping[str, Any],
        *,
        first: bool,
    ) -> CapacityAnswer:
        tried: dict[Any, bool] = {}
        reports: dict[Any, SimulationReport] = {}

        def ok(index: int) -> bool:
            value = values[index]
            if value not in tried:
                report = self.simulate(**fixed, **{parameter: value})
                reports[value], tried[value] = report, holds(report)
            return tried[value] if first else not tried[value]

        found = _first_true(len(values), ok)
        if first:
            value = None if found is None else values[found]
        else:  # the last value that holds is the one before the first that fails
            value = values[-1] if found is None else (values[found - 1] if found else None)
        return CapacityAnswer(holds.text, parameter, value, tried, reports)


def _first_true(count: int, ok: Callable[[int], bool]) -> int | None:
    """The first index in ``range(count)`` where monotone ``ok`` is true, or ``None``."""
    if not count:
        return None
    if not ok(count - 1):
        return None
    low, high = 0, count - 1  # ok(high) holds
    while low < high:
        middle = (low + high) // 2
        if ok(middle):
            high = middle
        else:
            low = middle + 1
    return low


def _number(value: float | None, unit: str) -> str:
    return "-" if value is None else f"{value:.3f} {unit}"
