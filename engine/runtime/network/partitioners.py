"""Partitioners: which downstream subtask receives each record of a batch.

Keyed edges route by key group (``lockgate.engine.state.key_groups``); the others forward,
broadcast or deal records out round-robin. On a stream with event time records travel as
``(timestamp, value)`` pairs: ``StampedKeyGroupPartitioner`` reads the key of the value, and
``StampingPartitioner`` gives records of an input without timestamps the timestamp ``None``
where they join a stream with them (a union, a connect).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lockgate.engine.state.key_groups import key_group_for, stable_hash, subtask_for_key_group

__all__ = [
    "BroadcastPartitioner",
    "ForwardPartitioner",
    "KeyGroupPartitioner",
    "Partitioner",
    "RebalancePartitioner",
    "StampedKeyGroupPartitioner",
    "StampingPartitioner",
]

_ROUTE_CACHE_LIMIT = 1 << 16


class Partitioner:
    """Routes a batch of records into one buffer per downstream channel.

    ``route(records, buffers)`` appends every record to the buffer (or buffers) of the
    channels it goes to; ``buffers[i]`` feeds downstream subtask ``i``.
    """

    def route(self, records: list[Any], buffers: list[list[Any]]) -> None:
        """Append each record to the buffers of the channels it goes to."""
        raise NotImplementedError


class ForwardPartitioner(Partitioner):
    """Every record goes to the one channel of the same subtask index."""

    def route(self, records: list[Any], buffers: list[list[Any]]) -> None:
        """Append all records to the single buffer."""
        buffers[0].extend(records)


class BroadcastPartitioner(Partitioner):
    """Every record goes to every downstream subtask."""

    def route(self, records: list[Any], buffers: list[list[Any]]) -> None:
        """Append all records to every buffer."""
        for buffer in buffers:
            buffer.extend(records)


class RebalancePartitioner(Partitioner):
    """Records go round-robin over the downstream subtasks, starting where the last batch ended."""

    def __init__(self, start: int = 0) -> None:
        self._next = start

    def route(self, records: list[Any], buffers: list[list[Any]]) -> None:
        """Deal the records out in turn, one each."""
        count = len(buffers)
        for offset in range(count):
            buffers[(self._next + offset) % count].extend(records[offset::count])
        self._next = (self._next + len(records)) % count


class KeyGroupPartitioner(Partitioner):
    """Records go to the subtask that owns their key's key group.

    Routes are cached per key (the cache is cleared when it grows past 65,536 keys), so a
    key's hash is computed once while it stays hot.
    """

    def __init__(
        self,
        key_selector: Callable[[Any], Any],
        max_parallelism: int,
        *,
        on_failure: Callable[[BaseException], Exception] | None = None,
    ) -> None:
        self._key_selector = key_selector
        self._max_parallelism = max_parallelism
        self._routes: dict[Any, int] = {}
        self._on_failure = on_failure

    def route(self, records: list[Any], buffers: list[list[Any]]) -> None:
        """Append each record to the buffer of the subtask owning its key group."""
        key_of = self._key_selector
        routes = self._routes
        appenders = [buffer.append for buffer in buffers]
        record = None
        try:
            for record in records:
                key = key_of(record)
                target = routes.get(key)
                if target is None:
                    target = self._learn(key, len(buffers))
                appenders[target](record)
        except Exception as error:
            cause = self._cause(record, error)
            if self._on_failure is None:
                raise cause from None
            raise self._on_failure(cause) from cause

    def _cause(self, record: Any, error: Exception) -> Exception:
        """The key selector's own error, or the one saying why its key cannot be hashed."""
        try:
            stable_hash(self._key_selector(record))
        except Exception as cause:
            return cause
        return error

    def _learn(self, key: Any, parallelism: int) -> int:
        if len(self._routes) >= _ROUTE_CACHE_LIMIT:
            self._routes.clear()
        group = key_group_for(key, self._max_parallelism)
        target = self._routes[key] = subtask_for_key_group(
            group, self._max_parallelism, parallelism
        )
        return target


class StampedKeyGroupPartitioner(KeyGroupPartitioner):
    """A ``KeyGroupPartitioner`` for ``(timestamp, value)`` pairs: the key is the value's."""

    def route(self, records: list[Any], buffers: list[list[Any]]) -> None:
        """Append each pair to the buffer of the subtask owning its value's key group."""
        key_of = self._key_selector
        routes = self._routes
        appenders = [buffer.append for buffer in buffers]
        record: Any = (None, None)
        try:
            for record in records:
                key = key_of(record[1])
                target = routes.get(key)
                if target is None:
                    target = self._learn(key, len(buffers))
                appenders[target](record)
        except Exception as error:
            cause = self._cause(record[1], error)
            if self._on_failure is None:
                raise cause from None
            raise self._on_failure(cause) from cause


class StampingPartitioner(Partitioner):
    """Routes records without timestamps as ``(None, record)`` pairs, with ``inner``.

    For an edge from an operator whose records carry no timestamps (it has no event time,
    or nothing downstream of its watermark strategy reads them) into one whose records
    carry them: what reads a record's event time there fails naming the record.
    """

    def __init__(self, inner: Partitioner) -> None:
        self._inner = inner

    def route(self, records: list[Any], buffers: list[list[Any]]) -> None:
        """Stamp each record ``None``, then route it."""
        self._inner.route([(None, record) for record in records], buffers)
