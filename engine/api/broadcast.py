"""BroadcastStream and BroadcastConnectedStream: the API of the broadcast state pattern."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Generic, TypeVar

from lockgate.engine.errors import GraphError
from lockgate.engine.functions.broadcast import BroadcastProcessSpec, KeyedBroadcastProcessFunction
from lockgate.engine.graph.job_graph import OperatorKind
from lockgate.engine.state import MapStateDescriptor

if TYPE_CHECKING:
    from lockgate.engine.api.stream import DataStream

__all__ = ["BroadcastConnectedStream", "BroadcastStream"]

T = TypeVar("T")
B = TypeVar("B")
R = TypeVar("R")


class BroadcastStream(Generic[B]):
    """A stream sent whole to every subtask, with the broadcast states it may write.

    Made by ``stream.broadcast(descriptor, ...)`` with one or more ``MapStateDescriptor``s;
    connect a keyed stream to it (``keyed.connect(broadcast_stream)``) and ``process`` the
    pair with a ``KeyedBroadcastProcessFunction``.
    """

    def __init__(
        self, stream: DataStream[B], descriptors: tuple[MapStateDescriptor[Any, Any], ...]
    ) -> None:
        for descriptor in descriptors:
            if not isinstance(descriptor, MapStateDescriptor):
                raise GraphError(
                    f"broadcast() takes MapStateDescriptors (the broadcast states); got "
                    f"{descriptor!r}"
                )
        self.stream = stream
        self.descriptors = descriptors

    def __repr__(self) -> str:
        names = ", ".join(descriptor.name for descriptor in self.descriptors)
        return f"<BroadcastStream of {self.stream!r} with state {names}>"


class BroadcastConnectedStream(Generic[T, B]):
    """A keyed stream and a broadcast stream, for one ``KeyedBroadcastProcessFunction``.

    The operator keeps the broadcast states (operator state in broadcast mode: checkpoints
    keep it, a restore at another parallelism gives every subtask a copy) and the keyed
    stream's keyed state and timers. Behind the broadcast stream the graph gets a stateless
    map, uid ``<uid>-second-input``, as for ``connect``.
    """

    def __init__(self, keyed: DataStream[T], broadcast: BroadcastStream[B]) -> None:
        self._keyed = keyed
        self._broadcast = broadcast

    def process(
        self,
        fn: KeyedBroadcastProcessFunction[Any, T, B, R],
        *,
        uid: str | None = None,
        name: str | None = None,
        parallelism: int | None = None,
    ) -> DataStream[R]:
        """Run ``fn`` over the keyed records and, on every subtask, the broadcast ones.

        Raises:
            GraphError: ``fn`` is not a ``KeyedBroadcastProcessFunction``, or the first
                stream is not keyed.
        """
        label = f"process '{uid}'" if uid is not None else "process()"
        if not isinstance(fn, KeyedBroadcastProcessFunction):
            raise GraphError(
                f"{label} on a broadcast connected stream needs a KeyedBroadcastProcessFunction "
                f"(process_element, process_broadcast_element); got {fn!r}"
            )
        keyed = self._keyed
        if not keyed.is_keyed:
            raise GraphError(
                f"{label} on a broadcast connected stream needs a keyed first stream; call "
                "key_by() before connect() (non-keyed broadcast process functions are not "
                "supported yet)"
            )
        spec = BroadcastProcessSpec(fn, self._broadcast.descriptors)
        return keyed._derive(
            OperatorKind.BROADCAST_PROCESS,
            spec,
            uid=uid,
            name=name,
            parallelism=parallelism,
            second=self._broadcast.stream,
        )

    def __repr__(self) -> str:
        return f"<BroadcastConnectedStream {self._keyed!r} and {self._broadcast!r}>"
