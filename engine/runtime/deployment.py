"""Deployment: turn an execution plan into channels and subtask actors for one attempt."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lockgate.actors import Channel, Doorbell
from lockgate.engine.clock import Clock
from lockgate.engine.events import ChannelItem, item_size
from lockgate.engine.graph import OperatorKind, Partitioning
from lockgate.engine.partitioning import (
    BroadcastPartitioner,
    ForwardPartitioner,
    KeyGroupPartitioner,
    Partitioner,
    RebalancePartitioner,
)
from lockgate.engine.planning import ChainEdge, ExecutionPlan, OperatorChain
from lockgate.engine.runtime.gates import InputGate, OutputGate, OutputPartition
from lockgate.engine.runtime.heads import GateHead, Head, SourceHead
from lockgate.engine.runtime.operators import create_operator
from lockgate.engine.runtime.scope import OperatorScope
from lockgate.engine.runtime.subtask import SubtaskActor, SubtaskSettings
from lockgate.engine.runtime.tails import GateTail, SinkTail, Tail
from lockgate.engine.sinks import Sink, SinkContext
from lockgate.engine.sources import Source, SourceContext, SourceSplit, assign_splits

__all__ = ["Deployment", "RuntimeOptions", "deploy"]

ChannelKey = tuple[int, int, int]  # edge id, upstream subtask, downstream subtask


@dataclass(frozen=True, slots=True)
class RuntimeOptions:
    """How subtasks batch, buffer and tell time."""

    batch_size: int
    channel_capacity: int
    buffer_timeout: float
    max_parallelism: int
    clock: Clock


@dataclass(frozen=True, slots=True)
class Deployment:
    """One attempt's subtask actors, each with the doorbell its channels ring, and channels."""

    subtasks: tuple[tuple[SubtaskActor, Doorbell], ...]
    channels: dict[ChannelKey, Channel[ChannelItem]]


def deploy(plan: ExecutionPlan, options: RuntimeOptions) -> Deployment:
    """Create every channel and subtask actor of ``plan`` (nothing runs yet)."""
    doorbells = {
        (chain.chain_id, index): Doorbell()
        for chain in plan.chains
        for index in range(chain.parallelism)
    }
    channels = _channels(plan, options, doorbells)
    builder = _SubtaskBuilder(plan, options, channels)
    subtasks = tuple(
        (builder.build(chain, index), doorbells[chain.chain_id, index])
        for chain in plan.chains
        for index in range(chain.parallelism)
    )
    return Deployment(subtasks, channels)


def _channels(
    plan: ExecutionPlan,
    options: RuntimeOptions,
    doorbells: dict[tuple[int, int], Doorbell],
) -> dict[ChannelKey, Channel[ChannelItem]]:
    edges = {edge.edge_id: edge for edge in plan.edges}
    return {
        (spec.edge_id, spec.upstream_index, spec.downstream_index): Channel(
            options.channel_capacity,
            size_of=item_size,
            doorbell=doorbells[edges[spec.edge_id].downstream.chain_id, spec.downstream_index],
            name=f"edge{spec.edge_id}[{spec.upstream_index}->{spec.downstream_index}]",
        )
        for spec in plan.channels()
    }


class _SubtaskBuilder:
    def __init__(
        self,
        plan: ExecutionPlan,
        options: RuntimeOptions,
        channels: dict[ChannelKey, Channel[ChannelItem]],
    ) -> None:
        self.plan = plan
        self.options = options
        self.channels = channels

    def build(self, chain: OperatorChain, index: int) -> SubtaskActor:
        options = self.options
        settings = SubtaskSettings(
            chain, index, options.max_parallelism, options.buffer_timeout, options.clock
        )
        middle = [node for node in chain.operators if node.kind not in _ENDS]
        operators = [create_operator(node) for node in middle]
        return SubtaskActor(settings, self._head(chain, index), operators, self._tail(chain, index))

    def _head(self, chain: OperatorChain, index: int) -> Head:
        head = chain.head
        if head.kind is not OperatorKind.SOURCE:
            return GateHead(InputGate(self._inputs(chain, index)))
        source: Source[Any] = head.function
        splits = assign_splits(source.create_splits(chain.parallelism), index, chain.parallelism)
        return self._source_head(chain, index, source, splits)

    def _source_head(
        self, chain: OperatorChain, index: int, source: Source[Any], splits: list[SourceSplit]
    ) -> SourceHead:
        context = SourceContext(chain.head.uid, index, chain.parallelism, self.options.clock)
        return SourceHead(
            source.create_reader(splits, context),
            splits,
            batch_size=self.options.batch_size,
            scope=OperatorScope(chain.head.uid, index, chain.parallelism),
        )

    def _tail(self, chain: OperatorChain, index: int) -> Tail:
        tail = chain.tail
        if tail.kind is OperatorKind.SINK:
            sink: Sink[Any] = tail.function
            context = SinkContext(tail.uid, index, chain.parallelism, self.options.clock)
            return SinkTail(
                sink.create_writer(context), OperatorScope(tail.uid, index, chain.parallelism)
            )
        partitions = [self._partition(edge, index) for edge in self.plan.outputs(chain)]
        gate = OutputGate(partitions, batch_size=self.options.batch_size, clock=self.options.clock)
        return GateTail(gate)

    def _inputs(self, chain: OperatorChain, index: int) -> list[Channel[ChannelItem]]:
        return [
            self.channels[edge.edge_id, upstream, index]
            for edge in self.plan.inputs(chain)
            for upstream in range(edge.upstream.parallelism)
            if index in edge.channels_of(upstream)
        ]

    def _partition(self, edge: ChainEdge, index: int) -> OutputPartition:
        targets = edge.channels_of(index)
        channels = [self.channels[edge.edge_id, index, target] for target in targets]
        return OutputPartition(self._partitioner(edge, index, len(channels)), channels)

    def _partitioner(self, edge: ChainEdge, index: int, channels: int) -> Partitioner:
        if channels == 1:
            return ForwardPartitioner()
        if edge.partitioning is Partitioning.HASH:
            assert edge.key_selector is not None
            return KeyGroupPartitioner(edge.key_selector, self.options.max_parallelism)
        if edge.partitioning is Partitioning.BROADCAST:
            return BroadcastPartitioner()
        return RebalancePartitioner(start=index)


_ENDS = (OperatorKind.SOURCE, OperatorKind.SINK)
