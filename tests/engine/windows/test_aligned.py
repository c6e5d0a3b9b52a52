"""The aligned window path does what the general path does: outputs, late data, state.

Each example drives two window operators with the same random calls: one takes the
aligned path, the other the general one (its trigger is a subclass of the built-in
one, which ``is_aligned`` refuses). After every batch, watermark and clock step both
emit the same records in the same order, send the same late records aside and count the
same drops; every snapshot holds the same keyed state. A restore crosses over: the
aligned operator continues from the general one's snapshot, and the general one from
the aligned one's.
"""

from __future__ import annotations

import contextlib
import copy
import itertools
import math
import operator
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from lockgate.engine import (
    AggregateFunction,
    CountEvictor,
    EventTimeSessionWindows,
    EventTimeTrigger,
    OutputTag,
    ProcessingTimeTrigger,
    ProcessWindowFunction,
    RuntimeContext,
    SlidingEventTimeWindows,
    SlidingProcessingTimeWindows,
    TimeWindow,
    TumblingEventTimeWindows,
    TumblingProcessingTimeWindows,
    ValueStateDescriptor,
    Watermark,
    WindowContext,
)
from lockgate.engine.functions.side_outputs import SideOutputCollector
from lockgate.engine.graph.job_graph import OperatorKind, OperatorNode
from lockgate.engine.runtime.operators.kinds import create_operator
from lockgate.engine.runtime.operators.window_operator import WindowOperator
from lockgate.engine.state import KeyedStateBackend, KeyedStateBackendSpec
from lockgate.engine.state.rocksdb.backend import RocksDBStateBackend
from lockgate.engine.time.clock import ManualClock
from lockgate.engine.windows.aligned import is_aligned
from lockgate.engine.windows.assigners import WindowAssigner
from lockgate.engine.windows.spec import WindowFunctionKind, WindowSpec
from lockgate.engine.windows.trigger import Trigger

Event = tuple[str, float, int]  # (key, event time, value)
LATE = OutputTag[Event]("late")
FIRINGS = ValueStateDescriptor[int]("firings", default=0)


class GeneralEventTime(EventTimeTrigger):
    """The built-in event-time trigger, under a name the aligned path does not take."""


class GeneralProcessingTime(ProcessingTimeTrigger):
    """The built-in processing-time trigger, under a name the aligned path does not take."""


class Gathered(AggregateFunction[Event, list[int], tuple[int, ...]]):
    """Every value, in a list the accumulator changes in place (copy-on-write must hold)."""

    def create_accumulator(self) -> list[int]:
        return []

    def add(self, value: Event, accumulator: list[int]) -> list[int]:
        accumulator.append(value[2])
        return accumulator

    def get_result(self, accumulator: list[int]) -> tuple[int, ...]:
        return tuple(accumulator)


def summed(a: Event, b: Event) -> Event:
    return (a[0], max(a[1], b[1]), a[2] * 3 + b[2])  # order matters: folds must keep it


class Described(ProcessWindowFunction[Any, Any, str]):
    """The key, window, watermark, result and how often the window fired (window state)."""

    def process(self, key: str, context: WindowContext, elements: list[Any]) -> list[Any]:
        firings = context.window_state().get_state(FIRINGS)
        firings.update(firings.value() + 1)
        window = context.window
        assert isinstance(window, TimeWindow)
        seen = (key, window.start, window.end, context.current_watermark())
        return [(*seen, elements[0], firings.value())]


class Listed(ProcessWindowFunction[Event, Any, str]):
    """The window's values in arrival order, and how often it fired (window state)."""

    def process(self, key: str, context: WindowContext, elements: list[Event]) -> list[Any]:
        firings = context.window_state().get_state(FIRINGS)
        firings.update(firings.value() + 1)
        window = context.window
        assert isinstance(window, TimeWindow)
        return [(key, window.start, [e[2] for e in elements], firings.value())]


@dataclass(frozen=True)
class Case:
    """One spec, in both paths' forms."""

    assigner: WindowAssigner
    kind: WindowFunctionKind
    window_function: bool
    lateness: float
    late_output: bool

    def spec(self, *, general: bool) -> WindowSpec:
        trigger: Trigger[Any, Any] | None = None
        if general:
            event_time = self.assigner.is_event_time
            trigger = GeneralEventTime() if event_time else GeneralProcessingTime()
        functions = {
            WindowFunctionKind.REDUCE: summed,
            WindowFunctionKind.AGGREGATE: Gathered(),
            WindowFunctionKind.PROCESS: Listed(),
        }
        incremental = self.kind is not WindowFunctionKind.PROCESS
        return WindowSpec(
            assigner=self.assigner,
            kind=self.kind,
            function=functions[self.kind],
            trigger=trigger,
            window_function=Described() if self.window_function and incremental else None,
            allowed_lateness=self.lateness,
            late_tag=LATE if self.late_output else None,
        )


Backend = Callable[[], KeyedStateBackend] | None  # a new keyed state backend; None: the heap


class Driven:
    """One window operator, its late output and clock, fed one call at a time."""

    def __init__(
        self,
        case: Case,
        clock: ManualClock,
        *,
        general: bool,
        restored: Any = None,
        backend: Backend = None,
    ) -> None:
        spec = case.spec(general=general)
        node = OperatorNode(0, "w", "w", OperatorKind.WINDOW, spec, 1, True, operator.itemgetter(0))
        node.timestamped = case.assigner.is_event_time
        self.stamped = node.timestamped
        keyed_state = None if backend is None else backend()
        self.operator = create_operator(node, restored, clock=clock, keyed_state=keyed_state)
        assert isinstance(self.operator, WindowOperator)
        self.late = SideOutputCollector([LATE])
        self.operator.send_side_outputs_to(self.late)
        self.operator.load_keyed_state()
        self.operator.open(RuntimeContext("w", 0, 1, 128, clock, self.operator.keyed_state))

    def step(self, action: tuple[str, Any], clock: ManualClock) -> Any:
        what, argument = action
        if what == "batch":
            records = [(e[1], e) if self.stamped else e for e in argument]
            out = self.operator.process_batch(records)
        elif what == "watermark":
            out, _ = self.operator.process_watermark(Watermark(argument))
        else:
            out = self.operator.fire_processing_timers(clock.now())
        return out, self.late.drain(), self.operator.late_records_dropped

    def snapshot(self) -> Any:
        return self.operator.capture(1).materialize(128)


def both(
    case: Case,
    clock: ManualClock,
    restored: tuple[Any, Any] = (None, None),
    backend: Backend = None,
) -> list[Driven]:
    fast = Driven(case, clock, general=False, restored=restored[0], backend=backend)
    general = Driven(case, clock, general=True, restored=restored[1], backend=backend)
    assert (fast.operator.window_path, general.operator.window_path) == ("aligned", "general")
    return [fast, general]


def drive(
    case: Case, actions: list[tuple[str, Any]], clock: ManualClock, backend: Backend = None
) -> None:
    operators = both(case, clock, backend=backend)
    try:
        _drive(case, actions, clock, backend, operators)
    finally:
        for driven in operators:
            driven.operator.close()


def _drive(
    case: Case,
    actions: list[tuple[str, Any]],
    clock: ManualClock,
    backend: Backend,
    operators: list[Driven],
) -> None:
    captured: list[tuple[Any, Any]] = []  # captures, and what they held when taken
    for action in actions:
        if action[0] == "clock":
            clock.advance(action[1])
        if action[0] == "restore":
            fast, general = (driven.snapshot() for driven in operators)
            assert fast.keyed == general.keyed
            for driven in operators:
                driven.operator.close()
            operators[:] = both(case, clock, restored=(general, fast), backend=backend)  # crossed
            continue
        if action[0] == "checkpoint":  # materialized later, as a checkpoint's worker does
            for driven in operators:
                capture = driven.operator.capture(1)
                captured.append((capture, copy.deepcopy(capture.materialize(128).keyed)))
            continue
        fast_step, general_step = (driven.step(action, clock) for driven in operators)
        assert fast_step == general_step, action
    final = [driven.snapshot() for driven in operators]
    assert final[0].keyed == final[1].keyed
    for capture, held in captured:  # copy-on-write: no later change reached a capture
        assert capture.materialize(128).keyed == held


keys = st.sampled_from(["a", "b", "c", "d"])
halves = st.integers(0, 80).map(lambda n: n / 2)
events = st.lists(st.tuples(keys, halves, st.integers(0, 9)), max_size=12)
event_time_assigners = st.one_of(
    st.builds(TumblingEventTimeWindows.of, st.sampled_from([1.0, 2.5, 4.0]), halves),
    st.builds(
        SlidingEventTimeWindows.of,
        st.sampled_from([2.0, 3.0, 6.0]),
        st.sampled_from([1.0, 1.5, 4.0]),  # 4 > 2 and 3: gaps between windows
        st.sampled_from([0.0, 0.5]),
    ),
)
processing_time_assigners = st.one_of(
    st.builds(TumblingProcessingTimeWindows.of, st.sampled_from([1.0, 2.5])),
    st.builds(SlidingProcessingTimeWindows.of, st.just(3.0), st.sampled_from([1.0, 2.0])),
)
kinds = st.sampled_from(list(WindowFunctionKind))


@st.composite
def event_time_runs(draw: st.DrawFn) -> tuple[Case, list[tuple[str, Any]]]:
    case = Case(
        draw(event_time_assigners),
        draw(kinds),
        draw(st.booleans()),
        draw(st.sampled_from([0.0, 0.0, 1.0, 2.5, 10.0])),
        draw(st.booleans()),
    )
    actions: list[tuple[str, Any]] = []
    watermark = -1.0
    for _ in range(draw(st.integers(1, 14))):
        choice = draw(st.sampled_from(["batch", "batch", "watermark", "restore", "checkpoint"]))
        if choice == "batch":
            actions.append(("batch", draw(events)))
        elif choice == "watermark":
            watermark += draw(st.sampled_from([0.0, 0.5, 1.0, 3.0, 7.5]))
            actions.append(("watermark", watermark))
        else:
            actions.append((choice, None))
    actions.append(("watermark", float("inf")))
    return case, actions


@st.composite
def processing_time_runs(draw: st.DrawFn) -> tuple[Case, list[tuple[str, Any]]]:
    case = Case(draw(processing_time_assigners), draw(kinds), draw(st.booleans()), 0.0, False)
    actions: list[tuple[str, Any]] = []
    for _ in range(draw(st.integers(1, 14))):
        choice = draw(st.sampled_from(["batch", "batch", "clock", "restore", "checkpoint"]))
        if choice == "batch":
            actions.append(("batch", draw(events)))
        elif choice == "clock":
            actions.append(("clock", draw(st.sampled_from([0.0, 0.5, 1.0, 2.5]))))
        else:
            actions.append((choice, None))
    return case, actions


@settings(max_examples=300, deadline=None)
@given(run=event_time_runs())
def test_event_time_windows_emit_and_keep_what_the_general_path_does(
    run: tuple[Case, list[tuple[str, Any]]],
) -> None:
    case, actions = run

    drive(case, actions, ManualClock())


@settings(max_examples=150, deadline=None)
@given(run=processing_time_runs())
def test_processing_time_windows_emit_and_keep_what_the_general_path_does(
    run: tuple[Case, list[tuple[str, Any]]],
) -> None:
    case, actions = run

    drive(case, actions, ManualClock(start=100.0))


@contextlib.contextmanager
def rocksdb_backends() -> Iterator[Backend]:
    """New RocksDB keyed state backends, each in a folder of its own, for one example."""
    attempts = itertools.count()
    with tempfile.TemporaryDirectory() as folder:
        backend = RocksDBStateBackend(Path(folder))

        def create() -> KeyedStateBackend:
            spec = KeyedStateBackendSpec("job", "run", next(attempts), "w", 0, 128, ManualClock())
            return backend.create_keyed_state_backend(spec)

        yield create


@settings(max_examples=40, deadline=None)
@given(run=event_time_runs())
def test_on_rocksdb_windows_emit_and_keep_what_the_general_path_does(
    run: tuple[Case, list[tuple[str, Any]]],
) -> None:
    # RocksDB encodes what it is given: contents changed in place must be written again.
    case, actions = run

    with rocksdb_backends() as backend:
        drive(case, actions, ManualClock(), backend)


def test_a_late_record_within_the_lateness_fires_its_window_on_both_paths() -> None:
    case = Case(TumblingEventTimeWindows.of(10.0), WindowFunctionKind.REDUCE, False, 5.0, True)
    # [0, 10) fires at the watermark 10, again for the record at 4 (within the lateness),
    # and the record at 3 after the watermark 15 passed its cleanup goes to the late output
    actions = [
        ("batch", [("a", 1.0, 1), ("a", 2.0, 2)]),
        ("watermark", 10.0),
        ("batch", [("a", 4.0, 4)]),
        ("watermark", 15.0),
        ("batch", [("a", 3.0, 3)]),
    ]
    clock, outcomes = ManualClock(), []
    for driven in both(case, clock):
        outcomes.append([driven.step(action, clock) for action in actions])

    end = math.nextafter(10.0, -math.inf)  # the window's max_timestamp stamps its results
    assert outcomes[0] == outcomes[1]
    fired = [out for out, _, _ in outcomes[0]]
    assert fired == [[], [(end, ("a", 2.0, 5))], [(end, ("a", 4.0, 19))], [], []]
    assert outcomes[0][-1][1] == {LATE: [(3.0, ("a", 3.0, 3))]}


def test_only_aligned_windows_with_their_own_trigger_and_no_evictor_qualify() -> None:
    def spec(**changes: Any) -> WindowSpec:
        fields: dict[str, Any] = {
            "assigner": TumblingEventTimeWindows.of(1.0),
            "kind": WindowFunctionKind.REDUCE,
            "function": summed,
        }
        return WindowSpec(**{**fields, **changes})

    assert is_aligned(spec())
    assert is_aligned(spec(trigger=EventTimeTrigger()))
    assert is_aligned(spec(assigner=SlidingProcessingTimeWindows.of(2.0, 1.0)))
    assert is_aligned(spec(kind=WindowFunctionKind.PROCESS, function=Listed()))
    assert not is_aligned(spec(trigger=GeneralEventTime()))
    assert not is_aligned(spec(evictor=CountEvictor.of(2)))
    assert not is_aligned(spec(assigner=EventTimeSessionWindows.with_gap(1.0)))
