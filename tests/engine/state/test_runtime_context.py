"""The state a function reaches through RuntimeContext and the CheckpointedFunction contexts."""

from __future__ import annotations

import operator
from typing import Any

from lockgate.engine.functions.process import (
    CheckpointedFunction,
    FunctionInitializationContext,
    FunctionSnapshotContext,
    RuntimeContext,
)
from lockgate.engine.state import (
    AggregatingStateDescriptor,
    KeyedStateStore,
    ListState,
    ListStateDescriptor,
    MapStateDescriptor,
    OperatorStateStore,
    ReducingStateDescriptor,
    ValueStateDescriptor,
)
from lockgate.engine.time.clock import ManualClock
from tests.engine.state.states import Average


def context() -> RuntimeContext:
    return RuntimeContext("op", 0, 1, 128, ManualClock(), KeyedStateStore())


def test_runtime_context_gives_every_kind_of_keyed_state_scoped_to_the_current_key() -> None:
    ctx = context()
    value = ctx.get_state(ValueStateDescriptor[int]("v"))
    items = ctx.get_list_state(ListStateDescriptor[int]("l"))
    entries = ctx.get_map_state(MapStateDescriptor[str, int]("m"))
    total = ctx.get_reducing_state(ReducingStateDescriptor[int]("r", operator.add))
    average = ctx.get_aggregating_state(AggregatingStateDescriptor("a", Average()))

    def read(key: str) -> tuple[Any, ...]:
        ctx.keyed_state.current_key = key
        return (value.value(), items.get(), entries.get("x"), total.get(), average.get())

    ctx.keyed_state.current_key = "k"
    value.update(1)
    items.add(2)
    entries.put("x", 3)
    total.add(4)
    average.add(5)

    assert read("k") == (1, [2], 3, 4, 5.0)
    assert read("other") == (None, [], None, None, None)


def test_runtime_context_get_state_accepts_list_and_map_descriptors() -> None:
    ctx = context()
    ctx.keyed_state.current_key = "k"

    ctx.get_state(ListStateDescriptor[int]("l")).add(1)

    assert ctx.get_list_state(ListStateDescriptor[int]("l")).get() == [1]


def test_runtime_context_has_its_own_operator_state_by_default() -> None:
    first, second = context(), context()

    first.operator_state.get_list_state(ListStateDescriptor[int]("l")).add(1)

    assert second.operator_state.snapshot().lists == {}


class Buffering:
    """Keeps a buffer in an attribute and writes it into operator state at checkpoints."""

    def __init__(self) -> None:
        self.buffer: list[int] = []

    def initialize_state(self, context: FunctionInitializationContext) -> None:
        self.state: ListState[int] = context.operator_state_store.get_list_state(
            ListStateDescriptor("buf")
        )
        self.buffer = self.state.get() if context.is_restored else []

    def snapshot_state(self, context: FunctionSnapshotContext) -> None:
        self.state.update(self.buffer)


def test_a_checkpointed_function_writes_its_buffer_into_operator_state_at_a_snapshot() -> None:
    store = OperatorStateStore()
    function = Buffering()
    function.initialize_state(
        FunctionInitializationContext(
            operator_state_store=store, keyed_state_store=None, is_restored=False
        )
    )
    function.buffer.extend([1, 2])

    function.snapshot_state(FunctionSnapshotContext(checkpoint_id=1))

    assert store.snapshot().lists == {"buf": [1, 2]}


def test_a_checkpointed_function_reads_its_buffer_back_on_restore() -> None:
    store = OperatorStateStore()
    store.restore({"buf": [1, 2]}, {}, {})
    function = Buffering()

    function.initialize_state(
        FunctionInitializationContext(
            operator_state_store=store, keyed_state_store=None, is_restored=True
        )
    )

    assert function.buffer == [1, 2]


def test_any_object_with_both_hooks_is_a_checkpointed_function() -> None:
    assert isinstance(Buffering(), CheckpointedFunction)
    assert not isinstance(object(), CheckpointedFunction)
