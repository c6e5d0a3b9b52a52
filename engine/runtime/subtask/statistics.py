"""subtask_counters: what a ``SubtaskActor`` has counted, read at one moment.

Everything here is read between the subtask's steps, off its data path: the counters are
kept as the subtask runs (records per batch, waits as they end), and reading them walks
the chain once.
"""

from __future__ import annotations

from typing import Any, Protocol

from lockgate.engine.runtime.metrics.counters import OperatorCounters, SubtaskCounters
from lockgate.engine.runtime.metrics.record_bytes import RecordBytes
from lockgate.engine.runtime.operators.base import Operator
from lockgate.engine.runtime.subtask.heads import Head
from lockgate.engine.runtime.subtask.pipeline import OperatorPipeline
from lockgate.engine.runtime.subtask.tails import Tail

__all__ = ["CountingSubtask", "operator_counters", "subtask_counters"]


class CountingSubtask(Protocol):
    """What ``subtask_counters`` reads of a ``SubtaskActor``."""

    settings: Any  # SubtaskSettings: its chain, index and clock
    head: Head
    tail: Tail
    pipeline: OperatorPipeline
    operators: list[Operator]
    records_in: int
    bytes_in: RecordBytes
    idle_time: float
    idle_since: float | None
    started: float
    stopped_at: float | None
    finished: bool


def subtask_counters(actor: CountingSubtask) -> SubtaskCounters:
    """``actor``'s counters now, or as it stopped; its idle time counts the wait going on too."""
    settings, head, tail, pipeline = actor.settings, actor.head, actor.tail, actor.pipeline
    now = settings.clock.now() if actor.stopped_at is None else actor.stopped_at
    since = actor.idle_since
    chain = settings.chain
    return SubtaskCounters(
        chain_id=chain.chain_id,
        chain=chain.name,
        uids=chain.uids,
        subtask_index=settings.subtask_index,
        parallelism=chain.parallelism,
        started=actor.started,
        now=now,
        finished=actor.finished,
        records_in=actor.records_in,
        records_out=tail.records_out,
        bytes_in=actor.bytes_in.total(actor.records_in),
        bytes_out=tail.bytes_out.total(tail.records_out),
        operators=operator_counters(actor),
        idle_time=actor.idle_time if since is None else actor.idle_time + now - since,
        backpressured_time=tail.backpressured_time,
        input_buffered=head.buffered,
        input_capacity=head.capacity,
        output_buffered=tail.buffered,
        output_fill=tail.output_fill,
        input_watermark=pipeline.input_watermark,
        output_watermark=pipeline.output_watermark,
        alignment_drift=head.watermark_alignment_drift,
        split_watermarks=pipeline.split_watermarks,
        late_records_dropped={
            operator.uid: operator.late_records_dropped
            for operator in actor.operators
            if operator.late_records_dropped is not None
        },
        side_output_records=pipeline.side_output_records,
        async_io=tuple(operator.statistics() for _, operator in pipeline.async_stages),
        keyed_state={
            operator.uid: operator.keyed_state.statistics()
            for operator in actor.operators
            if operator.keyed_state.has_states
        },
    )


def operator_counters(actor: CountingSubtask) -> tuple[OperatorCounters, ...]:
    """Every operator of ``actor``'s chain, head first, with the records it took in and sent.

    The chained operators count for themselves (``OperatorPipeline.operator_records``); a
    source, the chain's head outside them, takes in and sends on what the subtask read, and
    a sink, its tail outside them, what the subtask wrote.
    """
    counted = {uid: (taken, sent) for uid, taken, sent in actor.pipeline.operator_records()}
    uids = actor.settings.chain.uids
    source, sink = (actor.records_in,) * 2, (actor.tail.records_out,) * 2
    return tuple(
        OperatorCounters(uid, *counted.get(uid, source if position == 0 else sink))
        for position, uid in enumerate(uids)
    )
