"""A function with operator list and union state, shared by the rescaling tests."""

from __future__ import annotations

from typing import ClassVar

from lockgate.engine import (
    FunctionInitializationContext,
    FunctionSnapshotContext,
    ListStateDescriptor,
)


class Registering:
    """Passes records on, counting them in list state; registers its subtask in union state.

    What restored subtasks find in their operator state is kept on the class, outside the
    function objects, which every subtask deep-copies; ``reset`` clears it between runs.
    """

    next_index = 0  # subtasks initialise one after another: this numbers them
    restored_counts: ClassVar[list[int]] = []
    restored_unions: ClassVar[list[list[int]]] = []

    @classmethod
    def reset(cls, *, restored: bool = True) -> None:
        """Number subtasks from 0 again and, with ``restored``, forget what was restored."""
        cls.next_index = 0
        if restored:
            cls.restored_counts.clear()
            cls.restored_unions.clear()

    def initialize_state(self, context: FunctionInitializationContext) -> None:
        self.index = Registering.next_index
        Registering.next_index += 1
        store = context.operator_state_store
        self.counts = store.get_list_state(ListStateDescriptor[int]("counts"))
        self.indexes = store.get_union_list_state(ListStateDescriptor[int]("indexes"))
        self.seen = 0
        if context.is_restored:
            Registering.restored_counts.extend(self.counts.get())
            Registering.restored_unions.append(sorted(self.indexes.get()))

    def snapshot_state(self, context: FunctionSnapshotContext) -> None:
        self.counts.update([*self.counts.get(), self.seen])
        self.seen = 0
        if self.index not in self.indexes.get():
            self.indexes.update([*self.indexes.get(), self.index])

    def __call__(self, event: tuple[int, int]) -> tuple[int, int]:
        self.seen += 1
        return event
