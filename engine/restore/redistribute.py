"""Redistribution of operator state when a job restores at a different parallelism.

The rules are Flink's: keyed state moves in whole key groups to the subtask that owns each
group at the new parallelism; even-split list states are concatenated in old-subtask order
and cut into contiguous chunks whose sizes differ by at most one; union list states reach
every new subtask in full; broadcast state is the same everywhere, so the first old
subtask's copy is given to all. Channel state (in-flight records of an unaligned
checkpoint) belongs to one channel between two subtasks: it stays with its subtask, and
cannot be redistributed. Native keyed state (a backend's own files, for a backend that opens
them as they are) is not redistributed here: at an unchanged parallelism each subtask keeps
its own, at another one ``native_sources`` says which old subtasks' files each new subtask
is made of (``rescaled.py`` makes them), as Flink's RocksDB backend does.
``redistribute`` copies every key, so the restore runs it in a worker thread.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from lockgate.engine.checkpointing.native_state import NativeKeyedState
from lockgate.engine.checkpointing.snapshots import OperatorSnapshot
from lockgate.engine.state.gil_share import sharing_the_gil
from lockgate.engine.state.key_groups import key_group_range

__all__ = ["NativeSources", "even_split", "native_sources", "redistribute"]

KeyGroups = dict[int, dict[str, dict[Any, Any]]]


def redistribute(
    old: Sequence[OperatorSnapshot], new_parallelism: int, max_parallelism: int
) -> list[OperatorSnapshot]:
    """Return one snapshot per new subtask holding the state ``old`` snapshots held.

    ``old`` has one snapshot per old subtask, in subtask order (an empty snapshot for a
    subtask that had no state). Works for equal, larger and smaller parallelism.

    Raises:
        ValueError: when ``old`` is empty or mixes operators, when ``new_parallelism`` is
            not in 1..max_parallelism, when a key group lies outside 0..max_parallelism-1
            (the max parallelism of an operator cannot change across a restore), or when
            ``old`` holds channel state or native keyed state and the parallelism changes.
    """
    uid = _check(old, new_parallelism, max_parallelism)
    keyed = _merge_key_groups(old, max_parallelism)
    chunks = {
        name: even_split(items, new_parallelism)
        for name, items in _concatenate(snapshot.lists for snapshot in old).items()
    }
    unions = _concatenate(snapshot.unions for snapshot in old)
    broadcast = _first_copies(snapshot.broadcast for snapshot in old)
    kinds = {name: kind for snapshot in old for name, kind in snapshot.kinds.items()}
    channels = _channel_states(old, new_parallelism)
    natives = _native_states(old, new_parallelism)
    return [
        OperatorSnapshot(
            uid,
            keyed=_owned(keyed, key_group_range(index, max_parallelism, new_parallelism)),
            lists={name: parts[index] for name, parts in chunks.items()},
            unions={name: list(items) for name, items in unions.items()},
            broadcast={name: dict(entries) for name, entries in broadcast.items()},
            kinds=dict(kinds),
            input_channels=channels[index].input_channels,
            output_channels=channels[index].output_channels,
            native=natives[index],
        )
        for index in range(new_parallelism)
    ]


@dataclass(frozen=True, slots=True)
class NativeSources:
    """The old subtasks whose native files make one new subtask's keyed state.

    ``key_groups`` are the new subtask's; ``base`` is the old subtask whose files become
    its database, with the key groups outside ``key_groups`` deleted (``None``: no old
    subtask held any of them); ``others`` are the old subtasks whose files also hold some
    of ``key_groups``, inserted into the base's.
    """

    key_groups: range
    base: int | None
    others: tuple[int, ...] = ()


def native_sources(
    holding: Sequence[bool], new_parallelism: int, max_parallelism: int
) -> list[NativeSources]:
    """Return, for each new subtask, which old subtasks' files its keyed state is made of.

    ``holding`` has one flag per old subtask, in order: whether it left files. Of those whose
    key groups overlap a new subtask's, the base is the one with the largest overlap (the
    first of equals), so that the fewest entries are copied (Flink's choice); the others
    follow in old-subtask order.
    """
    old_ranges = [
        key_group_range(index, max_parallelism, len(holding)) for index in range(len(holding))
    ]
    sources = []
    for index in range(new_parallelism):
        owned = key_group_range(index, max_parallelism, new_parallelism)
        overlaps = {
            old: _overlap(old_range, owned)
            for old, old_range in enumerate(old_ranges)
            if holding[old] and _overlap(old_range, owned)
        }
        base = max(overlaps, key=overlaps.__getitem__) if overlaps else None
        others = tuple(old for old in overlaps if old != base)
        sources.append(NativeSources(owned, base, others))
    return sources


def _overlap(first: range, second: range) -> int:
    return max(0, min(first.stop, second.stop) - max(first.start, second.start))


def even_split(items: Sequence[Any], parts: int) -> list[list[Any]]:
    """Cut ``items`` into ``parts`` contiguous chunks; the first ``len % parts`` get one more."""
    size, extra = divmod(len(items), parts)
    bounds = [index * size + min(index, extra) for index in range(parts + 1)]
    return [list(items[bounds[index] : bounds[index + 1]]) for index in range(parts)]


def _channel_states(
    old: Sequence[OperatorSnapshot], new_parallelism: int
) -> Sequence[OperatorSnapshot]:
    if len(old) == new_parallelism:
        return old
    if any(snapshot.has_channel_state for snapshot in old):
        raise ValueError(
            f"operator '{old[0].uid}' holds in-flight records of an unaligned checkpoint taken "
            f"at parallelism {len(old)}; they cannot be restored at parallelism {new_parallelism}"
        )
    return [OperatorSnapshot(old[0].uid)] * new_parallelism


def _native_states(
    old: Sequence[OperatorSnapshot], new_parallelism: int
) -> list[NativeKeyedState | None]:
    if len(old) == new_parallelism:
        return [snapshot.native for snapshot in old]
    if any(snapshot.native is not None for snapshot in old):
        raise ValueError(
            f"operator '{old[0].uid}' holds keyed state as a backend's files, taken at "
            f"parallelism {len(old)}; read them into key groups to restore at parallelism "
            f"{new_parallelism}"
        )
    return [None] * new_parallelism


def _check(old: Sequence[OperatorSnapshot], new_parallelism: int, max_parallelism: int) -> str:
    if not old:
        raise ValueError("cannot redistribute state without the snapshots of the old subtasks")
    uids = {snapshot.uid for snapshot in old}
    if len(uids) > 1:
        raise ValueError(f"cannot redistribute snapshots of several operators together: {uids}")
    uid = old[0].uid
    if not 1 <= new_parallelism <= max_parallelism:
        raise ValueError(
            f"operator '{uid}' cannot restore at parallelism {new_parallelism}; "
            f"choose one from 1 to its max parallelism {max_parallelism}"
        )
    return uid


def _merge_key_groups(old: Sequence[OperatorSnapshot], max_parallelism: int) -> KeyGroups:
    merged: KeyGroups = {}
    for snapshot in old:
        for group, states in sharing_the_gil(snapshot.keyed.items(), every=1):
            _check_key_group(snapshot.uid, group, max_parallelism)
            for name, table in states.items():
                merged.setdefault(group, {}).setdefault(name, {}).update(table)
    return merged


def _check_key_group(uid: str, group: int, max_parallelism: int) -> None:
    if not 0 <= group < max_parallelism:
        raise ValueError(
            f"operator '{uid}' has state in key group {group}, outside 0..{max_parallelism - 1}; "
            "the max parallelism of an operator cannot change across a restore"
        )


def _owned(keyed: KeyGroups, groups: range) -> KeyGroups:
    return {
        group: {name: dict(table) for name, table in states.items()}
        for group, states in sharing_the_gil(keyed.items(), every=1)
        if group in groups
    }


def _concatenate(parts: Iterable[dict[str, list[Any]]]) -> dict[str, list[Any]]:
    joined: dict[str, list[Any]] = {}
    for states in parts:
        for name, items in states.items():
            joined.setdefault(name, []).extend(items)
    return joined


def _first_copies(parts: Iterable[dict[str, dict[Any, Any]]]) -> dict[str, dict[Any, Any]]:
    first: dict[str, dict[Any, Any]] = {}
    for states in parts:
        for name, entries in states.items():
            first.setdefault(name, entries)
    return first
