"""Barrier alignment, scripted: channel queues read by a tiny deterministic input gate."""

from __future__ import annotations

import ast
from collections import deque
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lockgate.engine import CheckpointBarrier
from lockgate.engine.errors import BarrierProtocolError
from lockgate.engine.runtime.network import barrier_aligner
from lockgate.engine.runtime.network.barrier_aligner import (
    AlignerStatistics,
    AlignmentMode,
    BarrierAligner,
    TriggerSnapshot,
)
from tests.engine.runtime.network.scripted_gate import (
    ALIGNED,
    AT_LEAST_ONCE,
    END,
    Item,
    ScriptedGate,
    barrier,
    channel_streams,
    emitted_before_each_snapshot,
    records_before,
    run,
)

# Three channels; barrier 1 arrives on channel 2, then 0, then 1.
SKEWED: tuple[list[Item], ...] = (
    ["a1", barrier(1), "a2"],
    ["b1", "b2", barrier(1), "b3"],
    [barrier(1), "c1"],
)


def test_records_behind_a_barrier_come_out_only_after_the_snapshot() -> None:
    gate = run(*SKEWED)

    assert gate.output == ["a1", "b1", "b2", "snapshot 1", "c1", "a2", "b3"]


def test_channels_stay_blocked_from_their_barrier_until_the_last_one_arrives() -> None:
    gate = run(*SKEWED)

    assert gate.trace == [("2: barrier 1", {2}), ("0: barrier 1", {0, 2}), ("1: barrier 1", set())]


def test_each_checkpoint_aligns_whatever_order_its_barriers_arrive_in() -> None:
    gate = run(
        [barrier(1), "a1", "a2", barrier(2)],
        ["b1", barrier(1), barrier(2), "b2"],
        ["c1", "c2", barrier(1), barrier(2)],
    )

    assert gate.output == ["b1", "c1", "c2", "snapshot 1", "a1", "a2", "snapshot 2", "b2"]
    assert gate.trace == [
        ("0: barrier 1", {0}),
        ("1: barrier 1", {0, 1}),
        ("2: barrier 1", set()),
        ("1: barrier 2", {1}),
        ("2: barrier 2", {1, 2}),
        ("0: barrier 2", set()),
    ]


# Channel 1 never carries barrier 1: barrier 2 overtakes the alignment of 1.
OVERTAKEN: tuple[list[Item], ...] = (
    [barrier(1), "a1", barrier(2), "a2"],
    ["b1", barrier(2), "b2"],
    ["c1", barrier(1), "c2", barrier(2)],
)


def test_a_newer_barrier_mid_alignment_aborts_the_pending_checkpoint() -> None:
    gate = run(*OVERTAKEN)

    assert gate.output == ["b1", "c1", "abort 1", "a1", "c2", "snapshot 2", "a2", "b2"]


def test_a_newer_barrier_unblocks_everything_but_its_own_channel() -> None:
    gate = run(*OVERTAKEN)

    assert gate.trace == [
        ("0: barrier 1", {0}),
        ("1: barrier 2", {1}),
        ("2: barrier 1", {1}),
        ("0: barrier 2", {0, 1}),
        ("2: barrier 2", set()),
    ]


def test_a_newer_barrier_that_completes_at_once_aborts_then_snapshots() -> None:
    # Channel 0 ends after barrier 1, so channel 1 alone decides checkpoint 2.
    gate = run([barrier(1), END], ["b1", barrier(2)], mode=AT_LEAST_ONCE)

    assert gate.output == ["b1", "abort 1", "snapshot 2"]


def test_end_of_input_during_alignment_completes_it() -> None:
    gate = run([barrier(1), "a1"], ["b1", END], [barrier(1), "c1"])

    assert gate.output == ["b1", "snapshot 1", "c1", "a1"]
    assert gate.trace == [
        ("0: barrier 1", {0}),
        ("2: barrier 1", {0, 2}),
        ("1: end", set()),
    ]


def test_an_ended_channel_counts_as_aligned_for_later_checkpoints() -> None:
    gate = run([barrier(1), "a1", barrier(2), "a2"], [END], ["c1", barrier(1), barrier(2)])

    assert gate.output == ["c1", "snapshot 1", "a1", "snapshot 2", "a2"]


def test_when_every_channel_has_ended_nothing_is_blocked() -> None:
    gate = run(["a1", END], [barrier(1), END], [END])

    assert gate.output == ["a1", "snapshot 1"]
    assert gate.trace == [
        ("1: barrier 1", {1}),
        ("2: end", {1}),
        ("0: end", set()),
        ("1: end", set()),
    ]
    assert gate.aligner.statistics().live_channels == frozenset()


def test_ending_a_channel_that_delivered_the_pending_barrier_keeps_the_alignment() -> None:
    aligner = BarrierAligner(2, mode=AT_LEAST_ONCE)
    aligner.on_barrier(0, barrier(1))

    assert aligner.on_end_of_input(0) == []
    assert aligner.on_barrier(1, barrier(1)) == [TriggerSnapshot(barrier(1))]


def test_an_ended_channel_is_never_blocked() -> None:
    aligner = BarrierAligner(2, mode=ALIGNED)
    aligner.on_barrier(0, barrier(1))

    aligner.on_end_of_input(0)

    assert (aligner.blocked_channels, aligner.pending_checkpoint) == (frozenset(), 1)


def test_a_barrier_older_than_the_pending_one_is_ignored_and_blocks_nothing() -> None:
    gate = run([barrier(2), "a1"], [barrier(1), "b1", barrier(2), "b2"])

    assert gate.output == ["b1", "snapshot 2", "a1", "b2"]
    assert gate.trace == [("0: barrier 2", {0}), ("1: barrier 1", {0}), ("1: barrier 2", set())]


def test_a_barrier_of_an_already_triggered_checkpoint_is_ignored() -> None:
    aligner = BarrierAligner(2, mode=ALIGNED)
    aligner.on_barrier(0, barrier(2))
    aligner.on_barrier(1, barrier(2))

    assert aligner.on_barrier(0, barrier(1)) == []
    assert aligner.on_barrier(1, barrier(2)) == []
    assert aligner.blocked_channels == frozenset()
    assert aligner.pending_checkpoint is None


def test_a_single_channel_snapshots_at_each_barrier_without_blocking() -> None:
    gate = run(["a1", barrier(1), "a2", barrier(2), "a3"])

    assert gate.output == ["a1", "snapshot 1", "a2", "snapshot 2", "a3"]
    assert gate.trace == [("0: barrier 1", set()), ("0: barrier 2", set())]


def test_at_least_once_lets_records_behind_a_barrier_flow_before_the_snapshot() -> None:
    gate = run(*SKEWED, mode=AT_LEAST_ONCE)

    assert gate.output == ["a1", "b1", "b2", "c1", "a2", "snapshot 1", "b3"]


def test_at_least_once_never_blocks_a_channel() -> None:
    gate = run(*SKEWED, mode=AT_LEAST_ONCE)

    assert gate.trace == [("2: barrier 1", set()), ("0: barrier 1", set()), ("1: barrier 1", set())]
    assert not gate.aligner.is_blocked(2)


def test_at_least_once_aborts_an_unfinished_checkpoint_when_a_newer_barrier_arrives() -> None:
    gate = run([barrier(1), "a1", barrier(2)], ["b1", "b2", barrier(2)], mode=AT_LEAST_ONCE)

    assert gate.output == ["b1", "a1", "b2", "abort 1", "snapshot 2"]


def test_a_second_barrier_of_the_pending_checkpoint_on_one_channel_is_an_error() -> None:
    aligner = BarrierAligner(3, mode=ALIGNED)
    aligner.on_barrier(1, barrier(4))

    with pytest.raises(BarrierProtocolError, match=r"channel 1 .* checkpoint 4 twice"):
        aligner.on_barrier(1, barrier(4))


def test_a_barrier_after_the_end_of_its_channel_is_an_error() -> None:
    aligner = BarrierAligner(3, mode=AT_LEAST_ONCE)
    aligner.on_end_of_input(2)

    with pytest.raises(BarrierProtocolError, match=r"channel 2 .* checkpoint 1 after its End"):
        aligner.on_barrier(2, barrier(1))


def test_a_second_end_of_input_on_one_channel_is_an_error() -> None:
    aligner = BarrierAligner(2, mode=ALIGNED)
    aligner.on_end_of_input(0)

    with pytest.raises(BarrierProtocolError, match="channel 0 delivered EndOfInput after"):
        aligner.on_end_of_input(0)


def test_a_channel_out_of_range_is_an_error() -> None:
    aligner = BarrierAligner(3, mode=ALIGNED)

    with pytest.raises(BarrierProtocolError, match="channel 3 does not exist"):
        aligner.on_barrier(3, barrier(1))


def test_a_protocol_error_is_a_value_error_and_leaves_the_state_unchanged() -> None:
    aligner = BarrierAligner(2, mode=ALIGNED)
    aligner.on_barrier(0, barrier(1))
    before = aligner.statistics()

    with pytest.raises(ValueError, match="twice"):
        aligner.on_barrier(0, barrier(1))
    assert aligner.statistics() == before


def test_an_aligner_needs_at_least_one_channel() -> None:
    with pytest.raises(ValueError, match="at least one channel; got 0"):
        BarrierAligner(0, mode=ALIGNED)


def test_statistics_show_the_alignment_in_progress() -> None:
    aligner = BarrierAligner(3, mode=ALIGNED)
    aligner.on_barrier(0, barrier(1))
    aligner.on_barrier(1, barrier(2))
    aligner.on_end_of_input(2)

    assert aligner.statistics() == AlignerStatistics(
        mode=ALIGNED,
        pending_checkpoint=2,
        blocked_channels=frozenset({1}),
        live_channels=frozenset({0, 1}),
        last_triggered=0,
        aborted_count=1,
    )


def test_a_fresh_aligner_has_triggered_nothing() -> None:
    aligner = BarrierAligner(2, mode=ALIGNED)

    assert (aligner.pending_checkpoint, aligner.last_triggered) == (None, 0)


def test_repr_shows_the_live_state() -> None:
    aligner = BarrierAligner(3, mode=ALIGNED)
    aligner.on_barrier(2, barrier(5))
    aligner.on_end_of_input(0)

    assert repr(aligner) == (
        "<BarrierAligner aligned pending=5 delivered=[2] blocked=[2] live=[1, 2]/3"
        " last_triggered=0>"
    )


def test_the_aligner_runs_without_an_event_loop_library() -> None:
    tree = ast.parse(Path(barrier_aligner.__file__).read_text())
    imported = {
        name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for name in (
            [node.module] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
        )
    }

    assert not {m for m in imported if m and m.split(".")[0] in {"anyio", "asyncio", "trio"}}


def run_interleaved(
    streams: list[list[Item]], data: st.DataObject, mode: AlignmentMode
) -> ScriptedGate:
    gate = ScriptedGate(
        [deque(items) for items in streams], BarrierAligner(len(streams), mode=mode)
    )
    return gate.run(lambda readable: data.draw(st.sampled_from(readable)))


@given(channel_streams(), st.data())
def test_aligned_mode_snapshots_exactly_the_records_before_each_barrier(
    streams: list[list[Item]], data: st.DataObject
) -> None:
    gate = run_interleaved(streams, data, ALIGNED)
    most = max(sum(isinstance(i, CheckpointBarrier) for i in items) for items in streams)

    assert emitted_before_each_snapshot(gate.output) == {
        n: records_before(streams, n) for n in range(1, most + 1)
    }


@given(channel_streams(), st.data())
def test_aligned_mode_reads_every_record_once_and_never_deadlocks(
    streams: list[list[Item]], data: st.DataObject
) -> None:
    gate = run_interleaved(streams, data, ALIGNED)
    records = [item for items in streams for item in items if isinstance(item, str)]

    assert sorted(r for r in gate.output if r.startswith("r")) == sorted(records)
    assert all(not queue for queue in gate.queues)


@given(channel_streams(), st.data())
def test_at_least_once_snapshots_after_every_record_before_its_barrier(
    streams: list[list[Item]], data: st.DataObject
) -> None:
    gate = run_interleaved(streams, data, AT_LEAST_ONCE)

    for n, emitted in emitted_before_each_snapshot(gate.output).items():
        assert records_before(streams, n) <= emitted


@given(channel_streams(), st.data())
def test_aligned_mode_snapshots_every_checkpoint_once_in_order_and_aborts_none(
    streams: list[list[Item]], data: st.DataObject
) -> None:
    gate = run_interleaved(streams, data, ALIGNED)
    most = max(sum(isinstance(i, CheckpointBarrier) for i in items) for items in streams)

    decisions = [entry for entry in gate.output if not entry.startswith("r")]
    assert decisions == [f"snapshot {n}" for n in range(1, most + 1)]
