"""WindowOperator: a keyed process operator running a window's ``WindowRunner``."""

from __future__ import annotations

from dataclasses import replace

from lockgate.engine.checkpointing.snapshots import OperatorSnapshot
from lockgate.engine.graph.job_graph import OperatorNode
from lockgate.engine.runtime.operators.basic import ProcessOperator
from lockgate.engine.state import KeyedStateBackend
from lockgate.engine.time.clock import Clock
from lockgate.engine.windows.runner import WindowRunner

__all__ = ["WindowOperator"]


class WindowOperator(ProcessOperator):
    """Runs the window logic of a ``WindowSpec`` node as its keyed process function.

    Records, timers, watermarks and side outputs (late data) take the keyed process
    operator's paths; the runner keeps windows in keyed state. ``late_records_dropped``
    counts the records that came too late for every window they belong to and were dropped
    (they go to the late-data side output instead, when the window has one).
    """

    def __init__(
        self,
        node: OperatorNode,
        restored: OperatorSnapshot | None = None,
        clock: Clock | None = None,
        *,
        keyed_state: KeyedStateBackend | None = None,
    ) -> None:
        runner = WindowRunner(node.function)
        super().__init__(replace(node, function=runner), restored, clock, keyed_state=keyed_state)

    @property
    def late_records_dropped(self) -> int:
        """Records dropped as late since the operator started."""
        runner = self.function  # the operator's own copy of the runner
        assert isinstance(runner, WindowRunner)
        return runner.late_records_dropped
