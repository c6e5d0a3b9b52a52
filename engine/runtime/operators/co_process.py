"""CoProcessOperator: a ``KeyedCoProcessFunction`` over the records of two connected inputs."""

from __future__ import annotations

from typing import Any

from lockgate.engine.functions.process import KeyedCoProcessFunction
from lockgate.engine.functions.two_inputs import SecondInput
from lockgate.engine.runtime.operators.basic import ProcessOperator

__all__ = ["CoProcessOperator"]


class CoProcessOperator(ProcessOperator):
    """Runs ``process_element1`` or ``process_element2`` per record, under the record's key.

    Records of the second input arrive as ``SecondInput`` (see ``two_inputs``); the key
    selector reads either kind. Timers, side outputs, state and watermarks are the keyed
    process operator's: one key space and one watermark for both inputs.
    """

    def process_batch(self, records: list[Any]) -> list[Any]:
        """Call the function of each record's input under the record's key; collect output."""
        out: list[Any] = []
        extend = out.extend
        store, key_of, context = self.keyed_state, self._key_of, self._context
        function: KeyedCoProcessFunction[Any, Any, Any, Any] = self.function
        first, second = function.process_element1, function.process_element2
        context._out = out
        for record in records:
            store.current_key = key_of(record)
            if type(record) is SecondInput:
                emitted = second(record.value, context)
            else:
                emitted = first(record, context)
            if emitted is not None:
                extend(emitted)
        return out
