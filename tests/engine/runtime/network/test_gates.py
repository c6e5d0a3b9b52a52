from __future__ import annotations

from typing import Any

import anyio

from lockgate.actors import Channel
from lockgate.engine import CheckpointBarrier, EndOfInput, ManualClock
from lockgate.engine.events import ChannelItem, item_size
from lockgate.engine.runtime.network.barrier_aligner import (
    AlignmentMode,
    BarrierAligner,
    TriggerSnapshot,
)
from lockgate.engine.runtime.network.input_gate import InputGate
from lockgate.engine.runtime.network.output_gate import OutputGate
from lockgate.engine.runtime.network.partitioners import ForwardPartitioner, RebalancePartitioner
from lockgate.engine.runtime.network.partitions import OutputPartition


def aligner(channels: int) -> BarrierAligner:
    return BarrierAligner(channels, mode=AlignmentMode.ALIGNED)


def channel(capacity: int = 100) -> Channel[ChannelItem]:
    return Channel(capacity, size_of=item_size)


def gate(channels: list[Channel[ChannelItem]], batch_size: int = 4) -> OutputGate:
    partitioner = ForwardPartitioner() if len(channels) == 1 else RebalancePartitioner()
    partition = OutputPartition(partitioner, channels)
    return OutputGate([partition], batch_size=batch_size, clock=ManualClock())


def drain(ch: Channel[ChannelItem]) -> list[Any]:
    items = []
    while len(ch):
        items.append(ch.receive_nowait())
    return items


async def test_a_partial_batch_stays_buffered_until_flushed() -> None:
    out = channel()
    output = gate([out])

    await output.emit([1, 2, 3])

    assert drain(out) == []
    assert output.buffered == 3
    await output.flush()
    assert drain(out) == [[1, 2, 3]]


async def test_a_full_batch_is_sent_at_once_in_batch_sized_pieces() -> None:
    out = channel()
    output = gate([out], batch_size=4)

    await output.emit(list(range(10)))

    assert drain(out) == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert output.buffered == 2


async def test_buffered_records_are_flushed_before_an_event() -> None:
    out = channel()
    output = gate([out])
    barrier = CheckpointBarrier(1, 0.0)

    await output.emit(["a"])
    await output.broadcast_event(barrier)

    assert drain(out) == [["a"], barrier]


async def test_end_of_input_reaches_every_channel_after_the_last_records() -> None:
    first, second = channel(), channel()
    output = gate([first, second])

    await output.emit([1, 2, 3])
    await output.end_input()

    assert drain(first) == [[1, 3], EndOfInput()]
    assert drain(second) == [[2], EndOfInput()]
    assert first.closed and second.closed


async def test_buffered_since_marks_when_the_oldest_unsent_record_was_buffered() -> None:
    clock = ManualClock(start=5.0)
    output = OutputGate(
        [OutputPartition(ForwardPartitioner(), [channel()])], batch_size=4, clock=clock
    )

    await output.emit([1])
    clock.advance(1.0)
    await output.emit([2])

    assert output.buffered_since == 5.0
    await output.flush()
    assert output.buffered_since is None


def test_input_gate_reads_its_channels_in_turn() -> None:
    first, second = channel(), channel()
    for item in ([1], [2]):
        first.send_nowait(item)
    for item in ([10], [20]):
        second.send_nowait(item)
    inputs = InputGate([first, second], aligner(2), ManualClock())

    assert [inputs.poll() for _ in range(5)] == [[1], [10], [2], [20], None]


def test_input_gate_reports_end_of_input_once_every_channel_ended() -> None:
    first, second = channel(), channel()
    first.send_nowait(EndOfInput())
    second.send_nowait([7])
    inputs = InputGate([first, second], aligner(2), ManualClock())

    assert inputs.poll() == [7]
    assert inputs.poll() is None
    second.send_nowait(EndOfInput())
    assert inputs.poll() == EndOfInput()


def test_input_gate_does_not_read_a_channel_blocked_by_alignment() -> None:
    first, second = channel(), channel()
    first.send_nowait(CheckpointBarrier(1, 0.0))
    first.send_nowait(["after"])
    second.send_nowait(["before"])
    second.send_nowait(CheckpointBarrier(1, 0.0))
    inputs = InputGate([first, second], aligner(2), ManualClock())

    assert inputs.poll() == ["before"]
    assert inputs.poll() == TriggerSnapshot(CheckpointBarrier(1, 0.0))
    assert inputs.poll() == ["after"]


async def test_backpressured_time_counts_the_wait_for_room_going_on_now() -> None:
    clock = ManualClock()
    out = channel(capacity=4)
    output = OutputGate([OutputPartition(ForwardPartitioner(), [out])], batch_size=4, clock=clock)
    await output.emit([1, 2, 3, 4])  # the channel is full now

    async with anyio.create_task_group() as group:
        group.start_soon(output.emit, [5, 6, 7, 8])
        await anyio.wait_all_tasks_blocked()
        clock.advance(2.5)
        waiting = output.backpressured_time
        drain(out)

    clock.advance(1.0)
    assert (waiting, output.backpressured_time) == (2.5, 2.5)
