from collections.abc import Awaitable

import anyio
import pytest

from lockgate.actors import (
    Actor,
    ActorCrashed,
    ActorRef,
    ActorStopped,
    ActorSystem,
    AskTimeout,
    MailboxFull,
)


class Doubler(Actor[int]):
    """Answers n with 2n; raises on a negative n, and on control messages."""

    def __init__(self) -> None:
        self.stopped = anyio.Event()

    async def on_receive(self, message: int) -> int:
        if message < 0:
            raise ValueError(f"cannot double {message}")
        return 2 * message

    async def on_control(self, message: object) -> None:
        raise ValueError(f"cannot handle {message!r}")

    async def on_stop(self) -> None:
        self.stopped.set()


class Holder(Actor[str]):
    """Holds every message until released; its inbox has room for one message."""

    inbox_capacity = 1

    def __init__(self) -> None:
        self.holding = anyio.Event()
        self.release = anyio.Event()
        self.handled: list[str] = []

    async def on_receive(self, message: str) -> None:
        self.holding.set()
        await self.release.wait()
        self.handled.append(message)


async def stopped_doubler(system: ActorSystem) -> ActorRef[int]:
    actor = Doubler()
    ref = system.spawn(actor, name="doubler")
    ref.stop()
    await actor.stopped.wait()
    return ref


async def error_of(ask: Awaitable[object]) -> Exception | None:
    """Await an ask; return the exception it raised, or None if it was answered."""
    try:
        await ask
    except Exception as error:
        return error
    return None


async def collect_error(errors: list[Exception | None], ask: Awaitable[object]) -> None:
    errors.append(await error_of(ask))


async def test_ask_returns_the_value_on_receive_returns():
    async with ActorSystem() as system:
        ref = system.spawn(Doubler(), name="doubler")

        answer = await ref.ask(21)

        ref.stop()
    assert answer == 42


async def test_ask_to_an_actor_that_raises_raises_its_exception():
    with pytest.raises(ActorCrashed):
        async with ActorSystem() as system:
            ref = system.spawn(Doubler(), name="doubler")
            with anyio.CancelScope(shield=True):  # the asker outlives the crash, as a caller would
                error = await error_of(ref.ask(-1, timeout=5))

    assert isinstance(error, ValueError)


async def test_ask_control_to_an_actor_whose_on_control_raises_raises_its_exception():
    with pytest.raises(ActorCrashed):
        async with ActorSystem() as system:
            ref = system.spawn(Doubler(), name="doubler")
            with anyio.CancelScope(shield=True):  # the asker outlives the crash, as a caller would
                error = await error_of(ref.ask_control("ping", timeout=5))

    assert isinstance(error, ValueError)


async def test_ask_raises_ask_timeout_when_no_reply_comes_in_time():
    async with ActorSystem() as system:
        actor = Holder()
        ref = system.spawn(actor, name="holder")

        with pytest.raises(AskTimeout):
            await ref.ask("hold", timeout=0.01)

        actor.release.set()
        ref.stop()


async def test_tell_waits_while_the_inbox_is_full():
    async with ActorSystem() as system:
        actor = Holder()
        ref = system.spawn(actor, name="holder")
        ref.tell_nowait("first")
        await actor.holding.wait()
        ref.tell_nowait("second")

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(ref.tell, "third")
            await anyio.wait_all_tasks_blocked()
            assert actor.context.inbox.statistics().senders_waiting == 1
            actor.release.set()

        await anyio.wait_all_tasks_blocked()  # the holder took every message in its inbox
        ref.stop()
    assert actor.handled == ["first", "second", "third"]


async def test_tell_nowait_raises_mailbox_full_while_the_inbox_is_full():
    async with ActorSystem() as system:
        actor = Holder()
        ref = system.spawn(actor, name="holder")
        ref.tell_nowait("first")
        await actor.holding.wait()
        ref.tell_nowait("second")

        with pytest.raises(MailboxFull):
            ref.tell_nowait("third")

        actor.release.set()
        ref.stop()


async def test_tell_to_a_stopped_actor_raises_actor_stopped():
    async with ActorSystem() as system:
        ref = await stopped_doubler(system)

        with pytest.raises(ActorStopped, match="'doubler' has stopped"):
            await ref.tell(1)


async def test_tell_control_to_a_stopped_actor_raises_actor_stopped():
    async with ActorSystem() as system:
        ref = await stopped_doubler(system)

        with pytest.raises(ActorStopped):
            ref.tell_control("ping")


async def test_ask_to_a_stopped_actor_raises_actor_stopped():
    async with ActorSystem() as system:
        ref = await stopped_doubler(system)

        with pytest.raises(ActorStopped):
            await ref.ask(1)


async def test_stop_stops_the_actor_so_the_system_can_end():
    with anyio.fail_after(5):
        async with ActorSystem() as system:
            ref = system.spawn(Doubler(), name="doubler")

            ref.stop()

    assert not ref.is_alive


async def test_stop_lets_the_message_in_hand_finish_first():
    async with ActorSystem() as system:
        actor = Holder()
        ref = system.spawn(actor, name="holder")
        ref.tell_nowait("in hand")
        await actor.holding.wait()

        ref.stop()

        actor.release.set()
    assert actor.handled == ["in hand"]


async def test_stop_of_a_stopped_actor_is_ignored():
    async with ActorSystem() as system:
        ref = await stopped_doubler(system)

        ref.stop()

    assert not ref.is_alive


async def test_an_ask_still_queued_when_the_actor_stops_fails_with_actor_stopped():
    async with ActorSystem() as system:
        ref = system.spawn(Doubler(), name="doubler")
        ref.stop()

        with pytest.raises(ActorStopped, match="'doubler' stopped before answering"):
            await ref.ask(21)


async def test_an_ask_in_hand_when_the_actor_is_cancelled_fails_with_actor_stopped():
    actor = Holder()
    errors: list[Exception | None] = []

    async with anyio.create_task_group() as outside, ActorSystem() as system:
        ref = system.spawn(actor, name="holder")
        outside.start_soon(collect_error, errors, ref.ask("hold", timeout=5))
        await actor.holding.wait()

        system.cancel()

    assert [type(error) for error in errors] == [ActorStopped]


async def test_repr_shows_name_and_whether_the_actor_is_alive():
    async with ActorSystem() as system:
        ref = await stopped_doubler(system)

    assert repr(ref) == "<ActorRef 'doubler' stopped>"
