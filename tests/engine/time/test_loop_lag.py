"""LoopLagMonitor measures how late the event loop wakes its 1 ms sleeps: a call that holds
the loop shows as a lag as long as it held it."""

from __future__ import annotations

import time

from lockgate.engine.testing import LoopLag, LoopLagMonitor


async def test_a_call_that_blocks_the_loop_shows_as_a_lag_at_least_as_long() -> None:
    async with LoopLagMonitor() as lag:
        await lag.wait_measured(1)
        time.sleep(0.05)  # noqa: ASYNC251 (a stall: the loop runs nothing for 50 ms)
        await lag.wait_measured(2)

    assert lag.statistics().max >= 0.045


async def test_a_call_that_keeps_the_loop_busy_shows_as_a_busy_lag_too() -> None:
    async with LoopLagMonitor() as lag:
        await lag.wait_measured(1)
        until = time.process_time() + 0.05
        while time.process_time() < until:  # a stall of the process's own: 50 ms of CPU
            pass
        await lag.wait_measured(2)

    assert lag.statistics().busy_max >= 0.045


async def test_reset_forgets_what_was_measured_before() -> None:
    async with LoopLagMonitor() as lag:
        await lag.wait_measured(1)
        time.sleep(0.05)  # noqa: ASYNC251 (the stall the reset forgets)
        await lag.wait_measured(2)
        lag.reset()
        forgotten = lag.statistics()
        await lag.wait_measured(1)

    assert forgotten == LoopLag.of([])
    assert lag.statistics().samples >= 1


def test_the_statistics_are_nearest_rank_percentiles_of_the_lags() -> None:
    lags = [n / 100_000 for n in range(99)] + [0.1]

    assert LoopLag.of(reversed(lags), [0.0, 0.02]) == LoopLag(
        100, 49 / 100_000, 98 / 100_000, 0.1, busy_max=0.02
    )


def test_no_wake_up_measured_is_all_zeros() -> None:
    assert LoopLagMonitor().statistics() == LoopLag.of([]) == LoopLag(0, 0.0, 0.0, 0.0)
