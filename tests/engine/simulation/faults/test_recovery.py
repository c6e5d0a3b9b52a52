"""fault_reports: recovery from the fault's own end, catch-up from the sinks' lag."""

from __future__ import annotations

from lockgate.engine.simulation.faults.fault import InjectedFault
from lockgate.engine.simulation.faults.recovery import Timeline, fault_reports
from lockgate.engine.simulation.sections import LatencySummary, SinkReport

TIMES = tuple(float(t) for t in range(1, 11))


def sink(lag_p99: tuple[float | None, ...]) -> SinkReport:
    summary = LatencySummary(0, None, None, None, None, None)
    nothing = (None,) * len(TIMES)
    return SinkReport(
        "out", 0, 0.0, summary, summary, None, nothing, *(nothing,) * 4, lag_p99, nothing
    )


KILL = InjectedFault("kill attempt", 3.5, 3.5, "the attempt was killed")
TIMELINE = Timeline(((0.0, 0), (4.5, 1)), (), ((4.5, 1, 3),))


def test_a_kill_recovers_when_the_next_attempt_starts() -> None:
    (report,) = fault_reports([KILL], TIMELINE, TIMES, [sink((0.1,) * 10)])

    assert (report.recovered_at, report.recovery_time) == (4.5, 1.0)
    assert report.detail == "the attempt was killed; attempt 1 restored checkpoint 3"


def test_catch_up_ends_with_the_first_interval_whose_lag_is_back_to_normal() -> None:
    lag = (0.1, 0.12, 0.1, None, 2.0, 1.0, 0.11, 0.1, 0.1, 0.1)

    (report,) = fault_reports([KILL], TIMELINE, TIMES, [sink(lag)])

    assert (report.caught_up_at, report.catch_up_time) == (7.0, 3.5)


def test_a_lag_that_never_comes_back_never_catches_up() -> None:
    lag = (0.1, 0.1, 0.1, None, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0)

    (report,) = fault_reports([KILL], TIMELINE, TIMES, [sink(lag)])

    assert (report.caught_up_at, report.catch_up_time) == (None, None)


def test_a_failed_checkpoint_recovers_with_the_next_completed_one() -> None:
    failure = InjectedFault("failed checkpoint", 2.0, 2.2, "checkpoint 2")
    timeline = Timeline(((0.0, 0),), ((1.2, 1), (3.2, 3)))

    (report,) = fault_reports([failure], timeline, TIMES, [sink((0.1,) * 10)])

    assert report.recovery_time == 1.0


def test_an_outage_recovers_at_its_end() -> None:
    outage = InjectedFault("outage", 2.0, 2.0, "'out' stalls for 3 s", ends_at=5.0)

    (report,) = fault_reports([outage], TIMELINE, TIMES, [sink((0.1,) * 10)])

    assert (report.recovery_time, report.catch_up_time) == (3.0, 4.0)


def test_a_fault_that_never_struck_has_no_recovery() -> None:
    missed = InjectedFault("kill attempt", 3.5, None, "no attempt was running")

    (report,) = fault_reports([missed], TIMELINE, TIMES, [sink((0.1,) * 10)])

    assert (report.recovered_at, report.catch_up_time, report.detail) == (
        None,
        None,
        "no attempt was running",
    )
