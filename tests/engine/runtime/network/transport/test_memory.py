"""Memory across a connection does not grow with the records that pass: credits bound it."""

from __future__ import annotations

import tracemalloc

import anyio
import anyio.lowlevel

from lockgate.engine import EndOfInput
from lockgate.engine.runtime.network.transport import SendingChannel

from .pair import EDGE, Consumer, Overtaken, connection_pair

BATCH = 512


async def produce(sending: SendingChannel, count: int) -> None:
    for start in range(0, count, BATCH):
        await sending.send([(start + i, "payload") for i in range(min(BATCH, count - start))])
    await sending.send(EndOfInput())
    sending.close()


async def peak_bytes_through_a_slow_receiver(count: int) -> int:
    """The most memory traced while ``count`` records cross to a consumer that takes an
    item only once the sender waits for credits."""
    consumer = Consumer(capacity=2048)
    async with connection_pair() as (producer_end, consumer_end):
        sending = producer_end.open_sending(EDGE, capacity=2048)
        consumer_end.open_receiving(EDGE, consumer.channel, on_overtaken=Overtaken())
        tracemalloc.start()
        try:
            async with producer_end, consumer_end, anyio.create_task_group() as group:
                group.start_soon(produce, sending, count)
                taken = await take_slowly(consumer, sending)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert taken == count
    return peak


async def take_slowly(consumer: Consumer, sending: SendingChannel) -> int:
    """Take one item each time the sender waits for credits; return the records taken."""
    taken = 0
    with anyio.fail_after(120):  # one deadline: trio keeps every deadline set until it passes
        while True:
            while not (sending.statistics().senders_waiting or sending.ended):
                await anyio.lowlevel.checkpoint()
            item = await consumer.take()
            if type(item) is EndOfInput:
                return taken
            taken += len(item)


async def test_a_million_records_through_a_slow_receiver_take_no_more_memory_than_100_000() -> None:
    small = await peak_bytes_through_a_slow_receiver(100_000)
    large = await peak_bytes_through_a_slow_receiver(1_000_000)

    assert large <= 1.10 * small, f"{large} bytes for 1,000,000 records, {small} for 100,000"
