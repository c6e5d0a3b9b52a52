"""WindowTriggerContext: the ``TriggerContext`` the window runner gives its trigger.

One object serves every call: the runner starts it on a record's or timer's key (``start``)
and points it at a window (``enter``) before it calls the trigger, as Flink's
WindowOperator reuses its one ``Context``. Timers go to the
window's namespace in ``WindowTimers``; partitioned state to the window's entry in the
trigger's ``WindowScopedStates``. Pure: no event loop.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from lockgate.engine.functions.process import ProcessContext
from lockgate.engine.state import KeyedStateBackend, MapState, MapStateDescriptor, StateDescriptor
from lockgate.engine.windows.trigger import OnMergeContext
from lockgate.engine.windows.window_state import WindowNamespace, WindowScopedStates
from lockgate.engine.windows.window_timers import KeyTimers, KnownTimers, WindowTimers

__all__ = ["WindowTriggerContext"]


class WindowTriggerContext(WindowNamespace, OnMergeContext):
    """A trigger's view of one key's window: its timers, its state, the operator's time.

    It is also the namespace of the trigger's state. ``ctx`` is the process context of the
    record or timer being handled (the watermark, the clock, the key), set by the runner per
    call (``start``); ``merged`` lists the windows an ``on_merge`` merges, else is empty.
    """

    __slots__ = ("_known", "_store", "ctx", "key", "key_timers", "merged", "states", "timers")

    def __init__(
        self,
        store: KeyedStateBackend,
        timers: WindowTimers,
        map_state: Callable[[MapStateDescriptor[Any, Any]], MapState[Any, Any]],
    ) -> None:
        super().__init__()
        self._store = store
        self.timers = timers
        self.states = WindowScopedStates(map_state, "window-trigger-state", self)
        self.ctx: ProcessContext[Any] = None  # type: ignore[assignment] # set by start()
        self.key: Any = None
        self.key_timers: KeyTimers | None = None
        self.merged: Sequence[Any] = ()
        self._known: KnownTimers | None = None

    def start(self, ctx: ProcessContext[Any]) -> None:
        """Handle a record or timer of the current key, given in ``ctx``."""
        self.ctx = ctx
        self.key_timers = None  # looked up on first use

    def of_key(self) -> KeyTimers:
        """The current key's windows' timers (``key`` is the current key from then on)."""
        key_timers = self.key_timers
        if key_timers is None:
            timers = self.timers
            if timers.service is None:
                timers.service = self.ctx.timer_service()
            self.key = key = self._store.current_key
            key_timers = self.key_timers = timers.mirrors.get(key) or {}
        return key_timers

    def enter(self, window: Any, state_key: Any) -> None:
        """Point the context at ``window`` of the current key (stored under ``state_key``)."""
        self.window = window
        self.state_key = state_key
        self.visit += 1
        self._known = None

    def current_watermark(self) -> float:
        """The operator's watermark."""
        return self.ctx.watermark

    def current_processing_time(self) -> float:
        """The job's clock now."""
        return self.ctx.timer_service().current_processing_time()

    def register_event_time_timer(self, time: float) -> None:
        """Fire ``on_event_time`` for this window once the watermark reaches ``time``."""
        known = self._known
        if known is None:
            known = self._load()
        if time not in known[0]:
            self.timers.register(known, self.state_key, time, event_time=True)

    def register_processing_time_timer(self, time: float) -> None:
        """Fire ``on_processing_time`` for this window once the clock reaches ``time``."""
        known = self._known
        if known is None:
            known = self._load()
        if time not in known[1]:
            self.timers.register(known, self.state_key, time, event_time=False)

    def delete_event_time_timer(self, time: float) -> None:
        """Forget this window's event-time timer at ``time``."""
        known = self._known or self._load()
        self.timers.delete(known, self.state_key, time, event_time=True)

    def delete_processing_time_timer(self, time: float) -> None:
        """Forget this window's processing-time timer at ``time``."""
        known = self._known or self._load()
        self.timers.delete(known, self.state_key, time, event_time=False)

    def get_partitioned_state(self, descriptor: StateDescriptor) -> Any:
        """The trigger state ``descriptor`` declares, for this key and window."""
        return self.states.get_state(descriptor)

    def merge_partitioned_state(self, descriptor: StateDescriptor) -> None:
        """Fold ``descriptor``'s state of the merged windows into this window's."""
        if self.merged:
            merged = [window.state_key for window in self.merged]
            self.states.merge(descriptor, self.state_key, merged)

    def _load(self) -> KnownTimers:
        key_timers = self.key_timers
        if key_timers is None:
            key_timers = self.of_key()
        known = key_timers.get(self.state_key)
        if known is None:
            known = self.timers.known(self.key, key_timers, self.state_key)
        self._known = known
        return known

    def __repr__(self) -> str:
        return f"<WindowTriggerContext window={self.window!r}>"
