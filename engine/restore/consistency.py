"""State files that contradict the metadata naming them: a damaged checkpoint, refused by name.

A state file passes its checksum and still may not fit its metadata: it holds another
operator's state, key groups the metadata's max_parallelism does not have, or a delta with
no full snapshot to build on. Each is a ``RestoreError`` naming the file, raised before the
state reaches an operator.
"""

from __future__ import annotations

from collections.abc import Sequence

from lockgate.engine.checkpointing.snapshots import OperatorSnapshot
from lockgate.engine.errors import RestoreError

__all__ = ["check_chain", "check_state_file"]

_INSTEAD = "the snapshot is damaged; restore an older checkpoint or a savepoint instead"


def check_state_file(
    snapshot: OperatorSnapshot, *, uid: str, location: str, max_parallelism: int
) -> None:
    """Raise ``RestoreError`` unless ``snapshot``, read from ``location``, fits its metadata.

    It fits when it is state of the operator ``uid`` the metadata files it under, and every
    key group it holds is one of ``0..max_parallelism - 1``.
    """
    if snapshot.uid != uid:
        raise RestoreError(
            f"state file {location} is inconsistent with its metadata: the metadata names it "
            f"as state of operator '{uid}', but it holds state of operator '{snapshot.uid}'; "
            f"{_INSTEAD}"
        )
    outside = sorted(group for group in snapshot.keyed if not 0 <= group < max_parallelism)
    if outside:
        raise RestoreError(
            f"state file {location} of operator '{uid}' is inconsistent with its metadata: "
            f"it holds state in key group {outside[0]}, but the metadata's max_parallelism "
            f"{max_parallelism} makes key groups 0..{max_parallelism - 1}; {_INSTEAD}"
        )


def check_chain(chain: Sequence[OperatorSnapshot], *, location: str) -> None:
    """Raise ``RestoreError`` unless the chain of files behind ``location`` starts full.

    ``chain`` is the state file at ``location`` preceded by the files it builds on, oldest
    first; an incremental snapshot needs a full one at the start.
    """
    if chain[0].is_delta:
        raise RestoreError(
            f"state file {location} is inconsistent with its metadata: it is an incremental "
            "snapshot, and the files the metadata gives it to build on do not start with a "
            f"full snapshot; {_INSTEAD}"
        )
