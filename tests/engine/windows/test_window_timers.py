"""WindowTimers: a window's timers in its own namespace, over the key's one timer per time."""

from __future__ import annotations

from lockgate.engine import ManualClock
from lockgate.engine.functions.timers import KeyedTimers, TimerService
from lockgate.engine.state.memory.store import KeyedStateStore
from lockgate.engine.windows.window_timers import REGISTRY, WindowTimers

A, B = (0.0, 10.0), (5.0, 15.0)  # two windows of one key, by state key


def timers() -> tuple[WindowTimers, KeyedTimers, KeyedStateStore]:
    store = KeyedStateStore()
    store.current_key = "k"
    keyed = KeyedTimers(store)
    windows = WindowTimers(store.get_state(REGISTRY))
    windows.service = TimerService(keyed, ManualClock(), store, lambda: 0.0)
    return windows, keyed, store


def test_two_windows_share_the_keys_timer_and_deleting_one_keeps_the_other() -> None:
    windows, keyed, _ = timers()
    mirrors = windows.mirrors.get("k") or {}
    windows.register(windows.known("k", mirrors, A), A, 7.0, event_time=True)
    windows.register(windows.known("k", mirrors, B), B, 7.0, event_time=True)

    windows.delete(windows.known("k", mirrors, B), B, 7.0, event_time=True)

    assert len(keyed.event_time) == 1  # A still holds it
    assert [key for key, _ in keyed.event_time.pop_due(7.0)] == ["k"]
    assert windows.pop(mirrors, 7.0, event_time=True) == [A]  # it reaches A only


def test_the_keys_timer_goes_with_the_last_window_that_held_it() -> None:
    windows, keyed, _ = timers()
    mirrors: dict[object, tuple[set[float], set[float]]] = {}
    windows.register(windows.known("k", mirrors, A), A, 7.0, event_time=False)

    windows.remove_window("k", mirrors, A)

    assert len(keyed.processing_time) == 0
    assert windows.mirrors == {}  # nothing kept for a key without windows


def test_a_new_attempt_finds_the_timers_in_state() -> None:
    windows, _, store = timers()
    windows.register(windows.known("k", {}, A), A, 7.0, event_time=True)

    again = WindowTimers(store.get_state(REGISTRY))  # as a restored runner builds it

    assert again.known("k", {}, A) == ({7.0}, set())
