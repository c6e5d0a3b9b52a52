"""WindowOperator: a keyed process operator running a window's runner, by batch when it can."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from lockgate.engine.checkpointing.snapshots import OperatorSnapshot
from lockgate.engine.events import Watermark
from lockgate.engine.graph.job_graph import OperatorNode
from lockgate.engine.runtime.operators.basic import ProcessOperator
from lockgate.engine.state import KeyedStateBackend
from lockgate.engine.time.clock import Clock
from lockgate.engine.windows.aligned import AlignedWindowRunner, is_aligned
from lockgate.engine.windows.runner import WindowRunner

__all__ = ["WindowOperator"]


class WindowOperator(ProcessOperator):
    """Runs the window logic of a ``WindowSpec`` node as its keyed process function.

    Records, timers, watermarks and side outputs (late data) take the keyed process
    operator's paths; the runner keeps windows in keyed state. A spec ``is_aligned``
    accepts runs ``AlignedWindowRunner``, which takes each batch whole (``window_path``
    is then ``"aligned"``); any other runs ``WindowRunner`` record by record
    (``"general"``). ``late_records_dropped`` counts the records that came too late for
    every window they belong to and were dropped (they go to the late-data side output
    instead, when the window has one).
    """

    def __init__(
        self,
        node: OperatorNode,
        restored: OperatorSnapshot | None = None,
        clock: Clock | None = None,
        *,
        keyed_state: KeyedStateBackend | None = None,
    ) -> None:
        spec = node.function
        runner = AlignedWindowRunner(spec) if is_aligned(spec) else WindowRunner(spec)
        super().__init__(replace(node, function=runner), restored, clock, keyed_state=keyed_state)
        self._runner: WindowRunner = self.function  # the operator's own copy of the runner
        self._batches = isinstance(self._runner, AlignedWindowRunner)

    def process_batch(self, records: list[Any]) -> list[Any]:
        """Give the runner the batch whole on the aligned path, else record by record."""
        if not self._batches:
            return super().process_batch(records)
        context = self._context
        out: list[Any] = []
        context._out = out
        self._aligned().process_batch(records, context, self._key_of, stamped=self.timestamped)
        return out

    def process_watermark(self, watermark: Watermark) -> tuple[list[Any], Watermark | None]:
        """Flush the aligned runner's contents into state; fire the timers due."""
        if self._batches:
            self._aligned().flush()
        return super().process_watermark(watermark)

    def fire_processing_timers(self, now: float) -> list[Any]:
        """Flush the aligned runner's contents into state; fire the timers due."""
        if self._batches:
            self._aligned().flush()
        return super().fire_processing_timers(now)

    def _aligned(self) -> AlignedWindowRunner:
        runner = self._runner
        assert isinstance(runner, AlignedWindowRunner)
        return runner

    @property
    def window_path(self) -> str:
        """Which runner the operator runs: ``"aligned"`` or ``"general"``."""
        return self._runner.path

    @property
    def late_records_dropped(self) -> int:
        """Records dropped as late since the operator started."""
        return self._runner.late_records_dropped
