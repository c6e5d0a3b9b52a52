"""CpuCost: a function whose declared CPU cost lets virtual time pass while it runs."""

from __future__ import annotations

import pytest

from lockgate.engine.simulation import CpuCost, ModelContext, VirtualClock
from tests.engine.simulation.virtual import run_virtual


def test_each_call_spends_its_cost_of_virtual_time_and_returns_the_functions_result() -> None:
    parse = CpuCost(0.005, lambda text: int(text))

    async def main(clock: VirtualClock) -> tuple[list[int], float]:
        parse.bind(ModelContext("parse", 1, clock))
        return [parse("1"), parse("2")], clock.now()

    assert run_virtual(main) == ([1, 2], 0.01)


def test_without_a_function_the_record_passes_unchanged() -> None:
    assert CpuCost(0.001)("record") == "record"


def test_outside_a_simulation_a_cost_costs_nothing() -> None:
    async def main(clock: VirtualClock) -> float:
        CpuCost(5.0)("record")  # never bound
        return clock.now()

    assert run_virtual(main) == 0.0


def test_a_negative_cost_is_refused() -> None:
    with pytest.raises(ValueError, match="CpuCost: seconds must be 0 or more"):
        CpuCost(-0.001)
