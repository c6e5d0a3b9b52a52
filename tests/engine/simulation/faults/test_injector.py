"""Faults in a simulation run: a killed attempt, a failed checkpoint, an outage, reported
with the job's recovery and catch-up times."""

from __future__ import annotations

import pytest

from lockgate.engine import RestartStrategy, StreamEnvironment
from lockgate.engine.simulation import (
    ArrivalSource,
    Constant,
    ConstantRate,
    FailCheckpoint,
    KillAttempt,
    Outage,
    ServiceSink,
    Simulation,
    SlowStorage,
)


def steady(*, sink: ServiceSink | None = None) -> StreamEnvironment:
    env = StreamEnvironment()
    env.enable_checkpointing(1.0)
    env.set_restart_strategy(RestartStrategy.fixed_delay(attempts=3, delay=0.5))
    (
        env.from_source(ArrivalSource(ConstantRate(100.0)), uid="events")
        .sink_to(sink or ServiceSink(Constant(0.002)), uid="out")
        .disable_chaining()
    )
    return env


def test_a_killed_attempt_restarts_from_the_latest_checkpoint_and_catches_up() -> None:
    report = Simulation(steady(), seed=1, until=30.0, faults=[KillAttempt(10.25)]).run("kill")

    (kill,) = report.faults
    assert kill.kind == "kill attempt"
    assert kill.struck_at == pytest.approx(10.25)
    assert kill.recovery_time == pytest.approx(0.5)  # the restart delay
    assert "attempt 1 restored checkpoint 10" in kill.detail
    assert kill.catch_up_time is not None and 0.5 < kill.catch_up_time < 3.0
    # the sink is not transactional: what came after checkpoint 10 is written again
    assert report.sink("out").records > 30 * 100


def test_a_kill_while_no_attempt_runs_does_nothing_and_says_so() -> None:
    faults = [KillAttempt(10.0), KillAttempt(10.25)]  # the second falls in the restart delay

    report = Simulation(steady(), seed=1, until=20.0, faults=faults).run("kills")

    assert [fault.detail for fault in report.faults][1] == "no attempt was running"
    assert report.faults[1].recovery_time is None


def test_a_failed_checkpoint_is_aborted_and_the_next_one_completes() -> None:
    report = Simulation(steady(), seed=1, until=10.0, faults=[FailCheckpoint(4.5)]).run("fail")

    failed = [c for c in report.checkpoints if c.status == "aborted"]
    assert [(c.checkpoint_id, c.failure_reason) for c in failed] == [(5, "STORAGE_FAILED")]
    (fault,) = report.faults
    assert fault.recovery_time == pytest.approx(1.0)  # checkpoint 6, a second later


def test_a_slow_storage_makes_every_checkpoint_take_its_writes() -> None:
    faults = [SlowStorage(write=Constant(0.25))]

    slow = Simulation(steady(), seed=1, until=10.0, faults=faults).run("slow")
    fast = Simulation(steady(), seed=1, until=10.0).run("fast")

    assert all(c.duration == pytest.approx(0.5) for c in slow.checkpoints)  # state, metadata
    assert all(c.async_duration == pytest.approx(0.25) for c in slow.checkpoints)
    assert all(c.duration < 0.01 for c in fast.checkpoints)


def test_an_outage_of_a_sink_is_reported_with_its_recovery_and_catch_up() -> None:
    sink = ServiceSink(Constant(0.005), outages=[Outage(10.0, 5.0, kind="stall")])

    report = Simulation(steady(sink=sink), seed=1, until=60.0).run("outage")

    (outage,) = report.faults
    assert (outage.kind, outage.recovery_time) == ("outage", 5.0)
    # 500 records waited; the sink drains them at 200 - 100 = 100 a second more than come
    assert outage.catch_up_time == pytest.approx(10.0, abs=1.5)
    assert "outage" in report.to_table()


def test_storage_faults_need_the_simulation_to_keep_checkpoints_in_memory(tmp_path) -> None:
    env = steady()
    env.set_checkpoint_storage(f"file://{tmp_path}")

    with pytest.raises(ValueError, match="leave its storage unset"):
        Simulation(env, seed=1, until=5.0, faults=[FailCheckpoint(1.0)]).run("file")


def test_a_fault_of_another_kind_is_refused() -> None:
    with pytest.raises(TypeError, match="a KillAttempt, FailCheckpoint or SlowStorage"):
        Simulation(steady(), seed=1, until=5.0, faults=["crash"])  # type: ignore[list-item]


def test_on_trio_a_killed_attempt_restarts_from_the_latest_checkpoint_too() -> None:
    simulation = Simulation(
        steady(), seed=1, until=20.0, backend="trio", faults=[KillAttempt(10.25)]
    )

    (kill,) = simulation.run("kill").faults

    assert kill.recovery_time == pytest.approx(0.5)
    assert kill.restored_checkpoint == 10
