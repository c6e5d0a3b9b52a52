"""JobGraph: the logical graph the fluent API builds, and its build-time validation."""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from lockgate.engine.errors import GraphError
from lockgate.engine.functions.async_io import AsyncMapSpec
from lockgate.engine.functions.interval_join import IntervalJoinSpec
from lockgate.engine.functions.side_outputs import OutputTag
from lockgate.engine.state.aggregate_function import AggregateFunction
from lockgate.engine.time.watermarks import WatermarkStrategy
from lockgate.engine.windows.spec import WindowSpec

__all__ = [
    "ChainingStrategy",
    "Edge",
    "JobGraph",
    "OperatorKind",
    "OperatorNode",
    "Partitioning",
    "side_output_problem",
]


class Partitioning(enum.Enum):
    """How records of an edge are spread over the downstream subtasks."""

    FORWARD = "forward"
    REBALANCE = "rebalance"
    BROADCAST = "broadcast"
    HASH = "hash"


class ChainingStrategy(enum.Enum):
    """Whether an operator joins the chain of its upstream and downstream operators (Flink's).

    ``ALWAYS`` chains wherever planning allows; ``HEAD`` (``start_new_chain()``) starts a
    chain, to which downstream operators may chain; ``NEVER`` (``disable_chaining()``) runs
    the operator in a chain of its own, with channels on both sides.
    """

    ALWAYS = "always"
    HEAD = "head"
    NEVER = "never"


class OperatorKind(enum.Enum):
    """What an operator does with its records."""

    SOURCE = "source"
    MAP = "map"
    FILTER = "filter"
    FLAT_MAP = "flat_map"
    REDUCE = "reduce"
    AGGREGATE = "aggregate"
    PROCESS = "process"
    CO_PROCESS = "co_process"
    BROADCAST_PROCESS = "broadcast_process"
    WINDOW = "window"
    INTERVAL_JOIN = "interval_join"
    ASYNC_MAP = "async_map"
    TIMESTAMPS = "timestamps"
    SINK = "sink"

    @property
    def needs_keyed_input(self) -> bool:
        """Whether the operator keeps per-key state and so needs ``key_by`` upstream."""
        return self in _KEYED

    @property
    def is_stateful(self) -> bool:
        """Whether every operator of this kind keeps state by kind."""
        return self in (
            OperatorKind.SOURCE,
            OperatorKind.REDUCE,
            OperatorKind.AGGREGATE,
            OperatorKind.PROCESS,
            OperatorKind.CO_PROCESS,
            OperatorKind.BROADCAST_PROCESS,
            OperatorKind.WINDOW,
            OperatorKind.INTERVAL_JOIN,
            OperatorKind.ASYNC_MAP,
            OperatorKind.SINK,
        )


_KEYED = (
    OperatorKind.REDUCE,
    OperatorKind.AGGREGATE,
    OperatorKind.PROCESS,
    OperatorKind.CO_PROCESS,
    OperatorKind.BROADCAST_PROCESS,
    OperatorKind.WINDOW,
    OperatorKind.INTERVAL_JOIN,
)


@dataclass(eq=False)
class OperatorNode:
    """One operator of the job: its uid, kind, user function and parallelism.

    ``event_time`` says whether a watermark strategy is upstream of one of its inputs, so
    that its records have event time; the graph sets it as edges are added. Planning
    settles (``settle_timestamps``) whether the records reaching it at runtime carry their
    timestamps as ``(timestamp, value)`` pairs (``timestamped``; Flink's ``StreamRecord``)
    and whether those it emits do (``emits_timestamps``): only where an operator downstream
    reads them. The runtime picks each operator's code path by them, once, so a job
    without event time never handles a timestamp.
    """

    node_id: int
    uid: str
    name: str
    kind: OperatorKind
    function: Any
    parallelism: int
    uid_is_explicit: bool
    key_selector: Callable[[Any], Any] | None = None
    chaining: ChainingStrategy = ChainingStrategy.ALWAYS
    event_time: bool = False
    timestamped: bool = False
    emits_timestamps: bool = False

    @property
    def emits_event_time(self) -> bool:
        """Whether the records it emits (main and side outputs) have event time."""
        return self.event_time or self.kind is OperatorKind.TIMESTAMPS

    @property
    def is_stateful(self) -> bool:
        """Whether the operator keeps state: by its kind, or a ``snapshot_state`` function."""
        return self.kind.is_stateful or callable(getattr(self.function, "snapshot_state", None))


@dataclass(frozen=True, eq=False)
class Edge:
    """A data connection from one operator to another.

    ``tag`` is the side output of ``source`` the edge carries, or ``None`` for its main output.
    """

    source: OperatorNode
    target: OperatorNode
    partitioning: Partitioning
    key_selector: Callable[[Any], Any] | None = None
    tag: OutputTag[Any] | None = None


@dataclass
class JobGraph:
    """The operators of a job and the edges between them, in the order they were added.

    ``validate`` checks the whole graph before anything runs and raises ``GraphError`` naming
    the operator uid and saying what to do. With ``requires_uids`` (checkpointing is on)
    every stateful operator needs an explicit uid: state maps to operators by uid when a
    job restores, so a generated one would lose it as soon as the graph changes.
    """

    max_parallelism: int
    requires_uids: bool = False
    nodes: list[OperatorNode] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)

    def add(self, node: OperatorNode) -> OperatorNode:
        """Add an operator after checking its options; raise ``GraphError`` naming its uid."""
        _check_options(node)
        self.nodes.append(node)
        return node

    def connect(self, edge: Edge) -> None:
        """Add an edge between two operators already in the graph.

        Event time flows with it: if ``edge.source`` emits records with event time, its
        target and everything downstream of it have event time.
        """
        self.edges.append(edge)
        if edge.source.emits_event_time:
            self._mark_event_time(edge.target)

    def _mark_event_time(self, node: OperatorNode) -> None:
        if node.event_time:
            return
        node.event_time = True
        for edge in self.outputs(node):
            self._mark_event_time(edge.target)

    def inputs(self, node: OperatorNode) -> list[Edge]:
        """Edges into ``node``."""
        return [edge for edge in self.edges if edge.target is node]

    def outputs(self, node: OperatorNode) -> list[Edge]:
        """Edges out of ``node``."""
        return [edge for edge in self.edges if edge.source is node]

    def validate(self) -> None:
        """Raise ``GraphError`` for the first problem found, naming the operator's uid."""
        if not self.nodes:
            raise GraphError("the job has no operators; add a source with env.from_source()")
        checks = (
            self._check_uids_unique,
            self._check_stateful_uids,
            self._check_parallelism,
            self._check_edges,
            self._check_alignment,
        )
        for check in checks:
            check()
        for node in self.nodes:
            self._check_node(node)

    def _check_uids_unique(self) -> None:
        seen: set[str] = set()
        for node in self.nodes:
            if node.uid in seen:
                raise GraphError(
                    f"operator uid '{node.uid}' is used twice; give each operator its own uid="
                )
            seen.add(node.uid)

    def _check_stateful_uids(self) -> None:
        if not self.requires_uids:
            return
        for node in self.nodes:
            if node.is_stateful and not node.uid_is_explicit:
                raise GraphError(
                    f"operator '{node.uid}' ({node.kind.value}) keeps state but has no uid, and "
                    "checkpointing is on; give it uid='...' (a name that stays the same across "
                    "versions of the job), so its state can be restored"
                )

    def _check_parallelism(self) -> None:
        for node in self.nodes:
            if not 1 <= node.parallelism <= self.max_parallelism:
                raise GraphError(
                    f"operator '{node.uid}' has parallelism {node.parallelism}, outside 1.."
                    f"{self.max_parallelism} (max_parallelism); lower its parallelism= or raise "
                    "the environment's max_parallelism"
                )

    def _check_edges(self) -> None:
        for edge in self.edges:
            same = edge.source.parallelism == edge.target.parallelism
            if edge.partitioning is Partitioning.FORWARD and not same:
                raise GraphError(
                    f"operator '{edge.target.uid}' has a forward input from "
                    f"'{edge.source.uid}' but parallelism {edge.target.parallelism} != "
                    f"{edge.source.parallelism}; give both the same parallelism or call "
                    "rebalance()"
                )

    def _check_alignment(self) -> None:
        # Watermark alignment pauses a source's reading: only a source's own strategy can.
        drifts: dict[str, tuple[float, str]] = {}
        for node in self.nodes:
            alignment = getattr(node.function, "alignment", None)
            if node.kind is not OperatorKind.TIMESTAMPS or alignment is None:
                continue
            if [edge.source.kind for edge in self.inputs(node)] != [OperatorKind.SOURCE]:
                raise GraphError(
                    f"operator '{node.uid}' aligns watermarks (group '{alignment.group}') but "
                    "reads no source: alignment pauses a source's reading, so give the "
                    "strategy to from_source(..., watermark_strategy=...)"
                )
            drift, first = drifts.setdefault(alignment.group, (alignment.max_drift, node.uid))
            if drift != alignment.max_drift:
                raise GraphError(
                    f"operators '{first}' and '{node.uid}' align watermarks in group "
                    f"'{alignment.group}' with max_drift {drift} and {alignment.max_drift}; "
                    "give every source of a group the same max_drift"
                )

    def _check_node(self, node: OperatorNode) -> None:
        _check_options(node)
        if node.kind.needs_keyed_input and node.key_selector is None:
            raise GraphError(
                f"operator '{node.uid}' ({node.kind.value}) needs a keyed stream; got a "
                "non-keyed stream; call key_by() first"
            )
        if node.kind is not OperatorKind.SINK and not self.outputs(node):
            raise GraphError(
                f"the stream of operator '{node.uid}' reaches no sink; add .sink_to(...) "
                "after it, or remove it"
            )

    def __iter__(self) -> Iterator[OperatorNode]:
        return iter(self.nodes)


def _check_options(node: OperatorNode) -> None:
    if node.kind is OperatorKind.TIMESTAMPS:
        _check_strategy(node)
    if node.kind is OperatorKind.AGGREGATE and not isinstance(node.function, AggregateFunction):
        raise GraphError(
            f"aggregate '{node.uid}' needs an AggregateFunction (create_accumulator, add, "
            f"get_result); got {node.function!r}; for a function of two records use reduce()"
        )
    if node.kind is OperatorKind.WINDOW:
        if not isinstance(node.function, WindowSpec):
            raise GraphError(f"window '{node.uid}' needs a WindowSpec; use key_by().window()")
        node.function.check(node.uid)
    if node.kind is OperatorKind.INTERVAL_JOIN:
        if not isinstance(node.function, IntervalJoinSpec):
            raise GraphError(f"interval join '{node.uid}' needs an IntervalJoinSpec; use between()")
        node.function.check(node.uid)
    if node.kind is OperatorKind.ASYNC_MAP:
        if not isinstance(node.function, AsyncMapSpec):
            raise GraphError(f"async_map '{node.uid}' needs an AsyncMapSpec; use async_map()")
        node.function.check(node.uid)


def _check_strategy(node: OperatorNode) -> None:
    strategy = node.function
    if not isinstance(strategy, WatermarkStrategy):
        raise GraphError(
            f"operator '{node.uid}' needs a WatermarkStrategy; got {strategy!r}; use "
            "WatermarkStrategy.for_bounded_out_of_orderness(...).with_timestamp_assigner(...)"
        )
    if strategy.timestamp_assigner is None:
        raise GraphError(
            f"the watermark strategy of operator '{node.uid}' has no timestamp assigner; "
            "call .with_timestamp_assigner(lambda record: <its event time>)"
        )


def side_output_problem(node: OperatorNode, tag: OutputTag[Any]) -> str | None:
    """Why ``node`` cannot emit to side output ``tag``, naming its uid; ``None`` if it can.

    A ``process`` function (one input, two, or keyed and broadcast) emits to any tag
    (``ctx.output``), and so does a window with a ``ProcessWindowFunction``
    (``context.output``); an ``async_map`` only to the tag given as its ``on_failure``,
    another window only to the one given to ``side_output_late_data``; no other kind has
    side outputs.
    """
    if node.kind in _ANY_SIDE_OUTPUT:
        return None
    if node.kind is OperatorKind.WINDOW and node.function.process_function is not None:
        return None
    if node.kind in _ONE_SIDE_OUTPUT:
        own, option, how = _ONE_SIDE_OUTPUT[node.kind](node.function)
        if own == tag:
            return None
        return (
            f"{node.kind.value} '{node.uid}' sends nothing to side output {tag!r}: its {option} "
            f"is {own!r}; {how.format(tag=tag)}"
        )
    return (
        f"operator '{node.uid}' ({node.kind.value}) has no side outputs; side outputs come "
        "from process() (ctx.output(tag, value)), async_map(on_failure=tag) and windows "
        "(side_output_late_data(tag))"
    )


_ANY_SIDE_OUTPUT = (
    OperatorKind.PROCESS,
    OperatorKind.CO_PROCESS,
    OperatorKind.BROADCAST_PROCESS,
    OperatorKind.INTERVAL_JOIN,
)

# The kinds with one side output: (the tag, the option that sets it, how to set it).
_ONE_SIDE_OUTPUT: dict[OperatorKind, Callable[[Any], tuple[Any, str, str]]] = {
    OperatorKind.ASYNC_MAP: lambda spec: (
        spec.on_failure,
        "on_failure",
        "give it on_failure={tag!r} to send its failed records there",
    ),
    OperatorKind.WINDOW: lambda spec: (
        spec.late_tag,
        "side_output_late_data",
        "give it .side_output_late_data({tag!r}) to send its late records there",
    ),
}
