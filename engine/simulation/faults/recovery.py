"""How a job came back from each fault: its recovery time and its catch-up time. Pure.

Recovery is the fault's own end: for a killed attempt the start of the next attempt, for
a failed checkpoint the next completed one, for an outage its end. Catch-up runs from the
fault until every modelled sink's event-time lag is back to what it was before: the end
of the first interval that starts after the fault, ends after the recovery, and whose p99
lag is within the highest p99 lag of the intervals before the fault (1% and a
microsecond over it, for rounding). A sink whose lag grew before the fault never catches
up, nor one with no interval before the fault to compare with.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from lockgate.engine.simulation.faults.fault import InjectedFault
from lockgate.engine.simulation.sections import Series, SinkReport

__all__ = ["FaultReport", "Timeline", "fault_reports"]


@dataclass(frozen=True, slots=True)
class Timeline:
    """When attempts started and checkpoints completed, in virtual time."""

    attempts: tuple[tuple[float, int], ...]
    checkpoints: tuple[tuple[float, int], ...]
    restores: tuple[tuple[float, int, int], ...] = ()
    """When an attempt restored a checkpoint: the time, the attempt, the checkpoint id."""


@dataclass(frozen=True, slots=True)
class FaultReport:
    """One fault and how the job came back from it, in virtual seconds.

    ``struck_at`` is when it took effect (``None``: it never did, ``detail`` says why);
    ``recovery_time`` runs from then to ``recovered_at``, ``catch_up_time`` to
    ``caught_up_at``. ``None`` where that did not happen before the run ended. After a
    killed attempt, ``restored_checkpoint`` is the checkpoint the next attempt restored
    (``None``: it started without state).
    """

    kind: str
    at: float
    struck_at: float | None
    detail: str
    recovered_at: float | None
    recovery_time: float | None
    caught_up_at: float | None
    catch_up_time: float | None
    restored_checkpoint: int | None = None


def fault_reports(
    faults: Sequence[InjectedFault],
    timeline: Timeline,
    times: Sequence[float],
    sinks: Sequence[SinkReport],
) -> tuple[FaultReport, ...]:
    """A report of each of ``faults``, from the run's ``timeline`` and its sinks' series."""
    return tuple(_report(fault, timeline, times, sinks) for fault in faults)


def _report(
    fault: InjectedFault, timeline: Timeline, times: Sequence[float], sinks: Sequence[SinkReport]
) -> FaultReport:
    struck = fault.struck_at
    recovered = None if struck is None else _recovered_at(fault.kind, struck, timeline, fault)
    caught_up = None
    if struck is not None and recovered is not None:
        caught_up = _caught_up_at(struck, recovered, times, sinks)
    return FaultReport(
        fault.kind,
        fault.at,
        struck,
        _detail(fault, timeline),
        recovered,
        _since(struck, recovered),
        caught_up,
        _since(struck, caught_up),
        _restored(fault, timeline),
    )


def _restored(fault: InjectedFault, timeline: Timeline) -> int | None:
    struck = fault.struck_at
    if fault.kind != "kill attempt" or struck is None:
        return None
    return next((c for t, _, c in timeline.restores if t >= struck), None)


def _detail(fault: InjectedFault, timeline: Timeline) -> str:
    struck = fault.struck_at
    if fault.kind != "kill attempt" or struck is None:
        return fault.detail
    restored = next(((a, c) for t, a, c in timeline.restores if t >= struck), None)
    if restored is None:
        return f"{fault.detail}; the next attempt started without state"
    return f"{fault.detail}; attempt {restored[0]} restored checkpoint {restored[1]}"


def _recovered_at(
    kind: str, struck: float, timeline: Timeline, fault: InjectedFault
) -> float | None:
    if kind == "kill attempt":
        return next((t for t, attempt in timeline.attempts if t >= struck and attempt > 0), None)
    if kind == "failed checkpoint":
        return next((t for t, _ in timeline.checkpoints if t > struck), None)
    return fault.ends_at


def _caught_up_at(
    struck: float, recovered: float, times: Sequence[float], sinks: Sequence[SinkReport]
) -> float | None:
    ends = [_sink_caught_up_at(struck, recovered, times, sink.event_time_lag_p99) for sink in sinks]
    if not ends or any(end is None for end in ends):
        return None
    return max(end for end in ends if end is not None)


def _sink_caught_up_at(
    struck: float, recovered: float, times: Sequence[float], lag: Series
) -> float | None:
    before = [value for end, value in zip(times, lag, strict=True) if end <= struck]
    normal = [value for value in before if value is not None]
    if not normal:
        return None
    threshold = max(normal) * 1.01 + 1e-6
    for start, end, value in zip([0.0, *times], times, lag, strict=False):
        after = start >= struck and end > recovered
        if after and value is not None and value <= threshold:
            return end
    return None


def _since(start: float | None, end: float | None) -> float | None:
    return None if start is None or end is None else end - start
