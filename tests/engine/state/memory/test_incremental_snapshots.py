"""Incremental snapshots of the memory backend, written as a subtask writes them and restored.

A ``Subtask`` drives the real parts a subtask's checkpoints use — the store's snapshots, the
capture's ``materialize`` against ``IncrementalBases``, ``OperatorSnapshot.is_empty`` to
decide whether a file is written, ``apply_increments`` on restore — around a dict of files
that is kept as the coordinator keeps them (one retained checkpoint; released shared files
go only while no checkpoint is pending). Whatever the order of writes, snapshots, completed
and aborted checkpoints and restores, the latest completed checkpoint restores exactly the
state its snapshot saw, as a full snapshot of it holds it.
"""

from __future__ import annotations

import copy
import operator
from collections.abc import Callable, Collection
from dataclasses import dataclass, replace
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from lockgate.engine.checkpointing.messages import StateHandle
from lockgate.engine.checkpointing.snapshots import OperatorSnapshot
from lockgate.engine.restore.increments import apply_increments
from lockgate.engine.runtime.snapshots.capture import StateCapture
from lockgate.engine.runtime.snapshots.incremental import (
    FULL_SNAPSHOT_EVERY,
    Increment,
    IncrementalBases,
)
from lockgate.engine.state import (
    AggregatingStateDescriptor,
    KeyedStateSnapshot,
    KeyedStateStore,
    ListStateDescriptor,
    MapStateDescriptor,
    ReducingStateDescriptor,
    ValueStateDescriptor,
)
from tests.engine.state.states import Average, EveryState

UID = "sums"
MAX_PARALLELISM = 4
DESCRIPTORS = (
    ValueStateDescriptor[int]("value"),
    ListStateDescriptor[int]("list"),
    MapStateDescriptor[str, int]("map"),
    ReducingStateDescriptor[int]("reducing", operator.add),
    AggregatingStateDescriptor("aggregating", Average()),  # changes its accumulator in place
)

Groups = dict[int, dict[str, dict[Any, Any]]]


class Subtask:
    """One keyed operator subtask taking incremental checkpoints, and its checkpoint files.

    ``take`` is a barrier's synchronous part, ``write`` the asynchronous part (possibly much
    later, or after later checkpoints), ``complete`` and ``abort`` the coordinator's
    decisions with their notifications, ``restart`` a failover to the latest completed one.
    """

    def __init__(self, *, full_every: int = FULL_SNAPSHOT_EVERY) -> None:
        self.full_every = full_every
        self.files: dict[str, OperatorSnapshot] = {}
        self.released: set[str] = set()
        self.latest: Written | None = None
        self.next_id = 1
        self._start(KeyedStateStore())

    def checkpoint(self) -> None:
        """Take, write and complete one checkpoint, with nothing in between."""
        checkpoint_id = self.take()
        self.write(checkpoint_id)
        self.complete(checkpoint_id)

    def take(self) -> int:
        """Snapshot the store for a new checkpoint; remember what it holds at this instant."""
        checkpoint_id, self.next_id = self.next_id, self.next_id + 1
        keyed = self.store.snapshot()
        self.taken[checkpoint_id] = (keyed, copy.deepcopy(keyed.by_key_group(MAX_PARALLELISM)))
        self.pending.add(checkpoint_id)
        return checkpoint_id

    def write(self, checkpoint_id: int) -> None:
        """Write a taken snapshot as ``SubtaskCheckpointer`` does: a delta on the base now."""
        keyed, seen = self.taken.pop(checkpoint_id)
        base = self.bases.base_for(UID)
        snapshot = StateCapture(UID, keyed=keyed).materialize(
            MAX_PARALLELISM, None if base is None else base.keyed
        )
        handle = None
        if not snapshot.is_empty:  # what SubtaskCheckpointer writes
            handle = self._write_file(checkpoint_id, snapshot, base)
            self.bases.written(checkpoint_id, UID, Increment(keyed, handle))
        if checkpoint_id not in self.pending:  # a late acknowledgement: its files go
            self._discard(handle)
            return
        self.written[checkpoint_id] = Written(handle, keyed, seen)

    def complete(self, checkpoint_id: int) -> None:
        """Complete a written checkpoint: it is retained, older ones are subsumed."""
        written = self.written.pop(checkpoint_id)
        self.pending.discard(checkpoint_id)
        for older in sorted(cid for cid in self.pending if cid < checkpoint_id):
            self.abort(older)
        if self.latest is not None:
            self.released |= referenced(self.latest.handle) - referenced(written.handle)
        self.latest = written
        self.bases.completed(checkpoint_id)
        self._delete_released()

    def abort(self, checkpoint_id: int) -> None:
        """Abort a pending checkpoint: what it wrote goes, nothing builds on it."""
        self.pending.discard(checkpoint_id)
        written = self.written.pop(checkpoint_id, None)
        self._discard(None if written is None else written.handle)
        self.bases.aborted(checkpoint_id)
        self._delete_released()

    def missing_files(self) -> set[str]:
        """The files the latest completed checkpoint references but storage lost."""
        return set() if self.latest is None else referenced(self.latest.handle) - set(self.files)

    def restored(self) -> Groups:
        """The keyed state the latest completed checkpoint restores (its chain applied)."""
        handle = None if self.latest is None else self.latest.handle
        if handle is None:  # nothing written: a restore finds no state
            return {}
        chain = [self.files[file.location] for file in (*handle.shared, handle.plain())]
        return apply_increments(chain).keyed

    def restart(self) -> None:
        """Fail over: a new attempt restores the latest completed checkpoint, with no base."""
        for checkpoint_id in sorted(self.pending):
            self.abort(checkpoint_id)
        store = KeyedStateStore()
        store.restore(self.restored())
        self._start(store)

    def _start(self, store: KeyedStateStore) -> None:
        self.store = store
        self.states = EveryState(store, DESCRIPTORS)
        self.bases = IncrementalBases(self.full_every)
        self.taken: dict[int, tuple[KeyedStateSnapshot, Groups]] = {}
        self.written: dict[int, Written] = {}
        self.pending: set[int] = set()

    def _write_file(
        self, checkpoint_id: int, snapshot: OperatorSnapshot, base: Increment | None
    ) -> StateHandle:
        location = f"shared/{UID}-{checkpoint_id}"
        self.files[location] = snapshot
        handle = StateHandle(location, 0, "", is_shared=True)
        return handle if base is None else replace(handle, shared=base.chain())

    def _discard(self, handle: StateHandle | None) -> None:
        if handle is not None and handle.location not in self._retained():
            self.files.pop(handle.location, None)

    def _delete_released(self) -> None:
        if self.pending:  # a pending checkpoint may build on a released file
            return
        for location in self.released - self._retained():
            self.files.pop(location, None)
        self.released.clear()

    def _retained(self) -> set[str]:
        return set() if self.latest is None else referenced(self.latest.handle)


@dataclass(frozen=True)
class Written:
    """A written checkpoint: its handle (``None``: nothing written), snapshot, and contents."""

    handle: StateHandle | None
    keyed: KeyedStateSnapshot
    seen: Groups


def referenced(handle: StateHandle | None) -> set[str]:
    return set() if handle is None else {file.location for file in handle.shared_files}


def flat(groups: Groups) -> dict[tuple[str, Any], Any]:
    return {
        (name, key): value
        for states in groups.values()
        for name, table in states.items()
        for key, value in table.items()
    }


def expected(subtask: Subtask) -> dict[tuple[str, Any], Any]:
    """What the latest completed checkpoint's snapshot held when it was taken."""
    assert subtask.latest is not None
    return flat(subtask.latest.seen)


def test_a_checkpoint_without_changes_restores_the_state_of_the_one_before() -> None:
    subtask = Subtask()
    for number in range(10):
        subtask.states.write(number % 3, number)
    subtask.checkpoint()

    subtask.checkpoint()  # no record came in between: the delta holds no change

    assert flat(subtask.restored()) == expected(subtask) != {}


def test_a_delta_after_a_checkpoint_without_changes_builds_on_files_that_are_kept() -> None:
    subtask = Subtask()
    subtask.states.write("k0", 1)
    subtask.checkpoint()
    subtask.checkpoint()  # no change; the coordinator deletes what only the first one used

    subtask.states.write("k0", 2)
    subtask.checkpoint()

    assert subtask.missing_files() == set()
    assert flat(subtask.restored()) == expected(subtask)


def clear_all(states: EveryState, _: int) -> None:
    for state in (states.value, states.list, states.map, states.reducing, states.aggregating):
        state.clear()


# Writes to the current key's states; the aggregating state changes its accumulator in place.
WRITES: dict[str, Callable[[EveryState, int], None]] = {
    "update value": lambda s, n: s.value.update(n),
    "clear value": lambda s, _: s.value.clear(),
    "add to list": lambda s, n: s.list.add(n),
    "replace list": lambda s, n: s.list.update(range(n % 3)),  # an empty list clears
    "put": lambda s, n: s.map.put(f"m{n % 3}", n),
    "remove": lambda s, n: s.map.remove(f"m{n % 3}"),
    "reduce": lambda s, n: s.reducing.add(n),
    "aggregate": lambda s, n: s.aggregating.add(n),
    "clear all": clear_all,
}
WRITE = st.tuples(st.sampled_from(sorted(WRITES)), st.integers(0, 3), st.integers(0, 9))
STEPS = ("take", "write", "complete", "abort", "restart")
OPERATIONS = st.one_of(  # a third each: records, whole checkpoints, single protocol steps
    st.tuples(st.just("records"), st.lists(WRITE, min_size=1, max_size=4)),
    st.tuples(st.just("checkpoint"), st.just(0)),
    st.tuples(st.sampled_from(STEPS), st.integers(0, 3)),
)


def on_one(step: Callable[[int], None], checkpoint_ids: Collection[int], index: int) -> None:
    """Apply ``step`` to one of ``checkpoint_ids``, if there is any."""
    if checkpoint_ids:
        ordered = sorted(checkpoint_ids)
        step(ordered[index % len(ordered)])


def run(subtask: Subtask, operation: tuple[Any, ...]) -> None:
    """Apply one write to a key's states, or one step of the checkpoint protocol."""
    match operation:
        case ("records", writes):
            for name, key, number in writes:
                subtask.store.current_key = key
                WRITES[name](subtask.states, number)
        case ("checkpoint", _):
            subtask.checkpoint()
        case ("take", _):
            subtask.take()
        case ("write", index):
            on_one(subtask.write, subtask.taken, index)
        case ("complete", index):
            on_one(subtask.complete, subtask.written, index)
        case ("abort", index):
            on_one(subtask.abort, subtask.pending, index)
        case _:
            subtask.restart()


def store_holds(subtask: Subtask) -> dict[tuple[str, Any], Any]:
    return flat(subtask.store.snapshot().by_key_group(MAX_PARALLELISM))


@given(st.lists(OPERATIONS, max_size=80), st.sampled_from([1, 2, 3, FULL_SNAPSHOT_EVERY]))
def test_the_latest_completed_checkpoint_restores_what_its_snapshot_saw(
    operations: list[tuple[Any, ...]], full_every: int
) -> None:
    subtask = Subtask(full_every=full_every)

    for operation in operations:
        run(subtask, operation)
        if subtask.latest is not None:
            latest = subtask.latest
            assert flat(latest.keyed.by_key_group(MAX_PARALLELISM)) == flat(latest.seen)
            assert subtask.missing_files() == set()
            assert flat(subtask.restored()) == expected(subtask)
        if operation[0] == "restart":
            assert store_holds(subtask) == ({} if subtask.latest is None else expected(subtask))
