"""ProcessJoinFunction and its context: what an interval join calls for each joined pair."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Generic, TypeVar

from lockgate.engine.functions.process import ProcessContext, RuntimeContext
from lockgate.engine.functions.side_outputs import OutputTag

__all__ = ["ProcessJoinContext", "ProcessJoinFunction"]

IN1 = TypeVar("IN1")
IN2 = TypeVar("IN2")
OUT = TypeVar("OUT")
V = TypeVar("V")


class ProcessJoinContext:
    """What ``ProcessJoinFunction.process_element`` is told about the pair it gets (Flink's).

    ``left_timestamp()`` and ``right_timestamp()`` are the event times of the two records;
    ``timestamp()`` is the joined record's, the later of the two (as in Flink). ``output``
    sends a record to a side output, read with ``stream.side_output(tag)``.
    """

    __slots__ = ("_left", "_process", "_right")

    def __init__(self, process_context: ProcessContext[Any]) -> None:
        self._process = process_context
        self._left = self._right = 0.0

    def of(self, left: float, right: float) -> ProcessJoinContext:
        """Set the pair's timestamps (the operator does, before each call); return self."""
        self._left, self._right = left, right
        return self

    def left_timestamp(self) -> float:
        """The event time of the left record."""
        return self._left

    def right_timestamp(self) -> float:
        """The event time of the right record."""
        return self._right

    def timestamp(self) -> float:
        """The joined record's event time: the later of the two records' (Flink's max)."""
        return max(self._left, self._right)

    def output(self, tag: OutputTag[V], value: V) -> None:
        """Emit ``value`` to the side output ``tag``; read it with ``stream.side_output(tag)``.

        Raises:
            TypeError: ``tag`` is not an ``OutputTag``.
        """
        self._process.output(tag, value)

    def __repr__(self) -> str:
        return f"<ProcessJoinContext left={self._left} right={self._right}>"


class ProcessJoinFunction(Generic[IN1, IN2, OUT]):
    """Turns each pair an interval join finds into records (Flink's ``ProcessJoinFunction``).

    ``process_element`` is called once per pair of a left and a right record with equal
    keys whose event times lie within the join's bounds, as soon as the later of the two
    arrives, with the state of their key; it returns (or yields) the records to emit.
    ``open`` runs once per subtask before the first pair (declare keyed state there, as in
    a ``KeyedProcessFunction``), ``close`` once at the end.
    """

    def open(self, context: RuntimeContext) -> None:
        """Declare state and acquire resources."""

    def process_element(
        self, left: IN1, right: IN2, ctx: ProcessJoinContext
    ) -> Iterable[OUT] | None:
        """Handle one joined pair; return or yield the records to emit."""
        raise NotImplementedError(f"{type(self).__name__} must implement process_element")

    def close(self) -> None:
        """Release resources."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"
