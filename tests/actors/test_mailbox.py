import anyio
import pytest

from lockgate.actors import (
    Doorbell,
    EndOfMailbox,
    Mailbox,
    MailboxClosed,
    MailboxEmpty,
    MailboxFull,
)


def full_mailbox() -> Mailbox[str]:
    mailbox = Mailbox[str](1)
    mailbox.send_nowait("first")
    return mailbox


async def test_mailbox_delivers_messages_in_the_order_they_were_sent():
    mailbox = Mailbox[int](3)
    for number in (1, 2, 3):
        await mailbox.send(number)

    received = [await mailbox.receive() for _ in range(3)]

    assert received == [1, 2, 3]


async def test_send_waits_while_the_mailbox_is_full_until_a_receive_makes_room():
    mailbox = full_mailbox()

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(mailbox.send, "second")
        await anyio.wait_all_tasks_blocked()
        assert mailbox.statistics().senders_waiting == 1
        mailbox.receive_nowait()

    assert mailbox.receive_nowait() == "second"


async def test_a_cancelled_send_leaves_nothing_queued_and_nobody_waiting():
    mailbox = full_mailbox()

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(mailbox.send, "second")
        await anyio.wait_all_tasks_blocked()
        tasks.cancel_scope.cancel()

    stats = mailbox.statistics()
    assert (stats.messages, stats.senders_waiting) == (1, 0)


def test_send_nowait_raises_mailbox_full_when_the_mailbox_is_full():
    mailbox = full_mailbox()

    with pytest.raises(MailboxFull, match="full"):
        mailbox.send_nowait("second")


def test_receive_nowait_raises_mailbox_empty_when_nothing_is_queued():
    mailbox = Mailbox[str](1)

    with pytest.raises(MailboxEmpty):
        mailbox.receive_nowait()


async def test_receive_waits_until_a_message_is_sent():
    mailbox = Mailbox[str](1)

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(mailbox.receive)
        await anyio.wait_all_tasks_blocked()
        assert mailbox.statistics().receiver_waiting
        mailbox.send_nowait("hello")

    assert mailbox.statistics().received == 1


def test_send_nowait_after_close_raises_mailbox_closed():
    mailbox = Mailbox[str](1)
    mailbox.close()

    with pytest.raises(MailboxClosed):
        mailbox.send_nowait("late")


async def test_send_after_close_raises_mailbox_closed():
    mailbox = Mailbox[str](1)
    mailbox.close()

    with pytest.raises(MailboxClosed):
        await mailbox.send("late")


async def test_close_fails_a_sender_waiting_for_room_with_mailbox_closed():
    mailbox = full_mailbox()

    with pytest.RaisesGroup(MailboxClosed):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(mailbox.send, "second")
            await anyio.wait_all_tasks_blocked()
            mailbox.close()


async def test_receivers_get_the_queued_messages_after_close_then_end_of_mailbox():
    mailbox = Mailbox[int](2)
    mailbox.send_nowait(1)
    mailbox.send_nowait(2)

    mailbox.close()

    assert [await mailbox.receive(), await mailbox.receive()] == [1, 2]
    with pytest.raises(EndOfMailbox):
        await mailbox.receive()


def test_receive_nowait_after_close_and_drain_raises_end_of_mailbox():
    mailbox = Mailbox[str](1)
    mailbox.close()

    with pytest.raises(EndOfMailbox):
        mailbox.receive_nowait()


async def test_close_wakes_every_waiting_receiver_with_end_of_mailbox():
    mailbox = Mailbox[str](1)

    with anyio.fail_after(5), pytest.RaisesGroup(EndOfMailbox, EndOfMailbox):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(mailbox.receive)
            tasks.start_soon(mailbox.receive)
            await anyio.wait_all_tasks_blocked()
            mailbox.close()


def test_close_twice_is_harmless():
    mailbox = Mailbox[str](1)
    mailbox.close()

    mailbox.close()

    assert mailbox.closed


def test_statistics_count_size_peak_size_and_traffic():
    mailbox = Mailbox[int](4)
    for number in range(3):
        mailbox.send_nowait(number)

    mailbox.receive_nowait()

    stats = mailbox.statistics()
    assert (stats.size, stats.peak_size, stats.sent, stats.received) == (2, 3, 3, 1)


def test_fill_is_the_size_as_a_fraction_of_capacity():
    mailbox = Mailbox[int](4)

    mailbox.send_nowait(1)

    assert mailbox.statistics().fill == 0.25


def test_statistics_report_that_the_mailbox_is_closed():
    mailbox = Mailbox[int](4)

    mailbox.close()

    assert mailbox.statistics().closed


def test_repr_shows_name_size_capacity_and_state():
    mailbox = Mailbox[int](4, name="numbers")

    mailbox.send_nowait(1)

    assert repr(mailbox) == "<Mailbox 'numbers' 1/4 open>"


def test_a_capacity_below_one_is_rejected_naming_the_mailbox():
    with pytest.raises(ValueError, match="'numbers' needs a capacity of at least 1; got 0"):
        Mailbox[int](0, name="numbers")


async def test_a_send_rings_the_doorbell():
    doorbell = Doorbell()
    mailbox = Mailbox[int](1, doorbell=doorbell)

    mailbox.send_nowait(1)

    with anyio.fail_after(5):
        await doorbell.wait()


async def test_close_rings_the_doorbell():
    doorbell = Doorbell()
    mailbox = Mailbox[int](1, doorbell=doorbell)

    mailbox.close()

    with anyio.fail_after(5):
        await doorbell.wait()
