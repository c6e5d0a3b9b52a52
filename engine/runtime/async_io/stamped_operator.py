"""StampedAsyncWaitOperator: ``async_map`` on a stream whose records carry timestamps."""

from __future__ import annotations

from typing import Any

from lockgate.engine.events import Watermark
from lockgate.engine.runtime.async_io.operator import AsyncWaitOperator, SideRecord
from lockgate.engine.runtime.async_io.result_queue import AsyncEntry
from lockgate.engine.runtime.snapshots.capture import StateCapture

__all__ = ["StampedAsyncWaitOperator"]


class StampedAsyncWaitOperator(AsyncWaitOperator):
    """An ``AsyncWaitOperator`` whose records are ``(timestamp, value)`` pairs.

    The function is called with the value; each result, a fallback's records and a failed
    record sent to the side output leave with the input's timestamp, ordered or not. The
    records of a checkpoint are stored with their timestamps (``STAMPED_INPUTS``); those an
    operator without event time stored are read too, without a timestamp.
    """

    def _restored_inputs(self) -> list[Any]:
        plain = ((None, record) for record in self._inputs.get())
        return [*plain, *self._stamped_inputs.get()]

    def capture(self, checkpoint_id: int, *, native: bool = False) -> StateCapture:
        """Store the pending records with their timestamps, in input order, then capture."""
        backlog = [record for record in self._backlog if type(record) is not Watermark]
        self._stamped_inputs.update([*self._queue.stamped_inputs(), *backlog])
        self._inputs.update([])
        return super(AsyncWaitOperator, self).capture(checkpoint_id, native=native)

    def _next_entry(self) -> AsyncEntry:
        # As the base class's: the watermarks right behind a record move with it.
        backlog, queue = self._backlog, self._queue
        timestamp, record = backlog.popleft()
        entry = queue.add(record, timestamp)
        while backlog and type(backlog[0]) is Watermark:
            queue.add_watermark(backlog.popleft())
        return entry

    def _complete(self, entry: AsyncEntry, results: list[Any]) -> None:
        timestamp = entry.timestamp
        super()._complete(entry, [(timestamp, result) for result in results])

    def _split_side(self, records: list[Any]) -> list[Any]:
        main: list[Any] = []
        side, tag = self.side_outputs, self._failure_tag
        assert tag is not None, "only an operator with on_failure=tag has side records"
        for timestamp, record in records:
            if type(record) is not SideRecord:
                main.append((timestamp, record))
                continue
            self._side_pending -= 1
            if side is not None:
                side.collect(tag, (timestamp, record.record))
        return main
