"""WindowedStream: ``keyed.window(assigner)``, then a trigger, lateness, and a window function."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from lockgate.engine.errors import GraphError
from lockgate.engine.functions.side_outputs import OutputTag
from lockgate.engine.graph.job_graph import OperatorKind
from lockgate.engine.state.aggregate_function import AggregateFunction
from lockgate.engine.windows.assigners import GlobalWindows, WindowAssigner
from lockgate.engine.windows.evictors import CountEvictor, Evictor
from lockgate.engine.windows.functions import ProcessWindowFunction
from lockgate.engine.windows.spec import WindowFunctionKind, WindowSpec
from lockgate.engine.windows.trigger import Trigger
from lockgate.engine.windows.triggers import CountTrigger, PurgingTrigger

if TYPE_CHECKING:
    from lockgate.engine.api.stream import DataStream

__all__ = ["WindowedStream", "count_windows"]

T = TypeVar("T")
R = TypeVar("R")
K = TypeVar("K")


class WindowedStream(Generic[T, K]):
    """A keyed stream cut into windows; a window function turns each into records.

    Made by ``keyed.window(assigner)`` (or ``keyed.count_window(size, slide)``, or
    ``stream.window_all(assigner)`` over a whole stream in one subtask). Configure it with
    ``trigger(...)``, ``evictor(...)``, ``allowed_lateness(seconds)`` and
    ``side_output_late_data(tag)``, then end it with ``reduce`` or ``aggregate`` (each
    optionally with a ``ProcessWindowFunction`` that gets the key, the window and the
    result) or ``process``, which add the window operator.

    Event-time windows read the timestamp each record carries (given by the watermark
    strategy upstream, kept by every operator since). They fire when the watermark passes
    their end, and again for each late record within the allowed lateness; a record behind
    that is dropped, or sent to the late-data side output. Each result carries the
    timestamp ``window.max_timestamp`` (just below its end), so a window downstream puts it
    in the window it belongs to, as in Flink. Window contents, counts and timers are keyed
    state: checkpoints, savepoints and rescaling carry them.
    """

    def __init__(
        self,
        keyed: DataStream[T],
        assigner: WindowAssigner,
        *,
        single_subtask: bool = False,
    ) -> None:
        self._keyed = keyed
        self._single_subtask = single_subtask
        self._assigner = assigner
        self._trigger: Trigger[Any, Any] | None = None
        self._evictor: Evictor[Any, Any] | None = None
        self._lateness = 0.0
        self._late_tag: OutputTag[Any] | None = None

    def trigger(self, trigger: Trigger[Any, Any]) -> WindowedStream[T, K]:
        """Fire windows with ``trigger`` instead of the assigner's default."""
        self._trigger = trigger
        return self

    def evictor(self, evictor: Evictor[Any, Any]) -> WindowedStream[T, K]:
        """Remove records from each firing window with ``evictor``; windows keep every record."""
        self._evictor = evictor
        return self

    def allowed_lateness(self, seconds: float) -> WindowedStream[T, K]:
        """Keep windows ``seconds`` after their end: a late record fires its window again."""
        self._lateness = seconds
        return self

    def side_output_late_data(self, tag: OutputTag[T]) -> WindowedStream[T, K]:
        """Send records too late for any of their windows to side output ``tag``."""
        self._late_tag = tag
        return self

    def reduce(
        self,
        fn: Callable[[T, T], T],
        window_function: ProcessWindowFunction[T, Any, K] | None = None,
        *,
        uid: str | None = None,
        name: str | None = None,
        parallelism: int | None = None,
    ) -> DataStream[Any]:
        """Per window, fold its records with ``fn(a, b)`` as they come; emit the value.

        With ``window_function``, emit what its ``process(key, context, [value])`` returns
        instead: it gets the key and ``context.window`` too, while the window keeps only
        the one value.
        """
        return self._then(WindowFunctionKind.REDUCE, fn, uid, name, parallelism, window_function)

    def aggregate(
        self,
        fn: AggregateFunction[T, Any, R],
        window_function: ProcessWindowFunction[R, Any, K] | None = None,
        *,
        uid: str | None = None,
        name: str | None = None,
        parallelism: int | None = None,
    ) -> DataStream[Any]:
        """Per window, add its records to an accumulator as they come; emit its result.

        With ``window_function``, emit what its ``process(key, context, [result])`` returns
        instead: it gets the key and ``context.window`` too, while the window keeps only
        the accumulator.
        """
        return self._then(WindowFunctionKind.AGGREGATE, fn, uid, name, parallelism, window_function)

    def process(
        self,
        fn: ProcessWindowFunction[T, R, K],
        *,
        uid: str | None = None,
        name: str | None = None,
        parallelism: int | None = None,
    ) -> DataStream[R]:
        """Per window, keep its records; give them all to ``fn.process`` when it fires."""
        return self._then(WindowFunctionKind.PROCESS, fn, uid, name, parallelism)

    def _then(
        self,
        kind: WindowFunctionKind,
        fn: Any,
        uid: str | None,
        name: str | None,
        parallelism: int | None,
        window_function: ProcessWindowFunction[Any, Any, Any] | None = None,
    ) -> DataStream[Any]:
        spec = WindowSpec(
            assigner=self._assigner,
            kind=kind,
            function=fn,
            trigger=self._trigger,
            evictor=self._evictor,
            window_function=window_function,
            allowed_lateness=self._lateness,
            late_tag=self._late_tag,
        )
        if getattr(self._assigner, "is_event_time", False):
            self._check_event_time(uid)
        if self._single_subtask:
            if parallelism not in (None, 1):
                label = f"window '{uid}'" if uid is not None else "window_all()"
                raise GraphError(
                    f"{label} runs in one subtask (window_all); got parallelism={parallelism}; "
                    "key the stream and use window() to spread it"
                )
            parallelism = 1
        return self._keyed._derive(
            OperatorKind.WINDOW, spec, uid=uid, name=name, parallelism=parallelism
        )

    def _check_event_time(self, uid: str | None) -> None:
        problem = self._keyed._event_time_problem()
        if problem is not None:
            label = f"window '{uid}'" if uid is not None else "window()"
            raise GraphError(f"{label} in event time: {problem}")


def count_windows(keyed: DataStream[T], size: int, slide: int | None) -> WindowedStream[T, Any]:
    """Flink's countWindow: per key, windows of ``size`` records, every ``slide`` records.

    Without ``slide``: ``GlobalWindows`` with ``PurgingTrigger.of(CountTrigger.of(size))``,
    a window of each ``size`` records. With it: ``GlobalWindows`` with
    ``CountTrigger.of(slide)`` and ``CountEvictor.of(size)``, the last ``size`` records
    every ``slide`` records (fewer before ``size`` have come).
    """
    windowed: WindowedStream[T, Any] = keyed.window(GlobalWindows.create())
    if slide is None:
        return windowed.trigger(PurgingTrigger.of(CountTrigger.of(size)))
    return windowed.evictor(CountEvictor.of(size)).trigger(CountTrigger.of(slide))
