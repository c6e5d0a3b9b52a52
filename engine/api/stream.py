"""DataStream and KeyedStream: the fluent API; each call adds an operator to the job graph."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any, Generic, TypeVar, overload

from lockgate.engine.api.broadcast import BroadcastConnectedStream, BroadcastStream
from lockgate.engine.api.connected import ConnectedStreams
from lockgate.engine.api.data_stream_sink import DataStreamSink
from lockgate.engine.api.interval_join import IntervalJoinMethods
from lockgate.engine.api.joined import JoinMethods
from lockgate.engine.api.windowed import WindowedStream, count_windows
from lockgate.engine.errors import GraphError
from lockgate.engine.functions.async_io import AsyncMapSpec, AsyncRetry, FailurePolicy
from lockgate.engine.functions.side_outputs import OutputTag
from lockgate.engine.functions.two_inputs import PerInput, SecondInput
from lockgate.engine.graph.builder import GraphBuilder, Producer
from lockgate.engine.graph.job_graph import (
    ChainingStrategy,
    OperatorKind,
    OperatorNode,
    Partitioning,
)
from lockgate.engine.state.descriptors import MapStateDescriptor

if TYPE_CHECKING:
    from lockgate.engine.functions.process import KeyedProcessFunction
    from lockgate.engine.io.sinks import Sink
    from lockgate.engine.state import AggregateFunction
    from lockgate.engine.time.watermarks import WatermarkStrategy
    from lockgate.engine.windows.assigners import WindowAssigner

__all__ = ["DataStream", "KeyedStream"]

T = TypeVar("T")
R = TypeVar("R")
K = TypeVar("K")


class DataStream(JoinMethods[T]):
    """A stream of records produced by one or more operators (several after ``union``).

    Every transformation returns a new stream and adds one operator to the environment's job
    graph (through the ``GraphBuilder`` its streams share); nothing runs until
    ``env.execute`` or ``env.start``. Each takes ``uid=`` (stable identity of the operator
    and its state; give one to every stateful operator), ``name=`` (for humans, defaults to
    the uid) and ``parallelism=`` (defaults to the environment's). ``join`` and
    ``co_group`` (window joins) and a keyed stream's ``interval_join`` pair it with another.
    """

    def __init__(
        self,
        builder: GraphBuilder,
        producers: tuple[Producer, ...],
        partitioning: Partitioning | None = None,
        key_selector: Callable[[Any], Any] | None = None,
    ) -> None:
        self._builder = builder
        self._producers = producers
        self._partitioning = partitioning
        self._key_selector = key_selector

    @property
    def is_keyed(self) -> bool:
        """Whether the stream is partitioned by key (``key_by``), so keyed state is available."""
        return self._partitioning is Partitioning.HASH

    @property
    def key_selector(self) -> Callable[[Any], Any] | None:
        """The function that reads each record's key, on a keyed stream; else ``None``."""
        return self._key_selector

    def map(
        self,
        fn: Callable[[T], R],
        *,
        uid: str | None = None,
        name: str | None = None,
        parallelism: int | None = None,
    ) -> DataStream[R]:
        """Emit ``fn(record)`` for each record."""
        return self._derive(OperatorKind.MAP, fn, uid, name, parallelism)

    def filter(
        self,
        predicate: Callable[[T], bool],
        *,
        uid: str | None = None,
        name: str | None = None,
        parallelism: int | None = None,
    ) -> DataStream[T]:
        """Keep the records for which ``predicate`` is true."""
        return self._derive(OperatorKind.FILTER, predicate, uid, name, parallelism)

    def flat_map(
        self,
        fn: Callable[[T], Iterable[R]],
        *,
        uid: str | None = None,
        name: str | None = None,
        parallelism: int | None = None,
    ) -> DataStream[R]:
        """Emit every record of the iterable ``fn(record)`` returns."""
        return self._derive(OperatorKind.FLAT_MAP, fn, uid, name, parallelism)

    def reduce(
        self,
        fn: Callable[[T, T], T],
        *,
        uid: str | None = None,
        name: str | None = None,
        parallelism: int | None = None,
    ) -> DataStream[T]:
        """Per key, emit the running ``fn(previous, record)`` (needs a keyed stream)."""
        return self._derive(OperatorKind.REDUCE, fn, uid, name, parallelism)

    def aggregate(
        self,
        fn: AggregateFunction[T, Any, R],
        *,
        uid: str | None = None,
        name: str | None = None,
        parallelism: int | None = None,
    ) -> DataStream[R]:
        """Per key, fold each record into an accumulator and emit its result (needs a keyed stream).

        A rolling aggregate: the key's accumulator starts as ``fn.create_accumulator()``,
        takes each record through ``fn.add`` and is kept in keyed state (so checkpoints,
        savepoints and rescaling carry it); after each record ``fn.get_result`` is emitted.
        ``add`` may change the accumulator in place: a snapshot never sees the change.
        """
        return self._derive(OperatorKind.AGGREGATE, fn, uid, name, parallelism)

    def process(
        self,
        fn: KeyedProcessFunction[Any, T, R],
        *,
        uid: str | None = None,
        name: str | None = None,
        parallelism: int | None = None,
    ) -> DataStream[R]:
        """Run a ``KeyedProcessFunction`` over each record with its per-key state."""
        return self._derive(OperatorKind.PROCESS, fn, uid, name, parallelism)

    def async_map(  # noqa: PLR0913 - DESIGN.md's option set, all keyword-only
        self,
        fn: Callable[[T], Awaitable[R]],
        *,
        capacity: int = 100,
        timeout: float | None = None,
        ordered: bool = True,
        retry: AsyncRetry | None = None,
        on_failure: FailurePolicy = "fail",
        rate_limit: float | None = None,
        uid: str | None = None,
        name: str | None = None,
        parallelism: int | None = None,
    ) -> DataStream[R]:
        """Emit ``await fn(record)`` for each record, with up to ``capacity`` calls at once.

        Flink's async I/O. Each subtask keeps at most ``capacity`` records in flight (called,
        or with a result waiting for its turn) and reads no input while full, so a slow
        service backpressures the sources. ``ordered`` emits results in input order;
        otherwise as calls complete, never across a watermark. ``timeout`` (seconds on the
        job's clock) cuts each call; ``retry`` retries failed and timed-out calls with
        backoff; ``on_failure`` is ``"fail"`` (the job fails with an ``OperatorError``),
        ``"retry"`` (the default ``AsyncRetry()``, then fail), an ``OutputTag`` (the failed
        input record goes to that side output, read with ``side_output(tag)``, leaving when
        its result would have) or ``(record, error) -> iterable`` giving the records to
        emit instead. ``rate_limit`` caps the calls the operator starts per second. Records
        in flight at a checkpoint are in its state and are called again on restore, so
        results and failed records reach transactional sinks exactly once. An
        ``AsyncFunction`` is opened by each subtask before its first call, closed after.

        Raises:
            GraphError: naming the uid, when ``fn`` is not async or an option is invalid.
        """
        spec = AsyncMapSpec(
            function=fn,
            capacity=capacity,
            timeout=timeout,
            ordered=ordered,
            retry=retry,
            on_failure=on_failure,
            rate_limit=rate_limit,
        )
        return self._derive(OperatorKind.ASYNC_MAP, spec, uid, name, parallelism)

    def assign_timestamps_and_watermarks(
        self,
        strategy: WatermarkStrategy,
        *,
        uid: str | None = None,
        name: str | None = None,
        parallelism: int | None = None,
    ) -> DataStream[T]:
        """Read each record's event time with ``strategy`` and emit watermarks from here on.

        Records pass unchanged, each now carrying its event time as its timestamp (replacing
        any it had), which every operator downstream keeps. Watermarks from upstream are
        replaced by the ones this operator generates (the final one, at the end of input,
        passes). Every operator downstream takes the minimum of its inputs' watermarks.

        Raises:
            GraphError: naming the uid, when ``strategy`` has no timestamp assigner.
        """
        return self._derive(OperatorKind.TIMESTAMPS, strategy, uid, name, parallelism)

    def side_output(self, tag: OutputTag[R]) -> DataStream[R]:
        """The records the operator producing this stream sent to side output ``tag``.

        A ``process`` function sends them with ``ctx.output(tag, value)``; an ``async_map``
        with ``on_failure=tag`` sends its failed input records. The side stream is a stream
        like any other; the producer's main output may have no reader then (it is dropped).

        Raises:
            GraphError: naming the uid, when this stream is not the output of one such
                operator (a union, a source, a partitioned or a side stream) or the
                operator sends nothing to ``tag``.
        """
        side = self._builder.side_producer(
            self._producers, tag, partitioned=self._partitioning is not None
        )
        return DataStream(self._builder, (side,))

    def disable_chaining(self) -> DataStream[T]:
        """Run this stream's operator in a chain of its own, with channels on both sides."""
        partitioned = self._partitioning is not None
        self._builder.set_chaining(self._producers, ChainingStrategy.NEVER, partitioned=partitioned)
        return self

    def start_new_chain(self) -> DataStream[T]:
        """Start a new chain at this stream's operator: operators after it may join it."""
        partitioned = self._partitioning is not None
        self._builder.set_chaining(self._producers, ChainingStrategy.HEAD, partitioned=partitioned)
        return self

    def key_by(self, key_selector: Callable[[T], K]) -> KeyedStream[T, K]:
        """Partition the stream by key: equal keys reach the same subtask and state."""
        return KeyedStream(self._builder, self._producers, Partitioning.HASH, key_selector)

    def rebalance(self) -> DataStream[T]:
        """Spread records round-robin over the next operator's subtasks."""
        return DataStream(self._builder, self._producers, Partitioning.REBALANCE)

    @overload
    def broadcast(self) -> DataStream[T]: ...
    @overload
    def broadcast(
        self, first: MapStateDescriptor[Any, Any], /, *more: MapStateDescriptor[Any, Any]
    ) -> BroadcastStream[T]: ...
    def broadcast(self, *descriptors: MapStateDescriptor[Any, Any]) -> Any:
        """Send every record to every subtask of the next operator.

        With ``MapStateDescriptor``s, return a ``BroadcastStream`` for the broadcast state
        pattern: ``keyed.connect(stream.broadcast(RULES)).process(...)``, where the
        descriptors declare the broadcast states its function may write.

        Raises:
            GraphError: a descriptor is not a ``MapStateDescriptor``.
        """
        stream: DataStream[T] = DataStream(self._builder, self._producers, Partitioning.BROADCAST)
        return BroadcastStream(stream, descriptors) if descriptors else stream

    def forward(self) -> DataStream[T]:
        """Send records to the next operator's subtask of the same index (same parallelism)."""
        return DataStream(self._builder, self._producers, Partitioning.FORWARD)

    def window(self, assigner: WindowAssigner) -> WindowedStream[T, Any]:
        """Cut a keyed stream into the windows ``assigner`` gives each record.

        See ``WindowedStream``. Event-time windows read the timestamp each record carries,
        given by the watermark strategy upstream and kept through every operator since.

        Raises:
            GraphError: the stream is not keyed.
        """
        if not self.is_keyed:
            raise GraphError(
                f"window({assigner!r}) needs a keyed stream; call key_by() first, or use "
                "window_all() for windows over the whole stream"
            )
        return WindowedStream(self, assigner)

    def window_all(self, assigner: WindowAssigner) -> WindowedStream[T, None]:
        """Cut the whole stream, not keyed, into windows: one subtask sees every record.

        Flink's ``windowAll``: the window operator runs at parallelism 1 (any other is
        refused), and its functions see the key ``None``. Prefer ``key_by().window()`` where
        a key exists: it spreads the work over subtasks.
        """
        keyed = DataStream[T](self._builder, self._producers, Partitioning.HASH, _no_key)
        return WindowedStream(keyed, assigner, single_subtask=True)

    def count_window(self, size: int, slide: int | None = None) -> WindowedStream[T, Any]:
        """Per key, windows of ``size`` records, every ``slide`` (default: ``size``) records."""
        return count_windows(self, size, slide)

    @overload
    def connect(self, other: BroadcastStream[R]) -> BroadcastConnectedStream[T, R]: ...
    @overload
    def connect(self, other: DataStream[R]) -> ConnectedStreams[T, R]: ...
    def connect(self, other: DataStream[R] | BroadcastStream[R]) -> Any:
        """Connect ``other`` to this stream: one operator with a function per input.

        See ``ConnectedStreams``: ``map(fn1, fn2)``, ``flat_map(fn1, fn2)``, and
        ``key_by(key1, key2).process(KeyedCoProcessFunction)`` for state both inputs share.
        With a ``BroadcastStream`` (``stream.broadcast(descriptor)``), a
        ``BroadcastConnectedStream`` for a ``KeyedBroadcastProcessFunction``.
        """
        if isinstance(other, BroadcastStream):
            return BroadcastConnectedStream(self, other)
        return ConnectedStreams(self, other)

    def union(self, *others: DataStream[T]) -> DataStream[T]:
        """Merge this stream with others of the same type into one stream."""
        producers = self._producers + tuple(p for other in others for p in other._producers)
        return DataStream(self._builder, producers)

    def sink_to(
        self,
        sink: Sink[T],
        *,
        uid: str | None = None,
        name: str | None = None,
        parallelism: int | None = None,
    ) -> DataStreamSink:
        """Write the stream to ``sink``; a job runs only streams that reach a sink."""
        node = self._builder.add_operator(
            OperatorKind.SINK, sink, uid=uid, name=name, parallelism=parallelism
        )
        self._connect(node)
        return DataStreamSink(node)

    def _derive(
        self,
        kind: OperatorKind,
        function: Any,
        uid: str | None = None,
        name: str | None = None,
        parallelism: int | None = None,
        *,
        key_selector: Callable[[Any], Any] | None = None,
        second: DataStream[Any] | None = None,
    ) -> DataStream[Any]:
        """Add an operator fed by this stream (and ``second``'s records as its second input).

        The one way the API family adds an operator: ``ConnectedStreams``,
        ``BroadcastConnectedStream`` and ``WindowedStream`` call it. A keyed operator reads
        keys with ``key_selector``, or with this stream's.
        """
        node = self._builder.add_operator(
            kind, function, uid=uid, name=name, parallelism=parallelism
        )
        if kind.needs_keyed_input:
            node.key_selector = key_selector or self._key_selector
        self._connect(node)
        if second is not None:
            second._as_second_input_of(node)._connect(node)
        return DataStream(self._builder, (Producer(node),))

    def _as_second_input_of(self, target: OperatorNode) -> DataStream[SecondInput]:
        """This stream through a map that marks its records as ``target``'s second input."""
        marker = self._builder.add_second_input_marker(target, self._producers)
        key = self._key_selector
        keys = None if key is None else PerInput(key, key)
        return DataStream(self._builder, (marker,), self._partitioning, keys)

    def _event_time_problem(self) -> str | None:
        """Why this stream's records carry no timestamps, or ``None`` if they do."""
        return self._builder.event_time_problem(self._producers)

    def _connect(self, node: OperatorNode) -> None:
        self._builder.connect_all(self._producers, node, self._partitioning, self._key_selector)

    def __repr__(self) -> str:
        uids = ", ".join(
            p.node.uid if p.tag is None else f"{p.node.uid}[{p.tag.name}]" for p in self._producers
        )
        return f"<{type(self).__name__} of {uids}>"


def _no_key(record: object) -> None:
    """The key of every record of ``window_all``: one key, so one subtask holds them all."""
    return None


class KeyedStream(DataStream[T], IntervalJoinMethods[T, K], Generic[T, K]):
    """A stream partitioned by key: per-key state and ``reduce`` are available on it.

    Records with equal keys reach the same subtask (key -> key group -> subtask), so the
    next operator's keyed state sees every record of a key, in the order it was sent.
    """
