import anyio

from lockgate.actors import Doorbell


async def test_a_ring_while_nobody_waits_makes_the_next_wait_return_at_once():
    doorbell = Doorbell()

    doorbell.ring()

    with anyio.fail_after(5):
        await doorbell.wait()


async def test_a_ring_wakes_the_task_waiting_on_the_doorbell():
    doorbell = Doorbell()

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(doorbell.wait)
            await anyio.wait_all_tasks_blocked()
            doorbell.ring()


async def test_a_wait_consumes_the_ring_so_the_next_wait_blocks():
    doorbell = Doorbell()
    doorbell.ring()
    await doorbell.wait()
    woke = anyio.Event()

    async def wait_then_report() -> None:
        await doorbell.wait()
        woke.set()

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(wait_then_report)
        await anyio.wait_all_tasks_blocked()
        assert not woke.is_set()
        doorbell.ring()


def test_repr_shows_whether_it_rang():
    doorbell = Doorbell()

    doorbell.ring()

    assert repr(doorbell) == "<Doorbell rung=True waiting=False>"
