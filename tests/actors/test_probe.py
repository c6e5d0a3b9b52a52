import pytest

from lockgate.actors import ActorSystem, Probe


async def test_expect_message_returns_messages_in_arrival_order():
    async with ActorSystem() as system:
        probe = Probe()
        ref = system.spawn(probe, name="probe")
        ref.tell_nowait("a")
        ref.tell_nowait("b")

        received = [await probe.expect_message(), await probe.expect_message()]

        ref.stop()
    assert received == ["a", "b"]


async def test_expect_message_returns_control_messages_too():
    async with ActorSystem() as system:
        probe = Probe()
        ref = system.spawn(probe, name="probe")
        ref.tell_control("checkpoint 1")

        received = await probe.expect_message()

        ref.stop()
    assert received == "checkpoint 1"


async def test_expect_message_fails_when_nothing_arrives_in_time():
    async with ActorSystem() as system:
        probe = Probe()
        ref = system.spawn(probe, name="probe")

        with pytest.raises(TimeoutError):
            await probe.expect_message(timeout=0.01)

        ref.stop()


async def test_expect_no_message_fails_when_an_unexpected_message_arrived():
    async with ActorSystem() as system:
        probe = Probe()
        ref = system.spawn(probe, name="probe")
        await ref.ask("surprise")

        with pytest.raises(
            AssertionError, match="'probe' got unexpected messages \\['surprise'\\]"
        ):
            probe.expect_no_message()

        ref.stop()


async def test_expect_no_message_passes_once_every_message_was_expected():
    async with ActorSystem() as system:
        probe = Probe()
        ref = system.spawn(probe, name="probe")
        await ref.ask("expected")
        await probe.expect_message()

        probe.expect_no_message()

        ref.stop()


async def test_a_probe_answers_an_ask_with_the_message():
    async with ActorSystem() as system:
        ref = system.spawn(Probe(), name="probe")

        answer = await ref.ask("echo")

        ref.stop()
    assert answer == "echo"
