"""Input channel state: records a barrier overtook in another process's receiving end."""

from __future__ import annotations

from lockgate.engine.checkpointing.channel_state import ChannelId
from lockgate.engine.runtime.network.input_channel_state import InputChannelState

KEYS = [ChannelId(1, 0, 0), ChannelId(1, 1, 0)]


def state(restored: dict[ChannelId, list[int]] | None = None) -> InputChannelState:
    return InputChannelState(KEYS, dict(restored or {}), batch_size=10)


def test_overtaken_records_join_the_checkpoint_being_recorded() -> None:
    in_flight = state()
    in_flight.start(3)
    in_flight.record(1, ["read before the barrier"])

    in_flight.add_overtaken(3, 1, ["overtaken"])
    in_flight.finish(3)

    assert in_flight.take(3) == {KEYS[0]: [], KEYS[1]: ["read before the barrier", "overtaken"]}


def test_overtaken_records_that_come_before_the_checkpoint_starts_wait_for_it() -> None:
    in_flight = state(restored={KEYS[0]: ["restored"]})

    in_flight.add_overtaken(4, 0, ["overtaken"])
    in_flight.start(4)
    in_flight.finish(4)

    assert in_flight.take(4)[KEYS[0]] == ["restored", "overtaken"]


def test_overtaken_records_of_an_aborted_checkpoint_are_dropped() -> None:
    in_flight = state()
    in_flight.add_overtaken(5, 0, ["overtaken"])

    in_flight.abort(5)
    in_flight.start(5)
    in_flight.finish(5)

    assert in_flight.take(5) == {KEYS[0]: [], KEYS[1]: []}


def test_overtaken_records_of_an_older_checkpoint_are_dropped_when_a_newer_starts() -> None:
    in_flight = state()
    in_flight.add_overtaken(6, 0, ["of 6"])
    in_flight.start(7)
    in_flight.finish(7)

    in_flight.start(6)
    in_flight.finish(6)

    assert in_flight.take(6) == {KEYS[0]: [], KEYS[1]: []}


def test_overtaken_records_of_a_checkpoint_that_is_over_are_not_kept() -> None:
    in_flight = state()
    in_flight.start(8)
    in_flight.add_overtaken(7, 0, ["of 7"])
    in_flight.finish(8)

    assert in_flight.take(8) == {KEYS[0]: [], KEYS[1]: []}
