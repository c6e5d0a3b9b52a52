"""Interval joins: ``a.key_by(...).interval_join(b.key_by(...)).between(lower, upper).process(fn)``.

Flink's ``KeyedStream.intervalJoin``: a left record at ``l`` joins every right record of
its key at ``r`` with ``l + lower <= r <= l + upper`` (each bound may be excluded), in event
time. Both sides are buffered in keyed state until the watermark passes the last time they
can join; a record at or below the operator's watermark when it arrives is late: dropped (or
sent to its side's late-data side output). The operator is one keyed operator over both inputs,
so checkpoints, savepoints and rescaling carry its buffers and timers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Generic, Self, TypeVar, cast

from lockgate.engine.api.join_time import check_event_time_of_inputs
from lockgate.engine.errors import GraphError
from lockgate.engine.functions.interval_join import IntervalJoinSpec
from lockgate.engine.functions.two_inputs import PerInput
from lockgate.engine.graph.job_graph import OperatorKind

if TYPE_CHECKING:
    from lockgate.engine.api.stream import DataStream, KeyedStream
    from lockgate.engine.functions.process_join import ProcessJoinFunction
    from lockgate.engine.functions.side_outputs import OutputTag

__all__ = ["IntervalJoin", "IntervalJoinMethods", "IntervalJoined"]

T = TypeVar("T")
T1 = TypeVar("T1")
T2 = TypeVar("T2")
K = TypeVar("K")
R = TypeVar("R")


class IntervalJoinMethods(Generic[T, K]):
    """The interval join every ``KeyedStream`` has."""

    def interval_join(self, other: KeyedStream[R, K]) -> IntervalJoin[T, R, K]:
        """Join with ``other``'s records of the same key within an interval of event time.

        See ``IntervalJoin``: ``.between(lower, upper).process(ProcessJoinFunction)``.

        Raises:
            GraphError: ``other`` is not keyed.
        """
        if not other.is_keyed:
            raise GraphError(
                "interval_join() needs both inputs keyed by the join key; got a stream that is "
                "not keyed: call key_by() on it first"
            )
        return IntervalJoin(cast("KeyedStream[T, K]", self), other)


class IntervalJoin(Generic[T1, T2, K]):
    """Two keyed streams to join by event time (Flink's ``KeyedStream.IntervalJoin``).

    Made by ``a.key_by(key_a).interval_join(b.key_by(key_b))``; ``between(lower, upper)``
    gives the interval, relative to each left record's event time, that right records of
    its key must lie in, and returns the ``IntervalJoined`` whose ``process`` adds the
    operator. Interval joins are in event time only.
    """

    def __init__(self, left: KeyedStream[T1, K], right: KeyedStream[T2, K]) -> None:
        self._left = left
        self._right = right

    def between(self, lower: float, upper: float) -> IntervalJoined[T1, T2, K]:
        """Join a left record at ``l`` with the right records from ``l + lower`` to ``l + upper``.

        Both bounds are included; ``lower_bound_exclusive()`` and ``upper_bound_exclusive()``
        exclude them. ``lower <= upper``; a negative ``lower`` reaches back in time.
        """
        return IntervalJoined(self._left, self._right, lower, upper)

    def __repr__(self) -> str:
        return f"<IntervalJoin {self._left!r} and {self._right!r}>"


class IntervalJoined(Generic[T1, T2, K]):
    """An interval join with its bounds; ``process`` adds the operator (Flink's ``IntervalJoined``).

    A record is late when its event time is at or below the operator's watermark as it
    arrives: it joins nothing and is dropped, or sent to the side output
    ``side_output_left_late_data`` or ``side_output_right_late_data`` gives its side. Each
    side reads event time with its own watermark strategy's timestamp assigner.
    ``process`` calls the ``ProcessJoinFunction`` for each pair as soon as its second
    record arrives; the pair's time (``ctx.timestamp()``) is the later of the two.
    """

    def __init__(
        self, left: KeyedStream[T1, K], right: KeyedStream[T2, K], lower: float, upper: float
    ) -> None:
        self._left = left
        self._right = right
        self._lower = lower
        self._upper = upper
        self._lower_inclusive = True
        self._upper_inclusive = True
        self._left_late: OutputTag[Any] | None = None
        self._right_late: OutputTag[Any] | None = None

    def lower_bound_exclusive(self) -> Self:
        """Exclude the lower bound: a right record must come strictly after ``l + lower``."""
        self._lower_inclusive = False
        return self

    def upper_bound_exclusive(self) -> Self:
        """Exclude the upper bound: a right record must come strictly before ``l + upper``."""
        self._upper_inclusive = False
        return self

    def side_output_left_late_data(self, tag: OutputTag[T1]) -> Self:
        """Send left records that come late to side output ``tag`` instead of dropping them."""
        self._left_late = tag
        return self

    def side_output_right_late_data(self, tag: OutputTag[T2]) -> Self:
        """Send right records that come late to side output ``tag`` instead of dropping them."""
        self._right_late = tag
        return self

    def process(
        self,
        fn: ProcessJoinFunction[T1, T2, R],
        *,
        uid: str | None = None,
        name: str | None = None,
        parallelism: int | None = None,
    ) -> DataStream[R]:
        """Run ``fn.process_element(left, right, ctx)`` for every pair within the bounds.

        Raises:
            GraphError: naming the uid, when ``fn`` is not a ``ProcessJoinFunction``, the
                bounds are not ``lower <= upper`` or an input has no event time.
        """
        label = f"interval join '{uid}'" if uid is not None else "interval_join()"
        left, right = self._left, self._right
        check_event_time_of_inputs(left, right, label)
        spec = IntervalJoinSpec(
            lower=self._lower,
            upper=self._upper,
            function=fn,
            lower_inclusive=self._lower_inclusive,
            upper_inclusive=self._upper_inclusive,
            left_late=self._left_late,
            right_late=self._right_late,
        )
        keys = PerInput(_key(left), _key(right))
        return left._derive(
            OperatorKind.INTERVAL_JOIN,
            spec,
            uid=uid,
            name=name,
            parallelism=parallelism,
            key_selector=keys,
            second=right,
        )

    def __repr__(self) -> str:
        return f"<IntervalJoined between({self._lower}, {self._upper})>"


def _key(stream: DataStream[Any]) -> Any:
    assert stream.key_selector is not None, "interval_join() checked both inputs are keyed"
    return stream.key_selector
