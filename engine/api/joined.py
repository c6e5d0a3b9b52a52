"""Window joins: ``a.join(b)`` and ``a.co_group(b)``, then where, equal_to, window and apply.

Built as Flink builds them, on the window machinery: both inputs feed one window operator,
the right input's records marked as the second input's, keyed by the join key (``where``
on the left, ``equal_to`` on the right), cut into windows by the assigner; when a window
fires, a window function splits its records back into the two sides and calls the join
(every pair) or co-group (both lists) function. Window contents, timers and triggers are
keyed state, so checkpoints, savepoints and rescaling carry a join's windows as any
window's. Results are emitted when a window fires, as a window's are.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Generic, Self, TypeVar, cast

from lockgate.engine.api.join_time import check_event_time_of_inputs
from lockgate.engine.errors import GraphError
from lockgate.engine.functions.joins import (
    CoGroup,
    CoGroupFunction,
    FlatJoinFunction,
    JoinFunction,
    co_group_of,
    pairs_of,
)
from lockgate.engine.functions.two_inputs import PerInput
from lockgate.engine.graph.job_graph import OperatorKind
from lockgate.engine.windows.co_group import CoGroupWindowFunction
from lockgate.engine.windows.spec import WindowFunctionKind, WindowSpec

if TYPE_CHECKING:
    from lockgate.engine.api.stream import DataStream
    from lockgate.engine.windows.assigners import WindowAssigner
    from lockgate.engine.windows.evictors import Evictor
    from lockgate.engine.windows.trigger import Trigger

__all__ = ["CoGroupedStreams", "JoinMethods", "JoinedStreams", "WindowedCoGroup", "WindowedJoin"]

T = TypeVar("T")
T1 = TypeVar("T1")
T2 = TypeVar("T2")
R = TypeVar("R")
Key = Callable[[Any], Any]


class JoinMethods(Generic[T]):
    """The window joins every ``DataStream`` has: ``join`` and ``co_group``."""

    def join(self, other: DataStream[R]) -> JoinedStreams[T, R]:
        """Join with ``other`` in windows, pair by pair: see ``JoinedStreams``.

        ``a.join(b).where(key_a).equal_to(key_b).window(assigner).apply(fn)`` emits
        ``fn(left, right)`` for every left and right record with equal keys in one window
        (an inner join), when the window fires.
        """
        return JoinedStreams(cast("DataStream[T]", self), other)

    def co_group(self, other: DataStream[R]) -> CoGroupedStreams[T, R]:
        """Group with ``other`` per key and window: see ``CoGroupedStreams``.

        ``a.co_group(b).where(key_a).equal_to(key_b).window(assigner).apply(fn)`` emits what
        ``fn(lefts, rights)`` returns for each key and window with a record of either side.
        """
        return CoGroupedStreams(cast("DataStream[T]", self), other)


class _KeyedPair(Generic[T1, T2]):
    """Two streams, and the key selectors ``where`` and ``equal_to`` gave them so far."""

    _operation = "join"

    def __init__(
        self,
        first: DataStream[T1],
        second: DataStream[T2],
        key1: Key | None = None,
        key2: Key | None = None,
    ) -> None:
        self._first = first
        self._second = second
        self._key1 = key1
        self._key2 = key2

    def where(self, key: Callable[[T1], Any]) -> Self:
        """Read the join key of each left record with ``key``."""
        return type(self)(self._first, self._second, key, None)

    def equal_to(self, key: Callable[[T2], Any]) -> Self:
        """Read the join key of each right record with ``key``; equal keys meet.

        Raises:
            GraphError: ``where()`` was not called first.
        """
        if self._key1 is None:
            raise GraphError(
                f"{self._operation}().equal_to() keys the right input; key the left one first: "
                f"a.{self._operation}(b).where(key_a).equal_to(key_b)"
            )
        return type(self)(self._first, self._second, self._key1, key)

    def _keys(self) -> tuple[Key, Key]:
        if self._key1 is None or self._key2 is None:
            raise GraphError(
                f"{self._operation}().window() needs the join key of both inputs: "
                f"a.{self._operation}(b).where(key_a).equal_to(key_b).window(assigner)"
            )
        return self._key1, self._key2

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self._first!r} and {self._second!r}>"


class JoinedStreams(_KeyedPair[T1, T2]):
    """Two streams to join in windows, pair by pair (Flink's ``JoinedStreams``).

    Made by ``a.join(b)``. ``where(key_a)`` reads the join key of the left records,
    ``equal_to(key_b)`` that of the right ones; ``window(assigner)`` cuts both into the same
    windows per key and returns a ``WindowedJoin``, whose ``apply`` adds the operator. Records
    of one side only never emit: an inner join (``co_group`` gives outer joins).
    """

    def window(self, assigner: WindowAssigner) -> WindowedJoin[T1, T2]:
        """Join the records of each key within each window ``assigner`` gives them.

        Raises:
            GraphError: ``where()`` and ``equal_to()`` did not come first.
        """
        return WindowedJoin(self._first, self._second, *self._keys(), assigner)


class CoGroupedStreams(_KeyedPair[T1, T2]):
    """Two streams grouped together per key and window (Flink's ``CoGroupedStreams``).

    Made by ``a.co_group(b)``; ``where``, ``equal_to`` and ``window`` as for ``join``, and
    ``WindowedCoGroup.apply(fn)`` calls ``fn(lefts, rights)`` once per key and window that
    holds a record of either side: one list may be empty, so left, right and full outer
    joins are written with it.
    """

    _operation = "co_group"

    def window(self, assigner: WindowAssigner) -> WindowedCoGroup[T1, T2]:
        """Group the records of each key within each window ``assigner`` gives them.

        Raises:
            GraphError: ``where()`` and ``equal_to()`` did not come first.
        """
        return WindowedCoGroup(self._first, self._second, *self._keys(), assigner)


class _WindowedPair(Generic[T1, T2]):
    """Two keyed streams cut into windows; a trigger, evictor and lateness may be set."""

    _operation = "join"

    def __init__(
        self,
        first: DataStream[T1],
        second: DataStream[T2],
        key1: Key,
        key2: Key,
        assigner: WindowAssigner,
    ) -> None:
        self._first = first
        self._second = second
        self._keys = PerInput(key1, key2)
        self._assigner = assigner
        self._trigger: Trigger[Any, Any] | None = None
        self._evictor: Evictor[Any, Any] | None = None
        self._lateness = 0.0

    def trigger(self, trigger: Trigger[Any, Any]) -> Self:
        """Fire the windows with ``trigger`` instead of the assigner's default."""
        self._trigger = trigger
        return self

    def evictor(self, evictor: Evictor[Any, Any]) -> Self:
        """Remove records from each firing window with ``evictor`` before the function."""
        self._evictor = evictor
        return self

    def allowed_lateness(self, seconds: float) -> Self:
        """Keep windows ``seconds`` after their end: a late record fires its window again."""
        self._lateness = seconds
        return self

    def _then(
        self, co_group: CoGroup, uid: str | None, name: str | None, parallelism: int | None
    ) -> DataStream[Any]:
        label = _label(self._operation, uid)
        first, second = self._first.key_by(self._keys.first), self._second.key_by(self._keys.second)
        if getattr(self._assigner, "is_event_time", False):
            check_event_time_of_inputs(first, second, label)
        spec = WindowSpec(
            assigner=self._assigner,
            kind=WindowFunctionKind.PROCESS,
            function=CoGroupWindowFunction(co_group),
            trigger=self._trigger,
            evictor=self._evictor,
            allowed_lateness=self._lateness,
        )
        return first._derive(
            OperatorKind.WINDOW,
            spec,
            uid=uid,
            name=name,
            parallelism=parallelism,
            key_selector=self._keys,
            second=second,
        )

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self._first!r} and {self._second!r} by {self._assigner!r}>"


class WindowedJoin(_WindowedPair[T1, T2]):
    """A window join with its windows; ``apply`` adds the operator (Flink's ``WithWindow``).

    ``trigger``, ``evictor`` and ``allowed_lateness`` work as on a ``WindowedStream``: a
    trigger or evictor sees the right input's records wrapped in ``SecondInput`` (its
    ``value`` is the record), as Flink's see ``TaggedUnion``. Event-time windows read each
    side's event time with its own watermark strategy's timestamp assigner; a record late
    for every window is dropped. The window's state (both sides' records, its timers) is
    keyed state of the join key.
    """

    def apply(
        self,
        fn: JoinFunction[T1, T2, R] | FlatJoinFunction[T1, T2, R] | Callable[[T1, T2], R],
        *,
        uid: str | None = None,
        name: str | None = None,
        parallelism: int | None = None,
    ) -> DataStream[R]:
        """Emit ``fn(left, right)`` for every pair of a key's window when it fires.

        A ``FlatJoinFunction`` emits every record its ``join`` returns instead, none or
        many. Pairs come left-major, each side in arrival order.

        Raises:
            GraphError: naming the uid, when ``fn`` is none of these or a window option
                is invalid.
        """
        if not isinstance(fn, JoinFunction | FlatJoinFunction) and not callable(fn):
            raise GraphError(
                f"{_label('join', uid)}.apply() needs a JoinFunction, a FlatJoinFunction or a "
                f"function of a left and a right record; got {fn!r}"
            )
        return self._then(pairs_of(fn), uid, name, parallelism)


class WindowedCoGroup(_WindowedPair[T1, T2]):
    """A co-group with its windows; ``apply`` adds the operator (Flink's ``WithWindow``).

    As ``WindowedJoin``, but the function gets a key's window whole: the left records and
    the right records, each in arrival order, either list possibly empty.
    """

    _operation = "co_group"

    def apply(
        self,
        fn: CoGroupFunction[T1, T2, R] | Callable[[list[T1], list[T2]], Iterable[R] | None],
        *,
        uid: str | None = None,
        name: str | None = None,
        parallelism: int | None = None,
    ) -> DataStream[R]:
        """Emit what ``fn(lefts, rights)`` returns for each key and window when it fires.

        Raises:
            GraphError: naming the uid, when ``fn`` is neither a ``CoGroupFunction`` nor
                callable, or a window option is invalid.
        """
        if not isinstance(fn, CoGroupFunction) and not callable(fn):
            raise GraphError(
                f"{_label('co_group', uid)}.apply() needs a CoGroupFunction or a function of "
                f"the left and the right records (two lists); got {fn!r}"
            )
        return self._then(co_group_of(fn), uid, name, parallelism)


def _label(operation: str, uid: str | None) -> str:
    """How errors name a join: by its uid, else by the operation."""
    return f"{operation} '{uid}'" if uid is not None else f"{operation}()"
