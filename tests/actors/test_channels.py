import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lockgate.actors import Channel, MailboxFull


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
