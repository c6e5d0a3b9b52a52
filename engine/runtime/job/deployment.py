"""Deployment: turn an execution plan into channels and subtask actors for one attempt."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import astuple, dataclass, field
from functools import partial
from typing import Any

from lockgate.actors import ActorRef, Channel, Doorbell
from lockgate.engine.checkpointing.channel_state import ChannelId
from lockgate.engine.checkpointing.config import CheckpointingMode
from lockgate.engine.checkpointing.snapshots import SINK_STATE, SPLITS_STATE, OperatorSnapshot
from lockgate.engine.checkpointing.storage import CheckpointStorage
from lockgate.engine.errors import KeySelectorError
from lockgate.engine.events import ChannelItem
from lockgate.engine.functions.side_outputs import SideOutputCollector
from lockgate.engine.graph.job_graph import OperatorKind, OperatorNode, Partitioning
from lockgate.engine.graph.planning import ChainEdge, ExecutionPlan, OperatorChain
from lockgate.engine.io.sinks import Sink, SinkContext
from lockgate.engine.io.sources import (
    Source,
    SourceContext,
    SourceSplit,
    assign_splits,
    reads_by_split,
)
from lockgate.engine.runtime.job.remote_ends import OvertakenRouter, RemoteEnds
from lockgate.engine.runtime.network.barrier_aligner import AlignmentMode, BarrierAligner
from lockgate.engine.runtime.network.input_channel_state import InputChannelState
from lockgate.engine.runtime.network.input_gate import InputGate
from lockgate.engine.runtime.network.output_gate import OutputGate
from lockgate.engine.runtime.network.partitioners import (
    BroadcastPartitioner,
    ForwardPartitioner,
    KeyGroupPartitioner,
    Partitioner,
    RebalancePartitioner,
    StampedKeyGroupPartitioner,
    StampingPartitioner,
)
from lockgate.engine.runtime.network.partitions import OutputPartition
from lockgate.engine.runtime.network.transport.local import local_channel
from lockgate.engine.runtime.operators.base import Operator
from lockgate.engine.runtime.operators.kinds import create_operator
from lockgate.engine.runtime.operators.scope import OperatorScope
from lockgate.engine.runtime.operators.timestamps import TimestampsOperator
from lockgate.engine.runtime.snapshots.subtask_checkpointer import (
    CheckpointContext,
    SubtaskCheckpointer,
)
from lockgate.engine.runtime.subtask.actor import SubtaskActor, SubtaskSettings
from lockgate.engine.runtime.subtask.heads import GateHead, Head, SourceHead
from lockgate.engine.runtime.subtask.source_alignment import SourceAlignment
from lockgate.engine.runtime.subtask.tails import GateTail, SinkTail, StampedSinkTail, Tail
from lockgate.engine.savepoints.values import ValueCodec
from lockgate.engine.state import (
    KeyedStateBackend,
    KeyedStateBackendSpec,
    MemoryStateBackend,
    StateBackend,
)
from lockgate.engine.time.alignment import AlignmentGroup
from lockgate.engine.time.clock import Clock

__all__ = ["Attempt", "Deployment", "RuntimeOptions", "deploy"]

ChannelKey = ChannelId  # edge id, upstream subtask, downstream subtask


@dataclass(frozen=True, slots=True)
class RuntimeOptions:
    """How subtasks batch, buffer, tell time and keep keyed state.

    ``state_backend`` builds each operator subtask's keyed state backend, anew per attempt.
    ``unaligned`` lets subtasks act on unaligned checkpoints while they wait for room.
    ``checkpointing`` tells sources whether the job checkpoints (``SourceContext``).
    """

    batch_size: int
    channel_capacity: int
    buffer_timeout: float
    max_parallelism: int
    clock: Clock
    mode: CheckpointingMode = CheckpointingMode.EXACTLY_ONCE
    state_backend: StateBackend = field(default_factory=MemoryStateBackend)
    incremental_full_every: int | None = None
    unaligned: bool = False
    watermark_interval: float = 0.2
    checkpointing: bool = True


@dataclass(frozen=True, slots=True)
class Attempt:
    """One run of a job: its number, where it checkpoints, and the state it starts from.

    ``restored`` maps an operator uid to its state for each of its new subtasks, already
    redistributed to the operator's parallelism.
    """

    job_name: str
    number: int
    storage: CheckpointStorage
    coordinator: ActorRef[Any]
    restored: Mapping[str, list[OperatorSnapshot]] = field(default_factory=dict)
    run_id: str = "run"
    savepoint_codec: ValueCodec = field(default_factory=ValueCodec)

    def state_of(self, uid: str, index: int) -> OperatorSnapshot | None:
        """The restored state of operator ``uid`` in subtask ``index``, if any."""
        snapshots = self.restored.get(uid)
        return None if snapshots is None else snapshots[index]


@dataclass(frozen=True, slots=True)
class Deployment:
    """One attempt's subtask actors, each with the doorbell its channels ring, and channels."""

    subtasks: tuple[tuple[SubtaskActor, Doorbell], ...]
    channels: dict[ChannelKey, Channel[ChannelItem]]


def deploy(
    plan: ExecutionPlan,
    options: RuntimeOptions,
    attempt: Attempt,
    *,
    hosts: Callable[[int, int], bool] | None = None,
    remote: RemoteEnds | None = None,
) -> Deployment:
    """Create the channels and subtask actors of ``plan`` (nothing runs yet).

    ``hosts(chain_id, subtask_index)`` says which subtasks this process builds (all, by
    default); a channel between one of them and a subtask elsewhere gets its end here from
    ``remote``, the data plane.
    """
    doorbells = {
        (chain.chain_id, index): Doorbell()
        for chain in plan.chains
        for index in range(chain.parallelism)
        if hosts is None or hosts(chain.chain_id, index)
    }
    router = OvertakenRouter()
    channels = _channels(plan, options, doorbells, remote, router)
    builder = _SubtaskBuilder(plan, options, attempt, channels, router)
    try:
        subtasks = tuple(
            (builder.build(chain, index), doorbells[chain.chain_id, index])
            for chain in plan.chains
            for index in range(chain.parallelism)
            if (chain.chain_id, index) in doorbells
        )
    except BaseException:
        builder.close_keyed_states()  # no subtask runs, so none will close them
        raise
    return Deployment(subtasks, channels)


def _channels(
    plan: ExecutionPlan,
    options: RuntimeOptions,
    doorbells: dict[tuple[int, int], Doorbell],
    remote: RemoteEnds | None,
    router: OvertakenRouter,
) -> dict[ChannelKey, Channel[ChannelItem]]:
    # Every channel with an end here: local if both are, else the data plane's end.
    edges = {edge.edge_id: edge for edge in plan.edges}
    channels: dict[ChannelKey, Channel[ChannelItem]] = {}
    capacity = options.channel_capacity
    for spec in plan.channels():
        edge, key = edges[spec.edge_id], ChannelId(*astuple(spec))
        upstream = (edge.upstream.chain_id, spec.upstream_index)
        downstream = doorbells.get((edge.downstream.chain_id, spec.downstream_index))
        if downstream is not None:
            channels[key] = local_channel(key, capacity, doorbell=downstream)
            if upstream not in doorbells:
                assert remote is not None, f"channel {key} has no end here"
                remote.receiving(key, channels[key], router.for_channel(key))
        elif upstream in doorbells:
            assert remote is not None, f"channel {key} has no end here"
            channels[key] = remote.sending(key, capacity=capacity)
    return channels


class _SubtaskBuilder:
    def __init__(
        self,
        plan: ExecutionPlan,
        options: RuntimeOptions,
        attempt: Attempt,
        channels: dict[ChannelKey, Channel[ChannelItem]],
        router: OvertakenRouter,
    ) -> None:
        self.plan = plan
        self.options = options
        self.attempt = attempt
        self.channels = channels
        self.router = router
        self.keyed_states: list[KeyedStateBackend] = []
        self.alignment_groups: dict[str, AlignmentGroup] = {}  # one attempt's, by name

    def build(self, chain: OperatorChain, index: int) -> SubtaskActor:
        options = self.options
        settings = SubtaskSettings(
            chain,
            index,
            options.max_parallelism,
            options.buffer_timeout,
            options.clock,
            unaligned=options.unaligned,
            watermark_interval=options.watermark_interval,
        )
        middle = [node for node in chain.operators if node.kind not in _ENDS]
        operators = [self._operator(node, index) for node in middle]
        self._collect_side_outputs(chain, operators)
        checkpointer = SubtaskCheckpointer(
            CheckpointContext(
                self.attempt.job_name,
                settings.subtask_id,
                self.attempt.storage,
                self.attempt.coordinator,
                options.max_parallelism,
                options.clock,
                self.attempt.savepoint_codec,
                options.incremental_full_every,
                self.attempt.run_id,
            )
        )
        head, tail = self._head(chain, index), self._tail(chain, index)
        self._source_watermarks(head, operators, f"{chain.head.uid}#{index}")
        return SubtaskActor(settings, head, operators, tail, checkpointer)

    def _source_watermarks(self, head: Head, operators: list[Operator], member: str) -> None:
        # A source's own watermarks (its strategy chained first) are made split by split when
        # its reader tells each record's split, as Flink's per-split watermarks; with
        # alignment, its reading pauses while it runs ahead of its group.
        if not (isinstance(head, SourceHead) and operators):
            return
        first = operators[0]
        if not isinstance(first, TimestampsOperator):
            return
        if reads_by_split(head.reader):
            head.read_by_split()
            first.read_splits_from(head, [split.split_id for split in head.splits])
        alignment = first.strategy.alignment
        if alignment is not None:
            group = self.alignment_groups.setdefault(
                alignment.group, AlignmentGroup(alignment.group, alignment.max_drift)
            )
            head.align_with(
                SourceAlignment(
                    group,
                    member,
                    first.aligned_watermark,
                    clock=self.options.clock,
                    update_interval=alignment.update_interval,
                )
            )

    def close_keyed_states(self) -> None:
        """Close every keyed state backend made so far (the deployment failed)."""
        while self.keyed_states:
            self.keyed_states.pop().close()

    def _collect_side_outputs(self, chain: OperatorChain, operators: list[Operator]) -> None:
        # Only an operator whose side outputs are read gets a collector (it ends its chain):
        # the subtask drains side records only then, so other jobs pay nothing for them.
        tags = {edge.tag for edge in self.plan.outputs(chain) if edge.tag is not None}
        if tags:
            operators[-1].send_side_outputs_to(SideOutputCollector(tags))

    def _operator(self, node: OperatorNode, index: int) -> Operator:
        spec = KeyedStateBackendSpec(
            self.attempt.job_name,
            self.attempt.run_id,
            self.attempt.number,
            node.uid,
            index,
            self.options.max_parallelism,
            self.options.clock,
        )
        keyed_state = self.options.state_backend.create_keyed_state_backend(spec)
        self.keyed_states.append(keyed_state)
        restored = self.attempt.state_of(node.uid, index)
        return create_operator(node, restored, self.options.clock, keyed_state=keyed_state)

    def _head(self, chain: OperatorChain, index: int) -> Head:
        head = chain.head
        if head.kind is not OperatorKind.SOURCE:
            keys = self._input_keys(chain, index)
            aligner = BarrierAligner(len(keys), mode=_ALIGNMENT[self.options.mode])
            restored = self.attempt.state_of(head.uid, index)
            in_flight = InputChannelState(
                keys,
                {} if restored is None else restored.input_channels,
                batch_size=self.options.batch_size,
            )
            self.router.register(in_flight, keys)
            inputs = [self.channels[key] for key in keys]
            return GateHead(InputGate(inputs, aligner, self.options.clock, in_flight))
        source: Source[Any] = head.function
        restored = self.attempt.state_of(head.uid, index)
        if restored is None:
            with OperatorScope(head.uid, index, chain.parallelism):
                all_splits = source.create_splits(chain.parallelism)
            splits = assign_splits(all_splits, index, chain.parallelism)
        else:  # a subtask that had no splits left nothing to restore: it reads nothing
            splits = list(restored.lists.get(SPLITS_STATE, []))
        return self._source_head(chain, index, source, splits)

    def _source_head(
        self, chain: OperatorChain, index: int, source: Source[Any], splits: list[SourceSplit]
    ) -> SourceHead:
        context = SourceContext(
            chain.head.uid,
            index,
            chain.parallelism,
            self.options.clock,
            checkpointing=self.options.checkpointing,
        )
        scope = OperatorScope(chain.head.uid, index, chain.parallelism)
        with scope:
            reader = source.create_reader(splits, context)
        return SourceHead(reader, splits, batch_size=self.options.batch_size, scope=scope)

    def _tail(self, chain: OperatorChain, index: int) -> Tail:
        tail = chain.tail
        if tail.kind is OperatorKind.SINK:
            sink: Sink[Any] = tail.function
            restored = self.attempt.state_of(tail.uid, index)
            context = SinkContext(
                tail.uid,
                index,
                chain.parallelism,
                self.options.clock,
                restored_state=tuple(restored.lists.get(SINK_STATE, ())) if restored else (),
                job_name=self.attempt.job_name,
                attempt=self.attempt.number,
                run_id=self.attempt.run_id,
            )
            scope = OperatorScope(tail.uid, index, chain.parallelism)
            with scope:
                writer = sink.create_writer(context)
            return (StampedSinkTail if tail.timestamped else SinkTail)(writer, scope)
        partitions = [self._partition(edge, index) for edge in self.plan.outputs(chain)]
        restored = self.attempt.state_of(tail.uid, index)
        gate = OutputGate(
            partitions,
            batch_size=self.options.batch_size,
            clock=self.options.clock,
            restored=None if restored is None else restored.output_channels,
        )
        return GateTail(gate)

    def _input_keys(self, chain: OperatorChain, index: int) -> list[ChannelId]:
        return [
            ChannelId(edge.edge_id, upstream, index)
            for edge in self.plan.inputs(chain)
            for upstream in range(edge.upstream.parallelism)
            if index in edge.channels_of(upstream)
        ]

    def _partition(self, edge: ChainEdge, index: int) -> OutputPartition:
        keys = [ChannelId(edge.edge_id, index, target) for target in edge.channels_of(index)]
        channels = [self.channels[key] for key in keys]
        partitioner = self._partitioner(edge, index, len(channels))
        return OutputPartition(partitioner, channels, keys, tag=edge.tag)

    def _partitioner(self, edge: ChainEdge, index: int, channels: int) -> Partitioner:
        # Records are (timestamp, value) pairs where event time is on; an input without it
        # joining a stream with it (union, connect) is given pairs here.
        sent_stamped = edge.upstream.tail.emits_timestamps
        stamped = sent_stamped or edge.downstream.head.timestamped
        partitioner = self._routing(edge, index, channels, stamped=stamped)
        return partitioner if sent_stamped or not stamped else StampingPartitioner(partitioner)

    def _routing(self, edge: ChainEdge, index: int, channels: int, *, stamped: bool) -> Partitioner:
        if channels == 1:
            return ForwardPartitioner()
        if edge.partitioning is Partitioning.HASH:
            assert edge.key_selector is not None
            failure = partial(
                KeySelectorError,
                edge.downstream.head.uid,
                edge.upstream.operators[-1].uid,
                index,
                edge.upstream.parallelism,
            )
            keyed = StampedKeyGroupPartitioner if stamped else KeyGroupPartitioner
            return keyed(edge.key_selector, self.options.max_parallelism, on_failure=failure)
        if edge.partitioning is Partitioning.BROADCAST:
            return BroadcastPartitioner()
        return RebalancePartitioner(start=index)


_ENDS = (OperatorKind.SOURCE, OperatorKind.SINK)
_ALIGNMENT = {
    CheckpointingMode.EXACTLY_ONCE: AlignmentMode.ALIGNED,
    CheckpointingMode.AT_LEAST_ONCE: AlignmentMode.AT_LEAST_ONCE,
}
