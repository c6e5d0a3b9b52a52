"""A connection between two workers: channels in order, credits, end of input, loss."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from lockgate.actors import MailboxClosed, MailboxFull
from lockgate.engine import CheckpointBarrier, EndOfInput, ManualClock, Watermark
from lockgate.engine.checkpointing.channel_state import ChannelId
from lockgate.engine.errors import ConnectionLost, TransportError, TransportProtocolError
from lockgate.engine.events import WatermarkStatus
from lockgate.engine.runtime.network.output_gate import OutputGate
from lockgate.engine.runtime.network.partitioners import ForwardPartitioner
from lockgate.engine.runtime.network.partitions import OutputPartition
from lockgate.engine.runtime.network.transport import SendingChannel, connect
from lockgate.engine.runtime.network.transport.credits import SendCredits

from .pair import EDGE, Consumer, Overtaken, connection_pair, finish, listening, wait_until

ITEMS: list[Any] = [
    [1, 2, 3],
    Watermark(5.0),
    [("k", 4)],
    CheckpointBarrier(1, 0.0),
    WatermarkStatus(idle=True),
    [None],
    EndOfInput(),
]


@pytest.mark.parametrize("scheme", ["unix", "tcp"])
async def test_every_item_kind_crosses_the_connection_in_order(scheme: str) -> None:
    consumer = Consumer(capacity=100)
    async with connection_pair(scheme) as (producer_end, consumer_end):
        sending = producer_end.open_sending(EDGE, capacity=100)
        consumer_end.open_receiving(EDGE, consumer.channel, on_overtaken=Overtaken())
        async with producer_end, consumer_end:
            for item in ITEMS:
                await sending.send(item)
            sending.close()
            received = await consumer.take_all(len(ITEMS))

    assert received == ITEMS


async def test_end_of_input_closes_the_receiving_channel_and_the_connection_cleanly() -> None:
    consumer = Consumer(capacity=10)
    async with connection_pair() as (producer_end, consumer_end):
        sending = producer_end.open_sending(EDGE, capacity=10)
        receiving = consumer_end.open_receiving(EDGE, consumer.channel, on_overtaken=Overtaken())
        async with producer_end, consumer_end:
            await sending.send([1])
            await sending.send(EndOfInput())
            sending.close()
            await consumer.take_all(2)
            await wait_until(lambda: consumer.channel.closed)

    assert receiving.statistics().ended
    assert producer_end.open_edges() == consumer_end.open_edges() == []


async def test_a_sending_end_refuses_sends_after_it_is_closed() -> None:
    async with connection_pair() as (producer_end, consumer_end):
        sending = producer_end.open_sending(EDGE, capacity=10)
        consumer_end.open_receiving(EDGE, Consumer(10).channel, on_overtaken=Overtaken())
        sending.close()

        with pytest.raises(MailboxClosed):
            sending.send_nowait([1])


async def test_a_slow_receiver_backpressures_the_sender_within_its_credits() -> None:
    consumer = Consumer(capacity=8)
    async with connection_pair() as (producer_end, consumer_end):
        sending = producer_end.open_sending(EDGE, capacity=8)
        receiving = consumer_end.open_receiving(EDGE, consumer.channel, on_overtaken=Overtaken())
        gate = output_gate(sending)
        received: list[Any] = []
        async with producer_end, consumer_end, anyio.create_task_group() as group:
            group.start_soon(emit_and_end, gate, list(range(200)))
            while not received or received[-1] != EndOfInput():
                await wait_until(lambda: blocked(sending) or len(consumer.channel) > 0)
                received.append(await consumer.take())  # one item each time, no more

    sent, got = sending.transport_statistics(), receiving.statistics()
    assert [r for item in received if type(item) is list for r in item] == list(range(200))
    assert sent.credits.blocked > 0
    assert sent.credits.window_records == 8
    assert sent.credits.max_in_flight_records <= 8
    assert got.max_buffered_records <= 8
    assert (sent.frames, sent.bytes, sent.records) == (got.frames, got.bytes, got.records)


async def test_a_sender_without_credits_is_refused_at_once() -> None:
    consumer = Consumer(capacity=4)
    async with connection_pair() as (producer_end, consumer_end):
        sending = producer_end.open_sending(EDGE, capacity=4)
        consumer_end.open_receiving(EDGE, consumer.channel, on_overtaken=Overtaken())
        async with producer_end, consumer_end:
            await sending.send([1, 2, 3, 4])

            with pytest.raises(MailboxFull, match="no credits"):
                sending.send_nowait([5])
            assert (await finish(sending, consumer))[0] == [1, 2, 3, 4]


async def test_channels_sharing_a_connection_have_credits_of_their_own() -> None:
    stuck, flowing = Consumer(4, ChannelId(1, 0, 0)), Consumer(4, ChannelId(2, 0, 0))
    async with connection_pair() as (producer_end, consumer_end):
        to_stuck = producer_end.open_sending(stuck.channel_id, capacity=4)
        to_flowing = producer_end.open_sending(flowing.channel_id, capacity=4)
        for consumer in (stuck, flowing):
            consumer_end.open_receiving(
                consumer.channel_id, consumer.channel, on_overtaken=Overtaken()
            )
        async with producer_end, consumer_end:
            await to_stuck.send([1, 2, 3, 4])
            for start in range(0, 40, 4):
                await to_flowing.send(list(range(start, start + 4)))
                assert await flowing.take() == list(range(start, start + 4))

            assert refused(to_stuck, [5])
            await finish(to_stuck, stuck)
            await finish(to_flowing, flowing)


async def test_a_lost_connection_fails_the_attempt_naming_the_peer_and_the_edge() -> None:
    consumer = Consumer(capacity=4)
    async with connection_pair() as (producer_end, consumer_end):
        sending = producer_end.open_sending(EDGE, capacity=4)
        consumer_end.open_receiving(EDGE, consumer.channel, on_overtaken=Overtaken())
        with pytest.raises(ConnectionLost, match=r"worker 'consumer'.*edge 1 \[0->0\]"):
            async with producer_end:
                async with consumer_end:  # the consumer's worker goes away mid-stream
                    await sending.send([1])
                    await consumer.take()
                await anyio.sleep_forever()  # until the loss cancels it

        with pytest.raises(ConnectionLost, match=r"channel 'edge1\[0->0\]'"):
            sending.send_nowait([2])


async def test_a_sender_waiting_for_credits_fails_when_the_connection_is_lost() -> None:
    async with connection_pair() as (producer_end, consumer_end):
        sending = producer_end.open_sending(EDGE, capacity=2)
        consumer_end.open_receiving(EDGE, Consumer(2).channel, on_overtaken=Overtaken())
        failures: list[BaseException] = []

        async def send_beyond_the_window() -> None:
            await sending.send([1, 2])
            try:
                await sending.send([3])
            except ConnectionLost as error:
                failures.append(error)

        async with anyio.create_task_group() as group:
            group.start_soon(send_beyond_the_window)
            with pytest.raises(ConnectionLost):
                async with producer_end:
                    async with consumer_end:
                        await wait_until(lambda: sent(sending) == 1 and blocked(sending))
                    await anyio.sleep_forever()

    assert len(failures) == 1


async def test_a_peer_with_a_wrong_token_is_refused_before_it_learns_the_token() -> None:
    async with listening() as listener, anyio.create_task_group() as group:

        async def accept() -> None:
            with pytest.raises(TransportProtocolError, match="wrong token"):
                await listener.accept()

        group.start_soon(accept)
        with pytest.raises(ConnectionLost, match="during the handshake"):
            await connect(str(listener.address), token=b"a guess", name="intruder")


async def test_a_sender_beyond_its_credits_breaks_the_protocol(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    consumer = Consumer(capacity=2)
    async with connection_pair() as (producer_end, consumer_end):
        sending = producer_end.open_sending(EDGE, capacity=2)
        consumer_end.open_receiving(EDGE, consumer.channel, on_overtaken=Overtaken())
        with pytest.raises(ConnectionLost):
            async with producer_end:
                with pytest.raises(TransportProtocolError, match="beyond the credits granted"):
                    async with consumer_end:
                        await sending.send([1, 2])
                        monkeypatch.setattr(SendCredits, "admits", lambda *_: True)
                        sending.send_nowait([3])  # a broken sender: credits ignored
                        await anyio.sleep_forever()
                await anyio.sleep_forever()


async def emit_and_end(gate: OutputGate, records: list[Any]) -> None:
    for start in range(0, len(records), 3):
        await gate.emit(records[start : start + 3])
    await gate.end_input()


def output_gate(channel: SendingChannel, batch_size: int = 2) -> OutputGate:
    partition = OutputPartition(ForwardPartitioner(), [channel], [channel.channel_id])
    return OutputGate([partition], batch_size=batch_size, clock=ManualClock())


def blocked(sending: SendingChannel) -> bool:
    return sending.statistics().senders_waiting > 0


def sent(sending: SendingChannel) -> int:
    return sending.transport_statistics().frames


def refused(sending: SendingChannel, item: Any) -> bool:
    try:
        sending.send_nowait(item)
    except MailboxFull:
        return True
    return False


@pytest.mark.parametrize("scheme", ["unix", "tcp"])
async def test_a_failure_inside_the_connections_is_raised_as_itself(scheme: str) -> None:
    async with connection_pair(scheme) as (producer_end, consumer_end):
        producer_end.open_sending(EDGE, capacity=4)
        consumer_end.open_receiving(EDGE, Consumer(4).channel, on_overtaken=Overtaken())

        with pytest.raises(KeyError, match="a subtask failed"):
            async with producer_end, consumer_end:  # the peers' ends close: no news
                raise KeyError("a subtask failed")


@pytest.mark.parametrize("scheme", ["unix", "tcp"])
def test_a_connection_on_uvloop_carries_its_channel_and_stops(scheme: str) -> None:
    async def main() -> None:
        consumer = Consumer(capacity=4)
        async with connection_pair(scheme) as (producer_end, consumer_end):
            sending = producer_end.open_sending(EDGE, capacity=4)
            consumer_end.open_receiving(EDGE, consumer.channel, on_overtaken=Overtaken())
            with anyio.fail_after(10), pytest.raises(KeyError):  # stopping with channels open
                async with producer_end, consumer_end:
                    await sending.send([1, 2])
                    assert await consumer.take() == [1, 2]
                    raise KeyError("stop")

    anyio.run(main, backend="asyncio", backend_options={"use_uvloop": True})


async def test_the_wait_for_credits_is_the_output_gates_backpressured_time() -> None:
    clock, consumer = ManualClock(), Consumer(capacity=2)
    async with connection_pair() as (producer_end, consumer_end):
        sending = producer_end.open_sending(EDGE, capacity=2)
        consumer_end.open_receiving(EDGE, consumer.channel, on_overtaken=Overtaken())
        partition = OutputPartition(ForwardPartitioner(), [sending], [EDGE])
        gate = OutputGate([partition], batch_size=2, clock=clock)
        async with producer_end, consumer_end, anyio.create_task_group() as group:
            group.start_soon(emit_and_end, gate, [1, 2, 3, 4])
            await wait_until(lambda: sent(sending) == 1 and blocked(sending))
            clock.advance(2.5)

            assert gate.backpressured_time == 2.5
            await consumer.take_to_the_end()


async def test_a_record_that_cannot_be_pickled_is_refused_naming_the_channel() -> None:
    async with connection_pair() as (producer_end, consumer_end):
        sending = producer_end.open_sending(EDGE, capacity=2)
        consumer_end.open_receiving(EDGE, Consumer(2).channel, on_overtaken=Overtaken())

        with pytest.raises(TransportError, match=r"channel 'edge1\[0->0\]'.*make its records"):
            sending.send_nowait([lambda: None])


async def test_a_peer_that_breaks_the_protocol_fails_every_sending_end() -> None:
    stray = ChannelId(9, 0, 0)
    async with connection_pair() as (producer_end, consumer_end):
        sending = producer_end.open_sending(EDGE, capacity=2)
        consumer_end.open_receiving(EDGE, Consumer(2).channel, on_overtaken=Overtaken())
        consumer_end.open_receiving(stray, Consumer(2, stray).channel, on_overtaken=Overtaken())
        with pytest.raises(ConnectionLost):
            async with consumer_end:
                with pytest.raises(TransportProtocolError, match="not open here"):
                    async with producer_end:
                        await anyio.sleep_forever()  # until the credit for edge 9 comes
                await anyio.sleep_forever()

        with pytest.raises(ConnectionLost, match="not open here"):
            sending.send_nowait([1])


async def test_a_unix_listener_removes_its_socket_file_when_it_stops() -> None:
    async with listening("unix") as listener:
        path = anyio.Path(listener.address.path)
        assert await path.exists()

    assert not await path.exists()
