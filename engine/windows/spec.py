"""WindowSpec: a windowed operator's assigner, trigger, evictor, lateness and functions, checked."""

from __future__ import annotations

import enum
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from lockgate.engine.errors import GraphError
from lockgate.engine.functions.side_outputs import OutputTag
from lockgate.engine.state.aggregate_function import AggregateFunction
from lockgate.engine.windows.assigners import GlobalWindows, WindowAssigner
from lockgate.engine.windows.evictors import Evictor
from lockgate.engine.windows.functions import ProcessWindowFunction
from lockgate.engine.windows.trigger import Trigger
from lockgate.engine.windows.triggers import EventTimeTrigger, ProcessingTimeTrigger, timed_trigger

__all__ = ["WindowFunctionKind", "WindowSpec"]


class WindowFunctionKind(enum.Enum):
    """What a window keeps and emits: a reduced value, an accumulator, or every record."""

    REDUCE = "reduce"
    AGGREGATE = "aggregate"
    PROCESS = "process"


@dataclass(frozen=True, slots=True, kw_only=True)
class WindowSpec:
    """Everything a window operator needs; ``check`` raises the first problem as GraphError.

    Event-time assigners read the timestamp each record carries, not a field of the spec.
    ``window_function`` is the ``ProcessWindowFunction`` given with ``reduce`` or
    ``aggregate``; ``evictor`` makes the window keep its records.
    """

    assigner: WindowAssigner
    kind: WindowFunctionKind
    function: Any
    trigger: Trigger[Any, Any] | None = None
    evictor: Evictor[Any, Any] | None = None
    window_function: ProcessWindowFunction[Any, Any, Any] | None = None
    allowed_lateness: float = 0.0
    late_tag: OutputTag[Any] | None = None

    @property
    def process_function(self) -> ProcessWindowFunction[Any, Any, Any] | None:
        """The ``ProcessWindowFunction`` that emits: given to ``process``, or as window function."""
        if self.kind is WindowFunctionKind.PROCESS:
            return self.function  # type: ignore[no-any-return]
        return self.window_function

    @property
    def effective_trigger(self) -> Trigger[Any, Any]:
        """The trigger given, or the assigner's default (as in Flink)."""
        if self.trigger is not None:
            return self.trigger
        return EventTimeTrigger() if self.assigner.is_event_time else ProcessingTimeTrigger()

    def check(self, uid: str) -> None:
        """Raise ``GraphError`` naming ``uid`` for the first problem."""
        for problem in self._problems():
            raise GraphError(f"window '{uid}': {problem}")

    def _problems(self) -> Iterator[str]:
        assigner: object = self.assigner  # whatever the user passed
        if not isinstance(assigner, WindowAssigner):
            yield (
                "needs a window assigner such as TumblingEventTimeWindows.of(60); "
                f"got {self.assigner!r}"
            )
            return
        yield from self.assigner.problems()
        yield from self._trigger_problems()
        yield from self._evictor_problems()
        yield from self._lateness_problems()
        yield from self._function_problems()

    def _trigger_problems(self) -> Iterator[str]:
        trigger: object = self.effective_trigger
        if not isinstance(trigger, Trigger):
            yield f"trigger() needs a Trigger such as CountTrigger.of(100); got {trigger!r}"
            return
        yield from trigger.problems()
        if self.assigner.merges and not trigger.can_merge():
            yield (
                f"{type(self.assigner).__name__} merges windows, and {type(trigger).__name__} "
                "cannot merge: give the trigger can_merge() (true) and on_merge()"
            )
        base = timed_trigger(trigger)
        mixed = (isinstance(base, EventTimeTrigger) and not self.assigner.is_event_time) or (
            isinstance(base, ProcessingTimeTrigger) and self.assigner.is_event_time
        )
        if mixed:
            yield (
                f"{type(base).__name__} does not fit {type(self.assigner).__name__}, which "
                "ends windows on the other time; drop .trigger() to use the assigner's own"
            )
        if isinstance(self.assigner, GlobalWindows) and self.trigger is None:
            yield (
                "the global window never ends by time: give it .trigger(CountTrigger.of(n)), "
                "or use count_window(n)"
            )

    def _evictor_problems(self) -> Iterator[str]:
        evictor: object = self.evictor
        if evictor is None:
            return
        if not isinstance(evictor, Evictor):
            yield f"evictor() needs an Evictor such as CountEvictor.of(10); got {evictor!r}"
            return
        yield from evictor.problems()

    def _lateness_problems(self) -> Iterator[str]:
        lateness = self.allowed_lateness
        if isinstance(lateness, bool) or not isinstance(lateness, int | float) or lateness < 0:
            yield f"allowed_lateness must be 0 or more seconds; got {lateness!r}"
        late_data = lateness or self.late_tag is not None
        if late_data and not self.assigner.is_event_time:
            yield (
                "allowed_lateness() and side_output_late_data() apply to event-time windows "
                "only; records are never late on the job's clock"
            )
        tag: object = self.late_tag
        if tag is not None and not isinstance(tag, OutputTag):
            yield f"side_output_late_data() needs an OutputTag; got {tag!r}"

    def _function_problems(self) -> Iterator[str]:
        function, kind = self.function, self.kind
        if kind is WindowFunctionKind.REDUCE and not callable(function):
            yield f"reduce() needs a function of two records; got {function!r}"
        if kind is WindowFunctionKind.AGGREGATE:
            if not isinstance(function, AggregateFunction):
                yield f"aggregate() needs an AggregateFunction; got {function!r}"
            elif self.assigner.merges and type(function).merge is AggregateFunction.merge:
                yield (
                    f"session windows merge accumulators: {type(function).__name__} must "
                    "implement merge(a, b)"
                )
        if kind is WindowFunctionKind.PROCESS and not isinstance(function, ProcessWindowFunction):
            yield f"process() needs a ProcessWindowFunction; got {function!r}"
        window_function: object = self.window_function
        if window_function is not None and not isinstance(window_function, ProcessWindowFunction):
            yield (
                f"{kind.value}(fn, window_function) needs a ProcessWindowFunction as its "
                f"window function; got {window_function!r}"
            )
