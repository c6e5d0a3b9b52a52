"""Operator: the runtime form of one chained operator of a subtask, and what every kind shares.

Each operator turns a batch of records into a batch of records with one plain call, so a
chain of operators costs one Python call per operator per batch, plus the user function per
record. Keyed operators take each record's key with the stream's key selector.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import anyio.to_thread

from lockgate.engine.checkpointing.snapshots import OperatorSnapshot
from lockgate.engine.events import Watermark
from lockgate.engine.functions.async_function import AsyncFunction
from lockgate.engine.functions.broadcast import KeyedBroadcastProcessFunction
from lockgate.engine.functions.process import (
    CheckpointedFunction,
    FunctionInitializationContext,
    FunctionSnapshotContext,
    KeyedCoProcessFunction,
    KeyedProcessFunction,
    RuntimeContext,
)
from lockgate.engine.functions.side_outputs import SideOutputCollector
from lockgate.engine.graph.job_graph import OperatorNode
from lockgate.engine.restore.native import restore_keyed_state
from lockgate.engine.runtime.snapshots.capture import StateCapture
from lockgate.engine.state import (
    KeyedSnapshot,
    KeyedStateBackend,
    KeyedStateStore,
    OperatorStateStore,
)
from lockgate.engine.state.native_snapshot import NativeSnapshots
from lockgate.engine.time.clock import Clock

__all__ = ["Operator", "key_selector", "own_copy"]


class Operator:
    """One chained operator of a subtask: ``open``, ``process_batch`` per batch, ``close``.

    Operator state is restored when the operator is built, and so is keyed state that
    comes as a backend's own files (opened, not read); keyed state in key groups is loaded
    by ``restore_keyed_state``, off the event loop, before ``open``. ``capture`` takes the
    consistent copy of it that a checkpoint needs. The operator owns ``keyed_state`` (given,
    or a heap store): ``close`` closes it. An operator whose side outputs are read is given
    a ``side_outputs`` collector: the subtask drains it after each batch.
    """

    side_outputs: SideOutputCollector | None = None

    def __init__(
        self,
        node: OperatorNode,
        restored: OperatorSnapshot | None = None,
        clock: Clock | None = None,
        *,
        keyed_state: KeyedStateBackend | None = None,
    ) -> None:
        self.uid = node.uid
        # state TTL reads the job's clock; errors about state name the operator
        self.keyed_state: KeyedStateBackend = (
            KeyedStateStore(clock, owner=f"operator '{node.uid}'")
            if keyed_state is None
            else keyed_state
        )
        self.operator_state = OperatorStateStore()
        self.restored = restored is not None
        self.function: Any = own_copy(node.function)
        self._keyed_restore = restored  # loaded by restore_keyed_state(), before open()
        if restored is not None and restored.native is not None:
            self.load_keyed_state()  # a backend's own files: opened before any state is used
        if restored is not None:
            self.operator_state.restore(restored.lists, restored.unions, restored.broadcast)

    async def restore_keyed_state(self) -> None:
        """Load the keyed state the operator was built with, in a worker thread; once.

        A million keys take a second or more to load: the event loop runs on meanwhile.
        Nothing else touches the operator's state before ``open``.

        Raises:
            RestoreError: the restored state does not fit the operator's backend or states.
        """
        if self._keyed_restore is not None:
            await anyio.to_thread.run_sync(self.load_keyed_state)

    def load_keyed_state(self) -> None:
        """Load the keyed state the operator was built with now, on this thread; once."""
        restored, self._keyed_restore = self._keyed_restore, None
        if restored is not None:
            restore_keyed_state(self.keyed_state, restored)

    @property
    def late_records_dropped(self) -> int | None:
        """Records dropped as late, for operators that drop them (windows); else ``None``."""
        return None

    def open(self, context: RuntimeContext) -> None:
        """Prepare to process; called once before the first batch."""
        self._initialize_function_state()

    def send_side_outputs_to(self, collector: SideOutputCollector) -> None:
        """Collect the records this operator sends to side outputs in ``collector``."""
        self.side_outputs = collector

    def capture(self, checkpoint_id: int, *, native: bool = False) -> StateCapture:
        """Take a consistent copy of this operator's state for ``checkpoint_id``.

        With ``native`` (an incremental checkpoint), a backend that can (RocksDB) captures
        its keyed state as its own files (``NativeKeyedSnapshot``).
        """
        if isinstance(self.function, CheckpointedFunction):
            self.function.snapshot_state(FunctionSnapshotContext(checkpoint_id))
        keyed = self._snapshot_keyed(native=native) if self.keyed_state.has_states else None
        return StateCapture(self.uid, keyed, self.operator_state.snapshot())

    def _snapshot_keyed(self, *, native: bool) -> KeyedSnapshot:
        store = self.keyed_state
        if native and isinstance(store, NativeSnapshots):
            return store.native_snapshot()
        return store.snapshot()

    def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        """Tell the user function, if it listens, that ``checkpoint_id`` completed."""
        self._tell_function("notify_checkpoint_complete", checkpoint_id)

    def notify_checkpoint_aborted(self, checkpoint_id: int) -> None:
        """Tell the user function, if it listens, that ``checkpoint_id`` was aborted."""
        self._tell_function("notify_checkpoint_aborted", checkpoint_id)

    def _tell_function(self, method: str, checkpoint_id: int) -> None:
        # Flink's CheckpointListener: any user function may define these two methods.
        listener = getattr(self.function, method, None)
        if callable(listener):
            listener(checkpoint_id)

    def _initialize_function_state(self) -> None:
        if isinstance(self.function, CheckpointedFunction):
            context = FunctionInitializationContext(
                operator_state_store=self.operator_state,
                keyed_state_store=self.keyed_state,
                is_restored=self.restored,
            )
            self.function.initialize_state(context)

    def process_batch(self, records: list[Any]) -> list[Any]:
        """Return the records to pass on for a batch of input records."""
        raise NotImplementedError

    def process_watermark(self, watermark: Watermark) -> tuple[list[Any], Watermark | None]:
        """Return the records a watermark makes due, and the watermark to pass on (or ``None``).

        Most operators emit nothing and pass it on; one that holds it back (an async
        operator's fence) passes it on later itself.
        """
        return [], watermark

    def close(self) -> None:
        """Release what ``open`` acquired and the keyed state; called once, also after a failure."""
        self.keyed_state.close()


_OWN_COPY = (
    AsyncFunction,
    CheckpointedFunction,
    KeyedProcessFunction,
    KeyedCoProcessFunction,
    KeyedBroadcastProcessFunction,
)


def own_copy(function: Any) -> Any:
    """Return the copy of ``function`` one subtask runs: its own, if the function is stateful."""
    # Every subtask runs its own copy of a stateful function object, as Flink runs its own
    # deserialized copy, so attributes set in open() are never shared between subtasks.
    stateful = isinstance(function, _OWN_COPY)
    return copy.deepcopy(function) if stateful else function


def key_selector(node: OperatorNode) -> Callable[[Any], Any]:
    """The key selector of a node the graph validated as keyed."""
    assert node.key_selector is not None, f"operator '{node.uid}' was validated as keyed"
    return node.key_selector
