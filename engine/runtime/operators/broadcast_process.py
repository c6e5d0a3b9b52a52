"""BroadcastProcessOperator: a ``KeyedBroadcastProcessFunction`` over keyed and broadcast input."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from lockgate.engine.checkpointing.snapshots import OperatorSnapshot
from lockgate.engine.events import Watermark
from lockgate.engine.functions.broadcast import (
    BroadcastContext,
    BroadcastStates,
    KeyedBroadcastProcessFunction,
    ReadOnlyBroadcastContext,
)
from lockgate.engine.functions.process import ProcessContext
from lockgate.engine.functions.side_outputs import SideOutputCollector
from lockgate.engine.functions.two_inputs import SecondInput
from lockgate.engine.graph.job_graph import OperatorNode
from lockgate.engine.runtime.operators.basic import ProcessOperator
from lockgate.engine.state import KeyedStateBackend
from lockgate.engine.time.clock import Clock

__all__ = ["BroadcastProcessOperator"]


class BroadcastProcessOperator(ProcessOperator):
    """Runs a ``KeyedBroadcastProcessFunction`` over keyed and broadcast records.

    Keyed records go to ``process_element`` under their key; broadcast ones (marked
    ``SecondInput``) to ``process_broadcast_element``, which may change broadcast state.
    The node's function is a ``BroadcastProcessSpec``: the user's function and the
    descriptors of the broadcast states it may use (operator state, broadcast mode).
    """

    def __init__(
        self,
        node: OperatorNode,
        restored: OperatorSnapshot | None = None,
        clock: Clock | None = None,
        *,
        keyed_state: KeyedStateBackend | None = None,
    ) -> None:
        self._descriptors = node.function.descriptors
        function = node.function.function
        super().__init__(replace(node, function=function), restored, clock, keyed_state=keyed_state)

    def _new_context(self, side_outputs: SideOutputCollector | None) -> ProcessContext[Any]:
        states = BroadcastStates(self.operator_state, self._descriptors)
        self._broadcast_context = BroadcastContext(
            states, side_outputs, timestamped=self.timestamped
        )
        return ReadOnlyBroadcastContext(
            self.keyed_state, states, side_outputs, self._service, timestamped=self.timestamped
        )

    def process_watermark(self, watermark: Watermark) -> tuple[list[Any], Watermark | None]:
        """Fire the event-time timers the watermark reached, then pass it on."""
        self._broadcast_context.watermark = watermark.timestamp
        return super().process_watermark(watermark)

    def process_batch(self, records: list[Any]) -> list[Any]:
        """Keyed records under their key, broadcast records without one; collect output."""
        out: list[Any] = []
        extend = out.extend
        store, key_of, context = self.keyed_state, self._key_of, self._context
        function: KeyedBroadcastProcessFunction[Any, Any, Any, Any] = self.function
        keyed, broadcast = function.process_element, function.process_broadcast_element
        broadcast_context = self._broadcast_context
        context._out = out
        for record in records:
            if type(record) is SecondInput:
                emitted = broadcast(record.value, broadcast_context)
            else:
                store.current_key = key_of(record)
                emitted = keyed(record, context)  # type: ignore[arg-type]
            if emitted is not None:
                extend(emitted)
        return out
