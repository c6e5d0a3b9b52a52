"""Gates under unaligned checkpoints: barriers overtake, in-flight records are kept, restored
channel state goes first."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from lockgate.actors import Channel
from lockgate.engine import CheckpointBarrier, ManualClock
from lockgate.engine.checkpointing.channel_state import ChannelId
from lockgate.engine.events import ChannelItem, SnapshotOptions, item_size
from lockgate.engine.runtime.network.barrier_aligner import (
    AlignmentMode,
    BarrierAligner,
    ChannelStateComplete,
    TriggerUnalignedSnapshot,
)
from lockgate.engine.runtime.network.input_channel_state import InputChannelState
from lockgate.engine.runtime.network.input_gate import InputGate
from lockgate.engine.runtime.network.output_gate import OutputGate
from lockgate.engine.runtime.network.partitioners import ForwardPartitioner, RebalancePartitioner
from lockgate.engine.runtime.network.partitions import OutputPartition

UNALIGNED = SnapshotOptions(unaligned=True)
BARRIER = CheckpointBarrier(1, 0.0, UNALIGNED)
KEYS = [ChannelId(3, 0, 0), ChannelId(3, 0, 1)]


def channel(capacity: int = 100) -> Channel[ChannelItem]:
    return Channel(capacity, size_of=item_size)


def drain(ch: Channel[ChannelItem]) -> list[Any]:
    return [ch.receive_nowait() for _ in range(len(ch))]


def output_gate(
    channels: list[Channel[ChannelItem]], restored: dict[ChannelId, list[Any]] | None = None
) -> OutputGate:
    partitioner = ForwardPartitioner() if len(channels) == 1 else RebalancePartitioner()
    partition = OutputPartition(partitioner, channels, KEYS[: len(channels)])
    return OutputGate([partition], batch_size=2, clock=ManualClock(), restored=restored)


async def test_overtake_puts_the_barrier_first_and_returns_the_records_it_overtook() -> None:
    first, second = channel(), channel()
    gate = output_gate([first, second])
    await gate.emit([1, 2, 3, 4, 5])

    state = gate.overtake(BARRIER)

    assert state == {KEYS[0]: [1, 3, 5], KEYS[1]: [2, 4]}
    assert drain(first) == [BARRIER, [1, 3]]
    assert drain(second) == [BARRIER, [2, 4]]


async def test_records_held_back_are_output_channel_state_and_are_still_sent() -> None:
    out = channel()
    gate = output_gate([out])
    await gate.emit([1, 2, 3])

    assert gate.overtake(BARRIER) == {KEYS[0]: [1, 2, 3]}
    await gate.flush()
    assert drain(out) == [BARRIER, [1, 2], [3]]


async def test_overtake_after_the_end_of_output_does_nothing() -> None:
    out = channel()
    gate = output_gate([out])
    await gate.end_input()

    assert gate.overtake(BARRIER) == {}


async def test_restored_output_channel_state_is_sent_before_anything_new() -> None:
    out = channel()
    gate = output_gate([out], restored={KEYS[0]: ["r1", "r2", "r3"]})

    await gate.emit(["n1", "n2"])
    await gate.flush()

    assert drain(out) == [["r1", "r2"], ["r3"], ["n1", "n2"]]


def test_restored_channel_state_for_a_channel_the_gate_lacks_is_refused() -> None:
    with pytest.raises(ValueError, match="channels this gate does not send to"):
        output_gate([channel()], restored={ChannelId(9, 0, 0): [1]})


async def test_restored_records_count_as_buffered_until_sent() -> None:
    gate = output_gate([channel()], restored={KEYS[0]: ["r1", "r2", "r3"]})

    assert gate.buffered == 3
    assert gate.buffered_since is not None


async def test_a_waiter_waits_for_room_and_an_overtake_meanwhile_keeps_the_batch_in_hand() -> None:
    out = channel(capacity=2)
    gate = output_gate([out])
    states = []

    async def waiter(full: Channel[ChannelItem], item: ChannelItem) -> None:
        states.append(gate.overtake(CheckpointBarrier(len(states) + 1, 0.0, UNALIGNED)))
        full.receive_nowait()  # downstream takes the barrier just sent
        full.receive_nowait()  # ... and the batch queued before it

    gate.waiter = waiter
    await gate.emit([1, 2])
    await gate.emit([3, 4])

    assert states == [{KEYS[0]: [1, 2, 3, 4]}]
    assert drain(out) == [[3, 4]]


async def test_every_partition_is_routed_before_a_send_waits() -> None:
    first, second = channel(capacity=2), channel()
    first.send_nowait([0, 0])
    gate = OutputGate(
        [
            OutputPartition(ForwardPartitioner(), [first], [KEYS[0]]),
            OutputPartition(ForwardPartitioner(), [second], [KEYS[1]]),
        ],
        batch_size=2,
        clock=ManualClock(),
    )
    states = []

    async def waiter(full: Channel[ChannelItem], item: ChannelItem) -> None:
        states.append(gate.overtake(BARRIER))
        drain(full)

    gate.waiter = waiter
    await gate.emit([7, 8])

    assert states == [{KEYS[0]: [0, 0, 7, 8], KEYS[1]: [7, 8]}]


async def test_without_a_waiter_a_full_channel_waits_as_before() -> None:
    out = channel(capacity=2)
    gate = output_gate([out])
    await gate.emit([1, 2])

    async with anyio.create_task_group() as group:
        group.start_soon(gate.emit, [3, 4])
        await anyio.wait_all_tasks_blocked()
        assert drain(out) == [[1, 2]]

    assert drain(out) == [[3, 4]]


# Input side


def input_gate(
    channels: list[Channel[ChannelItem]],
    restored: dict[ChannelId, list[Any]] | None = None,
    clock: ManualClock | None = None,
) -> InputGate:
    keys = [ChannelId(0, index, 0) for index in range(len(channels))]
    in_flight = InputChannelState(keys, restored or {}, batch_size=2)
    aligner = BarrierAligner(len(channels), mode=AlignmentMode.ALIGNED)
    return InputGate(channels, aligner, clock or ManualClock(), in_flight)


def polled(gate: InputGate, times: int) -> list[Any]:
    return [gate.poll() for _ in range(times)]


def test_records_read_before_the_barrier_on_a_recording_channel_are_channel_state() -> None:
    first, second = channel(), channel()
    first.send_nowait(BARRIER)
    first.send_nowait(["a"])
    second.send_nowait(["b1"])
    second.send_nowait(["b2"])
    second.send_nowait(BARRIER)
    gate = input_gate([first, second])

    items = polled(gate, 6)

    assert items == [
        TriggerUnalignedSnapshot(BARRIER),
        ["b1"],
        ["a"],
        ["b2"],
        ChannelStateComplete(1),
        None,
    ]
    assert gate.in_flight.take(1) == {ChannelId(0, 0, 0): [], ChannelId(0, 1, 0): ["b1", "b2"]}


def test_restored_input_channel_state_comes_first_in_channel_order() -> None:
    first, second = channel(), channel()
    first.send_nowait(["new"])
    restored = {ChannelId(0, 1, 0): ["y1", "y2", "y3"], ChannelId(0, 0, 0): ["x1"]}

    gate = input_gate([first, second], restored)

    assert polled(gate, 5) == [["x1"], ["y1", "y2"], ["y3"], ["new"], None]


def test_restored_records_left_when_an_unaligned_checkpoint_starts_are_its_channel_state() -> None:
    first, second = channel(), channel()
    first.send_first(BARRIER)
    second.send_nowait(BARRIER)
    gate = input_gate([first, second], {ChannelId(0, 1, 0): ["y1", "y2", "y3"]})
    assert gate.poll() == ["y1", "y2"]

    assert gate.poll_priority() == [TriggerUnalignedSnapshot(BARRIER)]
    assert polled(gate, 3) == [["y3"], ChannelStateComplete(1), None]
    assert gate.in_flight.take(1) == {ChannelId(0, 0, 0): [], ChannelId(0, 1, 0): ["y3"]}


def test_poll_priority_takes_only_the_barriers_sent_first() -> None:
    first, second = channel(), channel()
    first.send_nowait(["a"])
    first.send_first(BARRIER)
    second.send_nowait(["b"])
    gate = input_gate([first, second])

    assert gate.poll_priority() == [TriggerUnalignedSnapshot(BARRIER)]
    assert polled(gate, 3) == [["a"], ["b"], None]
    assert gate.poll_priority() == []


def test_an_aligned_timeout_passing_on_the_clock_switches_the_gate_to_unaligned() -> None:
    clock = ManualClock()
    timeoutable = CheckpointBarrier(1, 0.0, SnapshotOptions(unaligned=True, aligned_timeout=2.0))
    first, second = channel(), channel()
    first.send_nowait(timeoutable)
    first.send_nowait(["after"])
    second.send_nowait(["before"])
    gate = input_gate([first, second], clock=clock)
    assert polled(gate, 3) == [["before"], None, None]
    assert gate.alignment_deadline == 2.0

    clock.advance(2.0)

    unaligned = CheckpointBarrier(1, 0.0, UNALIGNED)
    assert polled(gate, 3) == [TriggerUnalignedSnapshot(unaligned), ["after"], None]


def test_defer_hands_a_decision_back_to_be_polled_first() -> None:
    first = channel()
    first.send_nowait(["a"])
    gate = input_gate([first])

    gate.defer(ChannelStateComplete(4))

    assert polled(gate, 2) == [ChannelStateComplete(4), ["a"]]


def test_an_abort_drops_what_was_recorded() -> None:
    state = InputChannelState([ChannelId(0, 0, 0)], {}, batch_size=2)
    state.start(1)
    state.record(0, ["a"])

    state.abort(1)
    state.finish(1)

    assert state.take(1) == {}


def test_channel_state_is_handed_out_once_and_only_for_its_checkpoint() -> None:
    state = InputChannelState([ChannelId(0, 0, 0)], {}, batch_size=2)
    state.start(2)
    state.record(0, ["a"])
    state.finish(2)

    assert state.take(1) == {}
    state.start(3)
    state.finish(3)
    assert state.take(3) == {ChannelId(0, 0, 0): []}


def test_restored_input_state_for_a_channel_the_gate_lacks_is_refused() -> None:
    with pytest.raises(ValueError, match="channels this gate does not read"):
        InputChannelState([ChannelId(0, 0, 0)], {ChannelId(1, 0, 0): [1]}, batch_size=2)
