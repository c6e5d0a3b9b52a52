"""WindowTimers: timers in a window's namespace (Flink's), over the operator's keyed timers.

The operator's ``TimerService`` keeps at most one timer per key, time and domain. A window
operator needs more: a timer reaches the trigger of the window that registered it, and
deleting one window's timer must keep the key's timer while another window of the key holds
the same time. So keyed state records, per window, the timers it holds (``window-timers``:
window -> its ``(event_time, time)`` pairs); checkpoints, savepoints and rescaling carry
them as they carry the key's timers. Triggers register their timers again for every record,
so a mirror of a window's timers (``mirrors``, loaded from state once per window and attempt)
answers "already registered" without reading state. Pure: no event loop.
"""

from __future__ import annotations

from typing import Any

from lockgate.engine.functions.timers import TimerService
from lockgate.engine.state import MapState, MapStateDescriptor

__all__ = ["REGISTRY", "KeyTimers", "KnownTimers", "WindowTimers"]

Timer = tuple[bool, float]  # (event time?, time)
KnownTimers = tuple[set[float], set[float]]  # a window's event-time and processing-time times
KeyTimers = dict[Any, KnownTimers]  # a key's windows (by state key) -> their known timers

REGISTRY = MapStateDescriptor[Any, tuple[Timer, ...]]("window-timers")
"""Per key, each window's timers: window state key -> its ``(event_time, time)`` pairs."""


class WindowTimers:
    """Registers, deletes and fires the timers of each window of the current key.

    Invariant: a key has a timer at ``(domain, time)`` in the timer service exactly while
    at least one of its windows holds that timer here; every mirror in ``mirrors`` equals
    the registry of its window. A call on a key works on the ``KeyTimers`` it found in
    ``mirrors`` (or a new one); a key whose windows are all gone is forgotten (its next call
    loads afresh).
    """

    __slots__ = ("_registry", "mirrors", "service")

    def __init__(self, registry: MapState[Any, tuple[Timer, ...]]) -> None:
        self._registry = registry
        self.mirrors: dict[Any, KeyTimers] = {}
        self.service: TimerService | None = None

    def known(self, key: Any, key_timers: KeyTimers, state_key: Any) -> KnownTimers:
        """The times of the timers the window ``state_key`` of ``key`` holds, by domain."""
        known = key_timers.get(state_key)
        if known is None:
            held = self._registry.get(state_key) or ()
            known = key_timers[state_key] = (
                {time for event_time, time in held if event_time},
                {time for event_time, time in held if not event_time},
            )
            self.mirrors[key] = key_timers
        return known

    def register(
        self, known: KnownTimers, state_key: Any, time: float, *, event_time: bool
    ) -> None:
        """Give the window ``state_key`` a timer (``known`` is its ``known(...)``).

        Raises:
            ValueError: for a NaN ``time``, which the timer service refuses.
        """
        times = known[0] if event_time else known[1]
        if time in times:
            return
        service = self._service()
        if event_time:
            service.register_event_time_timer(time)
        else:
            service.register_processing_time_timer(time)
        times.add(time)
        self._registry.put(state_key, (*(self._registry.get(state_key) or ()), (event_time, time)))

    def delete(self, known: KnownTimers, state_key: Any, time: float, *, event_time: bool) -> None:
        """Take the timer from the window ``state_key``; the key's goes once no window holds it."""
        times = known[0] if event_time else known[1]
        if time not in times:
            return
        times.discard(time)
        timer = (event_time, time)
        self._keep_all_but(state_key, timer)
        if not any(timer in held for held in self._registry.values()):
            service = self._service()
            if event_time:
                service.delete_event_time_timer(time)
            else:
                service.delete_processing_time_timer(time)

    def pop(self, key_timers: KeyTimers, time: float, *, event_time: bool) -> list[Any]:
        """The state keys of the key's windows whose timer at ``time`` fired, in order.

        The key's timer already left the timer service; each window gives its timer up.
        """
        timer, due = (event_time, time), []
        for state_key, held in self._registry.items():
            if timer in held:
                due.append(state_key)
                self._keep_all_but(state_key, timer)
                known = key_timers.get(state_key)
                if known is not None:
                    (known[0] if event_time else known[1]).discard(time)
        due.sort()
        return due

    def remove_window(self, key: Any, key_timers: KeyTimers, state_key: Any) -> None:
        """Delete every timer the window ``state_key`` of ``key`` holds; forget the window."""
        known = self.known(key, key_timers, state_key)
        for time in sorted(known[0]):
            self.delete(known, state_key, time, event_time=True)
        for time in sorted(known[1]):
            self.delete(known, state_key, time, event_time=False)
        del key_timers[state_key]
        if not key_timers:
            self.mirrors.pop(key, None)

    def _keep_all_but(self, state_key: Any, timer: Timer) -> None:
        remaining = tuple(held for held in self._registry.get(state_key) or () if held != timer)
        if remaining:
            self._registry.put(state_key, remaining)
        else:
            self._registry.remove(state_key)

    def _service(self) -> TimerService:
        assert self.service is not None, "the window runner sets the timer service first"
        return self.service

    def __repr__(self) -> str:
        return f"<WindowTimers keys={len(self.mirrors)}>"
