"""Triggers: when a window's contents are emitted (Flink's built-in ``Trigger``s).

The window operator runs them; these are their settings. ``EventTimeTrigger`` (the default
of event-time assigners) fires when the watermark reaches the window's end, and again for
each late record within the allowed lateness. ``ProcessingTimeTrigger`` (the default of
processing-time assigners) fires when the job's clock does. ``CountTrigger.of(n)`` fires
every ``n`` records of a window; ``PurgingTrigger.of(trigger)`` also empties the window
each time it fires (``count_window(n)`` is ``GlobalWindows`` with a purging count trigger).
A time trigger must follow the assigner's own time (event time or the job's clock).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CountTrigger", "EventTimeTrigger", "ProcessingTimeTrigger", "PurgingTrigger", "Trigger"]


class Trigger:
    """When a window fires; ``purges`` says whether firing also empties it.

    The built-in triggers are settings the window operator carries out (Flink's
    ``Trigger`` is a callback API; a custom one is not supported yet).
    """

    purges: bool = False

    @property
    def base(self) -> Trigger:
        """The trigger that decides when to fire (itself, unless it wraps one)."""
        return self

    def problems(self) -> list[str]:
        """What is wrong with the trigger's options, if anything."""
        return []


@dataclass(frozen=True)
class EventTimeTrigger(Trigger):
    """Fires when the watermark passes the window's end (and for late records in lateness).

    The default of event-time assigners. A window that already fired fires again for each
    record that comes within ``allowed_lateness``, with everything it holds.
    """

    @classmethod
    def create(cls) -> EventTimeTrigger:
        """The event-time trigger."""
        return cls()


@dataclass(frozen=True)
class ProcessingTimeTrigger(Trigger):
    """Fires when the job's clock passes the window's end.

    The default of processing-time assigners; the clock is the job's (a ``ManualClock`` in
    tests).
    """

    @classmethod
    def create(cls) -> ProcessingTimeTrigger:
        """The processing-time trigger."""
        return cls()


@dataclass(frozen=True)
class CountTrigger(Trigger):
    """Fires each time the window has received ``count`` more records.

    The count is keyed state, per window. Without purging the window keeps its records, so
    each firing emits everything so far; time windows still end (and are cleaned up) with
    time, but only this trigger fires them.
    """

    count: int

    @classmethod
    def of(cls, count: int) -> CountTrigger:
        """Fire every ``count`` records."""
        return cls(count)

    def problems(self) -> list[str]:
        """A count that is not a whole number >= 1."""
        good = isinstance(self.count, int) and not isinstance(self.count, bool)
        if good and self.count >= 1:
            return []
        return [f"CountTrigger needs a count >= 1; got {self.count!r}"]


@dataclass(frozen=True)
class PurgingTrigger(Trigger):
    """``trigger``, and each time it fires the window is emptied.

    So each firing emits only what came since the previous one.
    """

    trigger: Trigger
    purges = True

    @classmethod
    def of(cls, trigger: Trigger) -> PurgingTrigger:
        """Purge the window whenever ``trigger`` fires."""
        return cls(trigger)

    @property
    def base(self) -> Trigger:
        """The wrapped trigger, which decides when to fire."""
        return self.trigger.base

    def problems(self) -> list[str]:
        """The wrapped trigger's problems."""
        return self.trigger.problems()
