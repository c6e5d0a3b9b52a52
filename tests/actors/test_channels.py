import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lockgate.actors import Channel, Doorbell, MailboxClosed, MailboxFull


def channel_of_records(capacity: int) -> Channel[list[int]]:
    return Channel(capacity, size_of=len, name="records")


def test_a_channel_measures_its_size_in_records_not_batches():
    channel = channel_of_records(4)

    channel.send_nowait([1, 2, 3])

    assert channel.statistics().size == 3


def test_a_channel_admits_batches_until_the_record_count_would_exceed_capacity():
    channel = channel_of_records(4)
    channel.send_nowait([1, 2])
    channel.send_nowait([3, 4])

    with pytest.raises(MailboxFull, match="'records' is full"):
        channel.send_nowait([5])


def test_a_channel_admits_an_oversized_batch_into_an_empty_channel():
    channel = channel_of_records(2)

    channel.send_nowait([1, 2, 3])

    assert channel.receive_nowait() == [1, 2, 3]


def test_a_channel_refuses_an_oversized_batch_while_it_holds_records():
    channel = channel_of_records(2)
    channel.send_nowait([1])

    with pytest.raises(MailboxFull):
        channel.send_nowait([2, 3, 4])


async def test_send_of_an_oversized_batch_waits_until_the_channel_is_empty():
    channel = channel_of_records(2)
    channel.send_nowait([1])

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(channel.send, [2, 3, 4])
        await anyio.wait_all_tasks_blocked()
        assert channel.statistics().senders_waiting == 1
        channel.receive_nowait()

    assert channel.receive_nowait() == [2, 3, 4]


@given(st.lists(st.integers(min_value=0, max_value=6)))
def test_a_channel_holds_at_most_capacity_records_unless_one_oversized_batch_alone(sizes):
    channel = channel_of_records(4)
    for size in sizes:
        try:
            channel.send_nowait(list(range(size)))
        except MailboxFull:
            channel.receive_nowait()
        stats = channel.statistics()
        assert stats.size <= stats.capacity or stats.messages == 1


def test_send_first_puts_a_message_ahead_of_the_queued_batches_and_returns_them():
    channel: Channel[object] = Channel(
        4, size_of=lambda item: len(item) if isinstance(item, list) else 1
    )
    channel.send_nowait([1, 2])
    channel.send_nowait([3])

    overtaken = channel.send_first("barrier")

    assert overtaken == [[1, 2], [3]]
    assert [channel.receive_nowait() for _ in range(3)] == ["barrier", [1, 2], [3]]


def test_send_first_keeps_messages_sent_first_earlier_ahead_in_their_order():
    channel: Channel[object] = Channel(4, size_of=lambda item: 1)
    channel.send_nowait("r1")
    channel.send_first("b1")
    channel.send_nowait("r2")

    overtaken = channel.send_first("b2")

    assert overtaken == ["r1", "r2"]
    assert [channel.receive_nowait() for _ in range(4)] == ["b1", "b2", "r1", "r2"]


def test_send_first_into_an_empty_channel_overtakes_nothing():
    channel = channel_of_records(4)

    assert channel.send_first([9]) == []
    assert channel.receive_nowait() == [9]


def test_send_first_is_admitted_into_a_full_channel_above_its_capacity():
    channel = channel_of_records(2)
    channel.send_nowait([1, 2])

    channel.send_first([0])

    stats = channel.statistics()
    assert (stats.size, stats.capacity, stats.messages) == (3, 2, 2)


def test_a_channel_counts_the_messages_sent_first_until_they_are_received():
    channel = channel_of_records(4)
    channel.send_nowait([1])
    channel.send_first([0])

    assert channel.queued_first == 1
    channel.receive_nowait()
    assert (channel.queued_first, channel.statistics().queued_first) == (0, 0)


def test_send_first_into_a_closed_channel_raises():
    channel = channel_of_records(4)
    channel.close()

    with pytest.raises(MailboxClosed):
        channel.send_first([1])


def test_a_channel_rings_the_doorbell_it_is_given_when_a_batch_is_received():
    doorbell = Doorbell()
    channel = channel_of_records(4)
    channel.send_nowait([1])
    channel.send_nowait([2])

    channel.ring_on_receive(doorbell)
    channel.receive_nowait()
    rung = repr(doorbell)
    channel.ring_on_receive(None)

    assert rung == "<Doorbell rung=True waiting=False>"


async def test_a_sender_waiting_on_its_doorbell_wakes_when_room_frees():
    doorbell = Doorbell()
    channel = channel_of_records(1)
    channel.send_nowait([1])
    channel.ring_on_receive(doorbell)
    woken = []

    async with anyio.create_task_group() as tasks:

        async def wait() -> None:
            await doorbell.wait()
            woken.append(channel.statistics().size)

        tasks.start_soon(wait)
        await anyio.wait_all_tasks_blocked()
        assert woken == []
        channel.receive_nowait()

    assert woken == [0]


def test_a_channel_without_a_doorbell_to_ring_rings_nothing_at_receive():
    doorbell = Doorbell()
    channel = channel_of_records(4)
    channel.send_nowait([1])
    channel.ring_on_receive(doorbell)
    channel.ring_on_receive(None)

    channel.receive_nowait()

    assert repr(doorbell) == "<Doorbell rung=False waiting=False>"
