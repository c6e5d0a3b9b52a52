"""apply_increments: rebuild a subtask's whole state from a full snapshot and its deltas."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from lockgate.engine.checkpointing.snapshots import OperatorSnapshot

__all__ = ["apply_increments"]


def apply_increments(chain: Sequence[OperatorSnapshot]) -> OperatorSnapshot:
    """Return the state the last snapshot of ``chain`` stands for, as one full snapshot.

    ``chain`` starts with a full snapshot and goes on with incremental ones, oldest first,
    each building on the one before: keyed entries are upserted and deleted in order. The
    operator's other state (lists, unions, broadcast) and its kinds are the last one's.

    Raises:
        ValueError: ``chain`` is empty or does not start with a full snapshot.
    """
    if not chain or chain[0].is_delta:
        raise ValueError(
            "an incremental snapshot must build on a full one; the chain of files is broken"
        )
    keyed = {
        group: {name: dict(table) for name, table in states.items()}
        for group, states in chain[0].keyed.items()
    }
    for delta in chain[1:]:
        for group, states in delta.keyed.items():
            for name, table in states.items():
                keyed.setdefault(group, {}).setdefault(name, {}).update(table)
        for group, removed in delta.deleted.items():
            for name, keys in removed.items():
                table = keyed.get(group, {}).get(name, {})
                for key in keys:
                    table.pop(key, None)
    last = chain[-1]
    return replace(last, keyed=_without_empty(keyed), deleted={}, is_delta=False)


def _without_empty(
    keyed: dict[int, dict[str, dict[object, object]]],
) -> dict[int, dict[str, dict[object, object]]]:
    cleaned = {
        group: {name: table for name, table in states.items() if table}
        for group, states in keyed.items()
    }
    return {group: states for group, states in cleaned.items() if states}
