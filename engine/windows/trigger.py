"""The trigger contract: when a window fires and purges (Flink's ``Trigger``).

A ``Trigger`` is called for every record added to a window (``on_element``), for every timer
it registered in that window (``on_event_time``, ``on_processing_time``), when session
windows merge (``on_merge``) and when a window is cleaned up (``clear``). Each call answers
with a ``TriggerResult``: ``FIRE`` evaluates the window function on what the window holds,
``PURGE`` empties the window, ``FIRE_AND_PURGE`` does both, ``CONTINUE`` neither. The
``TriggerContext`` it is given scopes timers and state to the key and the window: a trigger
keeps nothing in its own attributes (one trigger object serves every key and window), so
checkpoints, savepoints and rescaling carry what it keeps.
"""

from __future__ import annotations

import enum
from abc import ABC, abstractmethod
from typing import Any, Generic, TypeVar, overload

from lockgate.engine.state import (
    AggregatingState,
    AggregatingStateDescriptor,
    ListState,
    ListStateDescriptor,
    MapState,
    MapStateDescriptor,
    ReducingState,
    ReducingStateDescriptor,
    StateDescriptor,
    ValueState,
    ValueStateDescriptor,
)

__all__ = ["OnMergeContext", "Trigger", "TriggerContext", "TriggerResult"]

T = TypeVar("T")
W = TypeVar("W")
V = TypeVar("V")
UK = TypeVar("UK")
UV = TypeVar("UV")
IN = TypeVar("IN")
ACC = TypeVar("ACC")
OUT = TypeVar("OUT")


class TriggerResult(enum.Enum):
    """What a trigger asks of its window: fire it, purge it, both, or neither.

    ``is_fire`` evaluates the window function on the window's contents and emits what it
    returns; ``is_purge`` then empties the window's contents (its trigger state and timers
    stay, and the window lives on until its cleanup time).
    """

    CONTINUE = (False, False)
    FIRE = (True, False)
    PURGE = (False, True)
    FIRE_AND_PURGE = (True, True)

    def __init__(self, fire: bool, purge: bool) -> None:  # noqa: FBT001 - the member's value
        self.is_fire = fire
        self.is_purge = purge


class TriggerContext(ABC):
    """What a trigger may use: time, timers and state, all scoped to the key and window.

    A timer registered here fires the trigger's ``on_event_time`` (or ``on_processing_time``)
    for this window only; a window holds at most one timer per time and domain. State from
    ``get_partitioned_state`` is keyed state of this key and window: a checkpoint holds it,
    rescaling moves it with its key, and it is removed when the window is cleaned up.
    """

    __slots__ = ()

    @abstractmethod
    def current_watermark(self) -> float:
        """The operator's watermark (``-inf`` before the first one)."""

    @abstractmethod
    def current_processing_time(self) -> float:
        """The job's clock now."""

    @abstractmethod
    def register_event_time_timer(self, time: float) -> None:
        """Call ``on_event_time(time, window, ...)`` once the watermark reaches ``time``."""

    @abstractmethod
    def register_processing_time_timer(self, time: float) -> None:
        """Call ``on_processing_time(time, window, ...)`` once the clock reaches ``time``."""

    @abstractmethod
    def delete_event_time_timer(self, time: float) -> None:
        """Forget this window's event-time timer at ``time``, if it has one."""

    @abstractmethod
    def delete_processing_time_timer(self, time: float) -> None:
        """Forget this window's processing-time timer at ``time``, if it has one."""

    @overload
    def get_partitioned_state(self, descriptor: ValueStateDescriptor[V]) -> ValueState[V]: ...
    @overload
    def get_partitioned_state(self, descriptor: ListStateDescriptor[V]) -> ListState[V]: ...
    @overload
    def get_partitioned_state(self, descriptor: MapStateDescriptor[UK, UV]) -> MapState[UK, UV]: ...
    @overload
    def get_partitioned_state(self, descriptor: ReducingStateDescriptor[V]) -> ReducingState[V]: ...
    @overload
    def get_partitioned_state(
        self, descriptor: AggregatingStateDescriptor[IN, ACC, OUT]
    ) -> AggregatingState[IN, OUT]: ...
    @abstractmethod
    def get_partitioned_state(self, descriptor: StateDescriptor) -> Any:
        """The state ``descriptor`` declares, for this key and window."""


class OnMergeContext(TriggerContext):
    """The context of ``on_merge``: also merges the merged windows' state into the new one.

    Its window is the window the merge produced; ``merge_partitioned_state`` folds that
    state of every window merged into it (reducing, aggregating or list state).
    """

    __slots__ = ()

    @abstractmethod
    def merge_partitioned_state(self, descriptor: StateDescriptor) -> None:
        """Fold the state ``descriptor`` declares of the merged windows into this window's.

        Raises:
            TypeError: ``descriptor`` declares a value or map state, which cannot merge.
        """


class Trigger(ABC, Generic[T, W]):
    """Decides when a window fires and purges (Flink's ``Trigger``); subclass it for your own.

    ``on_element`` runs for each record after it is added to the window; ``on_event_time``
    and ``on_processing_time`` run for each timer the trigger registered in the window (and
    for the window's cleanup timer); each returns a ``TriggerResult``. A trigger for session
    windows also implements ``can_merge`` (true) and ``on_merge``, which re-registers the
    merged window's timers. ``clear`` runs when the window is cleaned up: delete its timers
    and state there (what it leaves, the window operator removes). Keep no per-window data
    in attributes: one trigger object serves every key and window.
    """

    @abstractmethod
    def on_element(
        self, element: T, timestamp: float | None, window: W, ctx: TriggerContext
    ) -> TriggerResult:
        """A record was added to ``window``; ``timestamp`` is the one it carries (or ``None``).

        In any window: a processing-time or global window's records carry one downstream
        of a watermark strategy too (Flink's ``hasTimestamp``).
        """

    def on_event_time(self, time: float, window: W, ctx: TriggerContext) -> TriggerResult:
        """An event-time timer of ``window`` at ``time`` fired; by default, ``CONTINUE``."""
        return TriggerResult.CONTINUE

    def on_processing_time(self, time: float, window: W, ctx: TriggerContext) -> TriggerResult:
        """A processing-time timer of ``window`` at ``time`` fired; by default, ``CONTINUE``."""
        return TriggerResult.CONTINUE

    def can_merge(self) -> bool:
        """Whether the trigger supports merging windows (then it implements ``on_merge``)."""
        return False

    def on_merge(self, window: W, ctx: OnMergeContext) -> None:
        """Windows merged into ``window``: register its timers, merge its state."""
        raise NotImplementedError(f"{type(self).__name__} does not support merging windows")

    def clear(self, window: W, ctx: TriggerContext) -> None:
        """``window`` is cleaned up: delete the timers and state the trigger keeps for it."""

    def problems(self) -> list[str]:
        """What is wrong with the trigger's options, if anything."""
        return []

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"
