"""The event-time paths of process, connected and broadcast process, and window operators.

Records are ``(timestamp, value)`` pairs (see ``stamped``). Per record, the context's
``timestamp()`` is the record's; what the function returns or yields is stamped with it,
what it sends with ``ctx.output`` too, and ``ctx.collect_with_timestamp`` gives a record a
timestamp of its own. A timer's output carries the timer's time when the watermark fired it
and no timestamp when the clock did (Flink's ``KeyedProcessOperator`` erases it there);
``ctx.timestamp()`` is the timer's time either way. A window runner stamps its results
with their window's ``max_timestamp`` itself.
"""

from __future__ import annotations

from typing import Any

from lockgate.engine.functions.broadcast import KeyedBroadcastProcessFunction
from lockgate.engine.functions.process import KeyedCoProcessFunction
from lockgate.engine.functions.timers import TimeDomain, TimerQueue
from lockgate.engine.functions.two_inputs import SecondInput
from lockgate.engine.runtime.operators.basic import ProcessOperator
from lockgate.engine.runtime.operators.broadcast_process import BroadcastProcessOperator
from lockgate.engine.runtime.operators.window_operator import WindowOperator

__all__ = [
    "StampedBroadcastProcessOperator",
    "StampedCoProcessOperator",
    "StampedProcessOperator",
    "StampedWindowOperator",
]


class StampedProcessOperator(ProcessOperator):
    """A keyed process operator over records with timestamps."""

    timestamped = True

    def process_batch(self, records: list[Any]) -> list[Any]:
        """Call the function per value under its key, its timestamp in the context."""
        out: list[Any] = []
        append = out.append
        store, key_of, context = self.keyed_state, self._key_of, self._context
        context._out = out
        process_element = self.function.process_element
        for timestamp, record in records:
            store.current_key = key_of(record)
            context._timestamp = timestamp
            emitted = process_element(record, context)
            if emitted is not None:
                for item in emitted:  # one at a time: in order with collect_with_timestamp
                    append((timestamp, item))
        return out

    def _fire(self, queue: TimerQueue, time: float, domain: TimeDomain) -> list[Any]:
        out: list[Any] = []
        append = out.append
        store, context, on_timer = self.keyed_state, self._context, self._fn.on_timer
        context.time_domain, context._out = domain, out
        event_time = domain is TimeDomain.EVENT_TIME
        try:
            for key, timestamp in queue.pop_due(time):
                store.current_key = key
                context._timestamp = timestamp
                emitted = on_timer(timestamp, context)
                stamp = timestamp if event_time else None
                for item in emitted or ():
                    append((stamp, item))
        finally:
            context.time_domain = context._timestamp = None
        return out


class StampedCoProcessOperator(StampedProcessOperator):
    """A keyed co-process operator over records with timestamps (both inputs)."""

    def process_batch(self, records: list[Any]) -> list[Any]:
        """Call the function of each value's input under its key; stamp what it emits."""
        out: list[Any] = []
        append = out.append
        store, key_of, context = self.keyed_state, self._key_of, self._context
        function: KeyedCoProcessFunction[Any, Any, Any, Any] = self.function
        first, second = function.process_element1, function.process_element2
        context._out = out
        for timestamp, record in records:
            store.current_key = key_of(record)
            context._timestamp = timestamp
            if type(record) is SecondInput:
                emitted = second(record.value, context)
            else:
                emitted = first(record, context)
            for item in emitted or ():
                append((timestamp, item))
        return out


class StampedBroadcastProcessOperator(BroadcastProcessOperator, StampedProcessOperator):
    """A keyed broadcast process operator over records with timestamps (both inputs)."""

    def process_batch(self, records: list[Any]) -> list[Any]:
        """Keyed values under their key, broadcast ones without; stamp what is emitted."""
        out: list[Any] = []
        append = out.append
        store, key_of, context = self.keyed_state, self._key_of, self._context
        function: KeyedBroadcastProcessFunction[Any, Any, Any, Any] = self.function
        keyed, broadcast = function.process_element, function.process_broadcast_element
        broadcast_context = self._broadcast_context
        context._out = out
        for timestamp, record in records:
            if type(record) is SecondInput:
                broadcast_context._timestamp = timestamp
                emitted = broadcast(record.value, broadcast_context)
            else:
                store.current_key = key_of(record)
                context._timestamp = timestamp
                emitted = keyed(record, context)  # type: ignore[arg-type]
            for item in emitted or ():
                append((timestamp, item))
        return out


class StampedWindowOperator(WindowOperator, StampedProcessOperator):
    """A window operator over records with timestamps: event time is what they carry."""
