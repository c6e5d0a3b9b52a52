"""The event-time paths of map, filter, flat_map, reduce and aggregate: records with timestamps.

Downstream of a watermark strategy, as far as a process function or a window may read it
(``settle_timestamps``), a record travels as a ``(timestamp, value)`` pair (Flink's
``StreamRecord``): through chains as plain lists of pairs, through channels and channel
state the same way. User functions see the value only; each operator here gives what it
emits the timestamp of the record it came from. ``create_operator`` picks these classes by
``OperatorNode.timestamped``, so a job without event time never builds them and its
operators handle no timestamps at all.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from lockgate.engine.runtime.operators.basic import (
    FilterOperator,
    FlatMapOperator,
    MapOperator,
    fill,
)
from lockgate.engine.runtime.operators.rolling import (
    MISSING,
    AggregateOperator,
    ReduceOperator,
)

__all__ = [
    "StampedAggregateOperator",
    "StampedFilterOperator",
    "StampedFlatMapOperator",
    "StampedMapOperator",
    "StampedReduceOperator",
]


class StampedMapOperator(MapOperator):
    """Emits ``(timestamp, fn(value))`` for each ``(timestamp, value)``."""

    def process_batch(self, records: list[Any]) -> list[Any]:
        """Apply the function to each value; keep its timestamp."""
        fn = self.function
        return [(timestamp, fn(value)) for timestamp, value in records]


class StampedFilterOperator(FilterOperator):
    """Keeps the records whose value the predicate accepts, timestamps unchanged."""

    def process_batch(self, records: list[Any]) -> list[Any]:
        """Keep the records the predicate accepts."""
        predicate = self.function
        return [record for record in records if predicate(record[1])]


class StampedFlatMapOperator(FlatMapOperator):
    """Emits every element of ``fn(value)``, each with the timestamp of its value."""

    def process_batch(self, records: list[Any]) -> list[Any]:
        """Concatenate the function's results, stamped."""
        out: list[Any] = []
        append = out.append
        fn = self.function
        for timestamp, value in records:
            for result in fn(value):
                append((timestamp, result))
        return out

    def chunks(self, records: list[Any], limit: int) -> Iterator[list[Any]]:
        """Yield the function's stamped results in order, in lists of about ``limit``."""
        out: list[Any] = []
        fn = self.function
        for timestamp, value in records:
            result = fn(value)
            if type(result) is list or type(result) is tuple:
                out.extend([(timestamp, item) for item in result])
            else:
                yield from fill(out, ((timestamp, item) for item in result), limit)
            if len(out) >= limit:
                yield out
                out = []
        if out:
            yield out


class StampedReduceOperator(ReduceOperator):
    """Per key, keeps ``fn(previous, value)``; emits it with the timestamp of ``value``."""

    def process_batch(self, records: list[Any]) -> list[Any]:
        """Fold each value into its key's running value; emit the new value, stamped."""
        fn, key_of, table = self._fn, self._key_of, self._table
        out: list[Any] = []
        append = out.append
        for timestamp, record in records:
            key = key_of(record)
            previous = table.get(key, MISSING)
            value = record if previous is MISSING else fn(previous, record)
            table[key] = value
            append((timestamp, value))
        return out


class StampedAggregateOperator(AggregateOperator):
    """Per key, adds each value to the accumulator; emits the result with its timestamp."""

    def process_batch(self, records: list[Any]) -> list[Any]:
        """Add each value to its key's accumulator; emit the result, stamped."""
        store, key_of, state = self.keyed_state, self._key_of, self._state
        add, result = state.add, state.get
        out: list[Any] = []
        append = out.append
        for timestamp, record in records:
            store.current_key = key_of(record)
            add(record)
            append((timestamp, result()))
        return out
