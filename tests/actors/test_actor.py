import anyio
import pytest

from lockgate.actors import Actor, ActorCrashed, ActorRef, ActorSystem, Envelope


class Recorder(Actor[str]):
    """Records each message it has handled; holds the message "hold" until released."""

    inbox_capacity = 1

    def __init__(self) -> None:
        self.handled: list[str] = []
        self.holding = anyio.Event()
        self.release = anyio.Event()

    async def on_receive(self, message: str) -> str:
        if message == "hold":
            self.holding.set()
            await self.release.wait()
        self.handled.append(message)
        return message

    async def on_control(self, message: str) -> str:
        self.handled.append(message)
        return message


async def busy_with_a_full_inbox(
    system: ActorSystem, actor: Recorder | None = None
) -> tuple[Recorder, ActorRef[str]]:
    actor = actor or Recorder()
    ref = system.spawn(actor, name="recorder")
    ref.tell_nowait("hold")
    await actor.holding.wait()
    ref.tell_nowait("queued")
    assert actor.context.inbox.statistics().fill == 1.0
    return actor, ref


async def test_tell_control_is_accepted_while_the_data_inbox_is_full():
    async with ActorSystem() as system:
        actor, ref = await busy_with_a_full_inbox(system)

        ref.tell_control("ping")

        actor.release.set()
        ref.stop()
    assert "ping" in actor.handled


async def test_ask_control_is_answered_while_the_data_inbox_is_full():
    async with ActorSystem() as system:
        actor, ref = await busy_with_a_full_inbox(system)
        actor.release.set()

        answer = await ref.ask_control("ping")

        ref.stop()
    assert answer == "ping"


async def test_control_messages_are_handled_before_queued_data():
    async with ActorSystem() as system:
        actor, ref = await busy_with_a_full_inbox(system)
        ref.tell_control("ping")

        actor.release.set()
        await ref.ask("last")

        ref.stop()
    assert actor.handled == ["hold", "ping", "queued", "last"]


async def test_a_message_is_handled_to_completion_before_the_next_is_taken():
    async with ActorSystem() as system:
        actor = Recorder()
        ref = system.spawn(actor, name="recorder")
        ref.tell_nowait("hold")
        await ref.tell("next")
        await anyio.wait_all_tasks_blocked()

        handled_while_holding = list(actor.handled)

        actor.release.set()
        ref.stop()
    assert handled_while_holding == []


class Reordering(Recorder):
    """Takes its control messages through next_control() in reverse order of arrival."""

    def next_control(self) -> Envelope[object] | None:
        held: list[Envelope[object]] = []
        while (envelope := super().next_control()) is not None:
            held.append(envelope)
        for envelope in held[:-1]:
            self.context.control.send_nowait(envelope)
        return held[-1] if held else None


async def test_run_takes_control_messages_through_the_next_control_hook():
    async with ActorSystem() as system:
        actor, ref = await busy_with_a_full_inbox(system, Reordering())
        ref.tell_control("first")
        ref.tell_control("second")

        actor.release.set()
        await ref.ask("last")
        ref.stop()

    assert actor.handled[:3] == ["hold", "second", "first"]


async def test_an_actor_knows_the_name_it_was_spawned_with():
    async with ActorSystem() as system:
        actor = Recorder()
        system.spawn(actor, name="recorder").stop()

    assert actor.name == "recorder"


async def test_a_data_message_to_an_actor_without_on_receive_crashes_it():
    with pytest.raises(ActorCrashed) as caught:
        async with ActorSystem() as system:
            system.spawn(Actor[str](), name="bare").tell_nowait("hello")

    assert isinstance(caught.value.__cause__, NotImplementedError)
