import anyio
import pytest

from lockgate.actors import (
    Actor,
    ActorCrashed,
    ActorError,
    ActorSystem,
    Channel,
    Doorbell,
    MailboxEmpty,
)


class Crasher(Actor[str]):
    """Raises ValueError(message) on every message; records that on_stop ran."""

    def __init__(self) -> None:
        self.stopped = False

    async def on_receive(self, message: str) -> None:
        raise ValueError(message)

    async def on_stop(self) -> None:
        self.stopped = True


class Bystander(Actor[str]):
    """Waits forever on any message; records how it ended."""

    def __init__(self) -> None:
        self.waiting = anyio.Event()
        self.wait_ended = False
        self.stopped = False

    async def on_receive(self, message: str) -> None:
        self.waiting.set()
        try:
            await anyio.Event().wait()
        finally:
            self.wait_ended = True

    async def on_stop(self) -> None:
        self.stopped = True


class Patient(Actor[str]):
    """Takes a few scheduler turns per message before recording it."""

    def __init__(self) -> None:
        self.started = anyio.Event()
        self.handled: list[str] = []

    async def on_receive(self, message: str) -> None:
        self.started.set()
        for _ in range(10):
            await anyio.lowlevel.checkpoint()
        self.handled.append(message)


class ChannelReader(Actor[str]):
    """Reads one batch from a channel of its own, then stops."""

    def __init__(self, channel: Channel[list[int]]) -> None:
        self.channel = channel
        self.read: list[list[int]] = []

    async def run(self) -> None:
        while not self.read:
            try:
                self.read.append(self.channel.receive_nowait())
            except MailboxEmpty:
                await self.context.doorbell.wait()


class FailsToStart(Actor[str]):
    async def on_start(self) -> None:
        raise RuntimeError("no connection")


class FailsToStop(Actor[str]):
    async def on_stop(self) -> None:
        raise RuntimeError("cannot flush")


async def crash_beside(bystander: Bystander, crasher: Crasher) -> ActorCrashed:
    with anyio.move_on_after(5) as guard, pytest.raises(ActorCrashed) as caught:
        async with ActorSystem() as system:
            system.spawn(bystander, name="bystander").tell_nowait("wait")
            await bystander.waiting.wait()
            system.spawn(crasher, name="crasher").tell_nowait("boom")
    assert not guard.cancel_called, "the crash did not end the block by itself"
    return caught.value


async def test_a_crash_makes_the_system_raise_actor_crashed_naming_the_actor():
    error = await crash_beside(Bystander(), Crasher())

    assert error.actor == "crasher"
    assert "actor 'crasher' crashed" in str(error)


async def test_actor_crashed_has_the_original_exception_as_its_cause():
    error = await crash_beside(Bystander(), Crasher())

    assert isinstance(error.__cause__, ValueError)
    assert str(error.__cause__) == "boom"


async def test_a_crash_cancels_every_other_actor_and_runs_its_on_stop():
    bystander = Bystander()

    await crash_beside(bystander, Crasher())

    assert bystander.stopped


async def test_a_crash_leaves_nothing_running_after_the_block():
    bystander = Bystander()

    await crash_beside(bystander, Crasher())

    assert bystander.wait_ended


async def test_the_crashed_actor_runs_its_on_stop():
    crasher = Crasher()

    await crash_beside(Bystander(), crasher)

    assert crasher.stopped


async def test_a_crash_fails_fast_though_the_block_waits_forever():
    with anyio.move_on_after(5) as guard, pytest.raises(ActorCrashed):
        async with ActorSystem() as system:
            system.spawn(Crasher(), name="crasher").tell_nowait("boom")

            await anyio.Event().wait()

    assert not guard.cancel_called


async def test_an_exception_in_on_start_crashes_the_system():
    with pytest.raises(ActorCrashed) as caught:
        async with ActorSystem() as system:
            system.spawn(FailsToStart(), name="source")

    assert isinstance(caught.value.__cause__, RuntimeError)


async def test_an_exception_in_on_stop_crashes_the_system():
    with pytest.raises(ActorCrashed) as caught:
        async with ActorSystem() as system:
            system.spawn(FailsToStop(), name="sink").stop()

    assert caught.value.actor == "sink"


async def test_leaving_the_block_waits_until_every_actor_has_stopped():
    actor = Patient()

    async with ActorSystem() as system:
        ref = system.spawn(actor, name="patient")
        ref.tell_nowait("last words")
        await actor.started.wait()
        ref.stop()

    assert actor.handled == ["last words"]


async def test_cancel_stops_every_actor_and_ends_the_block():
    bystander = Bystander()

    with anyio.fail_after(5):
        async with ActorSystem() as system:
            system.spawn(bystander, name="bystander").tell_nowait("wait")
            await bystander.waiting.wait()

            system.cancel()

    assert bystander.stopped


async def test_an_actor_spawned_with_a_doorbell_wakes_when_another_mailbox_rings_it():
    doorbell = Doorbell()
    channel = Channel[list[int]](4, size_of=len, doorbell=doorbell)
    actor = ChannelReader(channel)

    with anyio.fail_after(5):
        async with ActorSystem() as system:
            system.spawn(actor, name="reader", doorbell=doorbell)
            await anyio.wait_all_tasks_blocked()
            channel.send_nowait([1, 2])

    assert actor.read == [[1, 2]]


async def test_spawn_outside_the_block_raises_actor_error():
    system = ActorSystem(name="jobs")

    with pytest.raises(ActorError, match="'jobs' is not running"):
        system.spawn(Patient(), name="patient")


async def test_spawn_rejects_a_name_already_taken():
    async with ActorSystem() as system:
        system.spawn(Patient(), name="patient").stop()

        with pytest.raises(ActorError, match="already has an actor named 'patient'"):
            system.spawn(Patient(), name="patient")


async def test_refs_lists_every_spawned_actor_by_name():
    async with ActorSystem() as system:
        first = system.spawn(Patient(), name="first")
        second = system.spawn(Patient(), name="second")
        first.stop()
        second.stop()

    assert system.refs() == {"first": first, "second": second}


async def test_repr_shows_name_state_and_actor_count():
    async with ActorSystem(name="jobs") as system:
        system.spawn(Patient(), name="patient").stop()

        shown = repr(system)

    assert shown == "<ActorSystem 'jobs' running actors=1>"
