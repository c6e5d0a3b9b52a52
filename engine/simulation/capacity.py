"""Capacity questions: what a simulation report must show for a setting to be enough.

Each returns a ``Criterion``, a yes-or-no question about one ``SimulationReport``, for a
``Sweep`` to find the smallest or largest setting answering yes:

- ``p99_latency_below(seconds)``: every modelled sink's p99 in-engine latency is below it;
- ``sustainable()``: the job keeps up with its input, queues bounded and lag not growing;
- ``recovers_within(seconds)``: the job catches up after every fault within that time.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from lockgate.engine.simulation.report import SimulationReport

__all__ = ["Criterion", "p99_latency_below", "recovers_within", "sustainable"]


@dataclass(frozen=True, slots=True)
class Criterion:
    """A question about a report: ``criterion(report)`` answers it; ``text`` says it."""

    text: str
    check: Callable[[SimulationReport], bool]

    def __call__(self, report: SimulationReport) -> bool:
        """Whether ``report`` answers yes."""
        return self.check(report)


def p99_latency_below(seconds: float, *, sink: str | None = None) -> Criterion:
    """Every modelled sink's (or ``sink``'s) p99 in-engine latency is below ``seconds``.

    A sink that committed nothing answers no.
    """

    def check(report: SimulationReport) -> bool:
        sinks = [report.sink(sink)] if sink is not None else list(report.sinks)
        p99s = [s.in_engine_latency.p99 for s in sinks]
        return bool(p99s) and all(p99 is not None and p99 < seconds for p99 in p99s)

    where = f"'{sink}'" if sink is not None else "every sink"
    return Criterion(f"p99 in-engine latency at {where} under {seconds:g} s", check)


def sustainable(*, lag_growth: float = 0.005, backpressured: float = 0.1) -> Criterion:
    """The job keeps up: lag not growing, sources not held back, so queues stay bounded.

    Every modelled sink's event-time lag grows by at most ``lag_growth`` seconds per
    second (a job that falls behind by 1% of its input grows it by 0.01), and no source
    subtask is backpressured more than ``backpressured`` of the time (Flink's OK: a full
    channel in front of a source is a queue that stopped being bounded by the job).
    """

    def check(report: SimulationReport) -> bool:
        growths = [sink.event_time_lag_growth for sink in report.sinks]
        if not growths or any(g is None or g > lag_growth for g in growths):
            return False
        sources = [s for s in report.subtasks if s.mailbox_fill is None]
        return all(s.backpressured_ratio <= backpressured for s in sources)

    return Criterion(
        f"sustainable: lag growth at most {lag_growth:g} s/s, sources backpressured at "
        f"most {backpressured:.0%}",
        check,
    )


def recovers_within(seconds: float) -> Criterion:
    """After every fault (outages too), the job caught up within ``seconds`` of its start.

    Catch-up is the report's: every modelled sink's p99 event-time lag back within what it
    was before the fault (``FaultReport.catch_up_time``). A fault that never caught up, or
    a run with no fault, answers no.
    """

    def check(report: SimulationReport) -> bool:
        struck = [fault for fault in report.faults if fault.struck_at is not None]
        return bool(struck) and all(
            f.catch_up_time is not None and f.catch_up_time <= seconds for f in struck
        )

    return Criterion(f"caught up within {seconds:g} s of every fault", check)
