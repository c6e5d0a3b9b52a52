"""ConnectedStreams: two streams into one operator with a function per input (``connect``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from lockgate.engine.errors import GraphError
from lockgate.engine.functions.process import KeyedCoProcessFunction
from lockgate.engine.functions.two_inputs import PerInput
from lockgate.engine.graph.job_graph import OperatorKind

if TYPE_CHECKING:
    from lockgate.engine.api.stream import DataStream

__all__ = ["ConnectedStreams"]

T1 = TypeVar("T1")
T2 = TypeVar("T2")
R = TypeVar("R")
K = TypeVar("K")


class ConnectedStreams(Generic[T1, T2]):
    """Two streams, of the same type or not, feeding one operator (Flink's ``ConnectedStreams``).

    Made by ``first.connect(second)``. ``map(fn1, fn2)`` and ``flat_map(fn1, fn2)`` apply
    ``fn1`` to the first stream's records and ``fn2`` to the second's. ``key_by(key1, key2)``
    sends records of both with equal keys to the same subtask, where ``process`` runs a
    ``KeyedCoProcessFunction`` whose keyed state and timers both inputs share. The
    operator's watermark is the minimum of both inputs'; a checkpoint barrier is aligned
    across all its input channels, as for ``union``. Each input keeps the partitioning it
    was given (``key_by``, ``broadcast()``, ``rebalance()``) and parallelism.

    Behind the second stream the job graph gets a stateless map, uid ``<uid>-second-input``,
    chained to it, which marks its records as the second input's.
    """

    def __init__(self, first: DataStream[T1], second: DataStream[T2]) -> None:
        self._first = first
        self._second = second

    @property
    def is_keyed(self) -> bool:
        """Whether both inputs are keyed, so that ``process`` may run on them."""
        return self._first.is_keyed and self._second.is_keyed

    def key_by(self, key1: Callable[[T1], K], key2: Callable[[T2], K]) -> ConnectedStreams[T1, T2]:
        """Key the first input by ``key1`` and the second by ``key2`` (equal keys meet)."""
        return ConnectedStreams(self._first.key_by(key1), self._second.key_by(key2))

    def map(
        self,
        fn1: Callable[[T1], R],
        fn2: Callable[[T2], R],
        *,
        uid: str | None = None,
        name: str | None = None,
        parallelism: int | None = None,
    ) -> DataStream[R]:
        """Emit ``fn1(record)`` for a record of the first input, ``fn2(record)`` for the second."""
        return self._then(OperatorKind.MAP, PerInput(fn1, fn2), uid, name, parallelism)

    def flat_map(
        self,
        fn1: Callable[[T1], Iterable[R]],
        fn2: Callable[[T2], Iterable[R]],
        *,
        uid: str | None = None,
        name: str | None = None,
        parallelism: int | None = None,
    ) -> DataStream[R]:
        """Emit every record of the iterable ``fn1`` or ``fn2`` returns for each input record."""
        return self._then(OperatorKind.FLAT_MAP, PerInput(fn1, fn2), uid, name, parallelism)

    def process(
        self,
        fn: KeyedCoProcessFunction[Any, T1, T2, R],
        *,
        uid: str | None = None,
        name: str | None = None,
        parallelism: int | None = None,
    ) -> DataStream[R]:
        """Run ``fn`` over both inputs' records with per-key state (needs ``key_by`` first).

        Raises:
            GraphError: ``fn`` is not a ``KeyedCoProcessFunction``, or an input is not keyed.
        """
        label = f"process '{uid}'" if uid is not None else "process()"
        if not isinstance(fn, KeyedCoProcessFunction):
            raise GraphError(
                f"{label} on connected streams needs a KeyedCoProcessFunction "
                f"(process_element1, process_element2); got {fn!r}"
            )
        if not self.is_keyed:
            raise GraphError(
                f"{label} on connected streams needs both inputs keyed; call "
                ".key_by(key1, key2) on the connected streams first"
            )
        return self._then(OperatorKind.CO_PROCESS, fn, uid, name, parallelism)

    def _then(
        self,
        kind: OperatorKind,
        fn: Any,
        uid: str | None,
        name: str | None,
        parallelism: int | None,
    ) -> DataStream[Any]:
        first, second = self._first, self._second
        keys = None
        if first.key_selector is not None and second.key_selector is not None:
            keys = PerInput(first.key_selector, second.key_selector)
        return first._derive(
            kind,
            fn,
            uid=uid,
            name=name,
            parallelism=parallelism,
            key_selector=keys,
            second=second,
        )

    def __repr__(self) -> str:
        return f"<ConnectedStreams {self._first!r} and {self._second!r}>"
