"""Unaligned checkpoints and the aligned timeout in the barrier aligner, scripted.

An unaligned snapshot is taken at once; the records each other channel delivers before its
barrier are the checkpoint's channel state. Together, what was processed before the
snapshot and the channel state are exactly the records before the barriers: nothing lost,
nothing twice.
"""

from __future__ import annotations

from collections import deque

from hypothesis import given
from hypothesis import strategies as st

from lockgate.engine.events import SnapshotOptions
from lockgate.engine.runtime.network.barrier_aligner import (
    AbortCheckpoint,
    AlignmentMode,
    BarrierAligner,
    ChannelStateComplete,
    TriggerSnapshot,
    TriggerUnalignedSnapshot,
)
from tests.engine.runtime.network.scripted_gate import (
    ALIGNED,
    AT_LEAST_ONCE,
    END,
    UNALIGNED,
    Item,
    ScriptedGate,
    barrier,
    channel_streams,
    emitted_before_each_snapshot,
    records_before,
    run,
    timeoutable,
    unaligned,
)

# Three channels; unaligned barrier 1 arrives on channel 2, then 0, then 1.
SKEWED: tuple[list[Item], ...] = (
    ["a1", unaligned(1), "a2"],
    ["b1", "b2", "b3", unaligned(1), "b4"],
    [unaligned(1), "c1"],
)


def test_an_unaligned_barrier_snapshots_at_its_first_arrival() -> None:
    gate = run(*SKEWED)

    assert gate.output[:3] == ["a1", "b1", "unaligned 1"]


def test_records_before_the_barrier_on_the_other_channels_are_recorded_and_processed() -> None:
    gate = run(*SKEWED)

    assert gate.output == ["a1", "b1", "unaligned 1", "b2", "c1", "a2", "b3", "complete 1", "b4"]
    assert gate.recorded == {1: ["b2", "b3"]}


def test_an_unaligned_checkpoint_never_blocks_a_channel() -> None:
    gate = run(*SKEWED)

    assert gate.trace == [("2: barrier 1", set()), ("0: barrier 1", set()), ("1: barrier 1", set())]


def test_a_channel_stops_recording_once_it_delivered_the_barrier() -> None:
    aligner = BarrierAligner(3, mode=ALIGNED)

    aligner.on_barrier(2, unaligned(1))
    assert aligner.recording_channels == frozenset({0, 1})
    aligner.on_barrier(0, unaligned(1))
    assert aligner.recording_channels == frozenset({1})


def test_the_channel_state_completes_when_the_last_live_channel_delivers_the_barrier() -> None:
    aligner = BarrierAligner(2, mode=ALIGNED)
    aligner.on_barrier(0, unaligned(3))

    assert aligner.on_barrier(1, unaligned(3)) == [ChannelStateComplete(3)]
    assert (aligner.pending_checkpoint, aligner.last_triggered) == (None, 3)
    assert aligner.recording_channels == frozenset()


def test_a_single_channel_snapshots_and_completes_at_its_unaligned_barrier() -> None:
    aligner = BarrierAligner(1, mode=ALIGNED)

    decisions = aligner.on_barrier(0, unaligned(1))

    assert decisions == [TriggerUnalignedSnapshot(unaligned(1)), ChannelStateComplete(1)]


def test_the_end_of_a_recording_channel_completes_the_channel_state() -> None:
    gate = run([unaligned(1), "a1"], ["b1", "b2", END])

    assert gate.output == ["unaligned 1", "b1", "a1", "b2", "complete 1"]
    assert gate.recorded == {1: ["b1", "b2"]}


def test_a_newer_barrier_aborts_an_unaligned_checkpoint_still_recording() -> None:
    aligner = BarrierAligner(2, mode=ALIGNED)
    aligner.on_barrier(0, unaligned(1))

    decisions = aligner.on_barrier(0, unaligned(2))

    assert decisions == [AbortCheckpoint(1), TriggerUnalignedSnapshot(unaligned(2))]
    assert aligner.recording_channels == frozenset({1})


def test_the_late_barrier_of_an_aborted_unaligned_checkpoint_is_stale() -> None:
    aligner = BarrierAligner(2, mode=ALIGNED)
    aligner.on_barrier(0, unaligned(1))
    aligner.on_barrier(0, unaligned(2))

    assert aligner.on_barrier(1, unaligned(1)) == []
    assert aligner.pending_checkpoint == 2


def test_a_barrier_of_a_completed_unaligned_checkpoint_is_stale() -> None:
    aligner = BarrierAligner(2, mode=ALIGNED)
    aligner.on_barrier(0, unaligned(1))
    aligner.on_end_of_input(1)

    assert aligner.on_barrier(0, unaligned(1)) == []


def test_an_aligned_barrier_still_aligns_after_unaligned_checkpoints() -> None:
    # A savepoint's barrier is aligned, whatever the checkpoints are.
    gate = run([unaligned(1), "a0", barrier(2), "a1"], ["b1", unaligned(1), "b2", barrier(2)])

    assert gate.output == ["unaligned 1", "b1", "a0", "complete 1", "b2", "snapshot 2", "a1"]
    assert gate.trace[2:] == [("0: barrier 2", {0}), ("1: barrier 2", set())]
    assert gate.recorded == {1: ["b1"]}


def test_at_least_once_mode_ignores_unaligned_barriers() -> None:
    gate = run(*SKEWED, mode=AT_LEAST_ONCE)

    assert gate.output == ["a1", "b1", "b2", "c1", "a2", "b3", "snapshot 1", "b4"]
    assert gate.recorded == {}


# The aligned timeout: aligned first, unaligned once the alignment has lasted the timeout.


def started_alignment(timeout: float, *, at: float = 10.0) -> BarrierAligner:
    aligner = BarrierAligner(3, mode=ALIGNED)
    aligner.on_barrier(0, timeoutable(1, timeout), now=at)
    return aligner


def test_with_an_aligned_timeout_a_checkpoint_starts_aligned() -> None:
    aligner = started_alignment(2.0)

    assert aligner.blocked_channels == frozenset({0})
    assert aligner.recording_channels == frozenset()


def test_the_deadline_runs_from_the_first_barrier() -> None:
    aligner = started_alignment(2.0, at=10.0)
    aligner.on_barrier(1, timeoutable(1, 2.0), now=11.0)

    assert aligner.alignment_deadline == 12.0
    assert aligner.statistics().alignment_deadline == 12.0


def test_before_its_deadline_the_alignment_stays_aligned() -> None:
    aligner = started_alignment(2.0, at=10.0)

    assert aligner.on_time(11.9) == []
    assert aligner.blocked_channels == frozenset({0})


def test_at_its_deadline_the_checkpoint_goes_unaligned() -> None:
    aligner = started_alignment(2.0, at=10.0)
    aligner.on_barrier(1, timeoutable(1, 2.0), now=11.0)

    decisions = aligner.on_time(12.0)

    forwarded = barrier(1, SnapshotOptions(unaligned=True))
    assert decisions == [TriggerUnalignedSnapshot(forwarded)]
    assert (aligner.blocked_channels, aligner.recording_channels) == (frozenset(), {2})
    assert aligner.alignment_deadline is None


def test_a_barrier_arriving_after_the_deadline_switches_before_it_completes_nothing() -> None:
    aligner = started_alignment(2.0, at=10.0)

    decisions = aligner.on_barrier(1, timeoutable(1, 2.0), now=13.0)

    assert [type(d) for d in decisions] == [TriggerUnalignedSnapshot]
    assert aligner.recording_channels == frozenset({2})


def test_an_alignment_that_completes_before_its_deadline_is_aligned() -> None:
    aligner = started_alignment(2.0, at=10.0)
    aligner.on_barrier(1, timeoutable(1, 2.0), now=10.5)

    decisions = aligner.on_barrier(2, timeoutable(1, 2.0), now=11.0)

    assert decisions == [TriggerSnapshot(timeoutable(1, 2.0))]


def test_a_zero_timeout_goes_unaligned_at_the_first_barrier() -> None:
    aligner = BarrierAligner(2, mode=ALIGNED)

    decisions = aligner.on_barrier(1, timeoutable(1, 0.0), now=5.0)

    assert [type(d) for d in decisions] == [TriggerUnalignedSnapshot]
    assert aligner.recording_channels == frozenset({0})


def test_a_barrier_that_arrives_unaligned_switches_the_alignment_at_once() -> None:
    # Its upstream timed out first and sent it ahead of the records queued behind it.
    aligner = started_alignment(60.0, at=10.0)

    decisions = aligner.on_barrier(1, unaligned(1), now=10.1)

    assert [type(d) for d in decisions] == [TriggerUnalignedSnapshot]
    assert aligner.recording_channels == frozenset({2})


def test_records_queued_behind_a_barrier_before_the_switch_are_not_recorded() -> None:
    gate = ScriptedGate(
        [deque([timeoutable(1, 1.0), "a1"]), deque(["b1", "b2", timeoutable(1, 1.0)])],
        BarrierAligner(2, mode=ALIGNED),
    )
    gate.read(0)
    gate.read(1)
    gate.tick(1.0)
    gate.run()

    assert gate.output == ["b1", "unaligned 1", "a1", "b2", "complete 1"]
    assert gate.recorded == {1: ["b2"]}


def test_without_an_aligned_timeout_there_is_no_deadline() -> None:
    aligner = BarrierAligner(2, mode=ALIGNED)
    aligner.on_barrier(0, barrier(1), now=3.0)

    assert aligner.alignment_deadline is None
    assert aligner.on_time(1e9) == []


def test_at_least_once_mode_has_no_deadline() -> None:
    aligner = BarrierAligner(2, mode=AlignmentMode.AT_LEAST_ONCE)
    aligner.on_barrier(0, timeoutable(1, 0.0))

    assert aligner.alignment_deadline is None
    assert aligner.recording_channels == frozenset()


def test_repr_shows_an_unaligned_checkpoint_recording() -> None:
    aligner = BarrierAligner(2, mode=ALIGNED)
    aligner.on_barrier(1, unaligned(4))

    assert repr(aligner) == (
        "<BarrierAligner aligned pending=4 unaligned delivered=[1] blocked=[] live=[0, 1]/2"
        " last_triggered=4>"
    )


# Properties over random interleavings: snapshot + channel state = records before barrier n.


def snapshot_and_channel_state(gate: ScriptedGate, streams: list[list[Item]]) -> None:
    """Each checkpoint completes or is aborted (a newer barrier overtook it); for each one
    that completed, the records processed before its snapshot and its channel state are the
    records before its barriers, each once."""
    most = max(sum(not isinstance(i, str) and i != END for i in items) for items in streams)
    ended = {int(e.split()[1]): e.split()[0] for e in gate.output if e.split()[0] in ENDINGS}
    assert sorted(ended) == list(range(1, most + 1))
    before = emitted_before_each_snapshot(gate.output)
    for n in [n for n, ending in ended.items() if ending != "abort"]:
        recorded = gate.recorded.get(n, [])
        assert len(set(recorded)) == len(recorded)
        assert before[n].isdisjoint(recorded)
        assert before[n] | set(recorded) == records_before(streams, n)


ENDINGS = ("snapshot", "complete", "abort")


@given(channel_streams(unaligned), st.data())
def test_unaligned_snapshot_and_channel_state_hold_each_record_before_the_barrier_once(
    streams: list[list[Item]], data: st.DataObject
) -> None:
    gate = ScriptedGate([deque(s) for s in streams], BarrierAligner(len(streams), mode=ALIGNED))
    gate.run(lambda readable: data.draw(st.sampled_from(readable)))

    snapshot_and_channel_state(gate, streams)
    assert all(blocked == set() for _, blocked in gate.trace)


@given(st.sampled_from([0.0, 1.0, 3.0]), st.data())
def test_with_an_aligned_timeout_each_record_before_the_barrier_is_held_once(
    timeout: float, data: st.DataObject
) -> None:
    streams = data.draw(channel_streams(lambda n: timeoutable(n, timeout)))
    gate = ScriptedGate([deque(s) for s in streams], BarrierAligner(len(streams), mode=ALIGNED))

    while readable := gate.readable():
        if data.draw(st.booleans()):
            gate.tick(gate.now + 1.0)
        gate.read(data.draw(st.sampled_from(readable)))

    snapshot_and_channel_state(gate, streams)
    assert all(not queue for queue in gate.queues)


def test_unaligned_barriers_reach_an_aligner_in_at_least_once_mode_unharmed() -> None:
    gate = run([unaligned(1)], ["r1", barrier(1, UNALIGNED)], mode=AT_LEAST_ONCE)

    assert gate.output == ["r1", "snapshot 1"]
