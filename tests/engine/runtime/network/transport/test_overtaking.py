"""Unaligned barriers across a connection: they overtake queued data on both sides, and
what they overtook is exactly the channel state the two subtasks capture."""

from __future__ import annotations

from typing import Any

import anyio

from lockgate.actors import Channel
from lockgate.engine import CheckpointBarrier, EndOfInput, ManualClock
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
from lockgate.engine.runtime.network.partitioners import ForwardPartitioner
from lockgate.engine.runtime.network.partitions import OutputPartition
from lockgate.engine.runtime.network.transport import SendingChannel

from .pair import EDGE, Consumer, Overtaken, connection_pair, wait_until

BARRIER = CheckpointBarrier(1, 0.0, SnapshotOptions(unaligned=True))


def output_gate(channel: SendingChannel) -> OutputGate:
    partition = OutputPartition(ForwardPartitioner(), [channel], [EDGE])
    return OutputGate([partition], batch_size=2, clock=ManualClock())


def records_of(items: list[Any]) -> list[Any]:
    return [record for item in items if type(item) is list for record in item]


async def emit_and_end(gate: OutputGate, records: list[Any]) -> None:
    await gate.emit(records)
    await gate.end_input()


async def test_a_barrier_overtakes_batches_queued_on_both_sides_of_the_connection() -> None:
    consumer, overtaken = Consumer(capacity=4), Overtaken()
    async with connection_pair() as (producer_end, consumer_end):
        sending = producer_end.open_sending(EDGE, capacity=4)
        receiving = consumer_end.open_receiving(EDGE, consumer.channel, on_overtaken=overtaken)
        gate = output_gate(sending)
        async with producer_end, consumer_end, anyio.create_task_group() as group:
            group.start_soon(emit_and_end, gate, list(range(20)))
            await wait_until(lambda: receiving.statistics().records == 4)
            taken = [await consumer.take()]  # [0, 1]: before the barrier, in operator state
            await wait_until(lambda: receiving.statistics().records == 6)

            output_state = gate.overtake(BARRIER)
            await wait_until(lambda: bool(overtaken.calls))
            after = await consumer.take_to_the_end()

    assert taken == [[0, 1]]
    assert after[0] == BARRIER
    assert overtaken.calls == [(BARRIER, [2, 3, 4, 5])]  # they had reached the consumer
    assert output_state == {EDGE: list(range(6, 20))}  # credit-blocked in the producer
    assert records_of(after) == overtaken.calls[0][1] + output_state[EDGE]


async def test_a_barrier_overtakes_the_frames_still_queued_on_the_connection() -> None:
    consumer, overtaken = Consumer(capacity=100), Overtaken()
    async with connection_pair() as (producer_end, consumer_end):
        sending = producer_end.open_sending(EDGE, capacity=100)
        consumer_end.open_receiving(EDGE, consumer.channel, on_overtaken=overtaken)
        async with producer_end, consumer_end:
            await wait_until(lambda: sending.transport_statistics().credits.window_records == 100)
            sending.send_nowait([1, 2])
            sending.send_nowait([3, 4])
            queued = sending.send_first(BARRIER)  # before the writer ran: nothing yielded
            sending.send_nowait(EndOfInput())
            received = await consumer.take_to_the_end()

    assert queued == [[1, 2], [3, 4]]
    assert received == [BARRIER, [1, 2], [3, 4], EndOfInput()]
    assert overtaken.calls == [(BARRIER, [])]


async def test_the_records_a_barrier_overtook_are_exactly_the_captured_channel_state() -> None:
    remote, local = Consumer(capacity=4), local_input()
    keys = [EDGE, ChannelId(2, 0, 0)]
    in_flight = InputChannelState(keys, {}, batch_size=2)
    input_gate = InputGate(
        [remote.channel, local],
        BarrierAligner(2, mode=AlignmentMode.ALIGNED),
        ManualClock(),
        in_flight,
    )

    def add_overtaken(barrier: CheckpointBarrier, records: list[Any]) -> None:
        in_flight.add_overtaken(barrier.checkpoint_id, 0, records)

    async with connection_pair() as (producer_end, consumer_end):
        sending = producer_end.open_sending(EDGE, capacity=4)
        receiving = consumer_end.open_receiving(EDGE, remote.channel, on_overtaken=add_overtaken)
        gate = output_gate(sending)
        async with producer_end, consumer_end, anyio.create_task_group() as group:
            group.start_soon(emit_and_end, gate, list(range(12)))
            await wait_until(lambda: receiving.statistics().records == 4)
            output_state = gate.overtake(BARRIER)
            await wait_until(lambda: remote.channel.queued_first == 1)

            assert input_gate.poll() == TriggerUnalignedSnapshot(BARRIER)
            local.send_nowait(["l1"])
            local.send_nowait(BARRIER)
            decided = [input_gate.poll() for _ in range(3)]
            after = records_of(await remote.take_to_the_end())

    assert decided == [["l1"], [0, 1], ChannelStateComplete(1)]  # read after the snapshot
    input_state = in_flight.take(1)
    assert input_state == {EDGE: [0, 1, 2, 3], keys[1]: ["l1"]}
    delivered_after_the_barrier = decided[1] + after
    assert input_state[EDGE] + output_state[EDGE] == delivered_after_the_barrier == list(range(12))


def local_input() -> Channel[ChannelItem]:
    return Channel(10, size_of=item_size)
