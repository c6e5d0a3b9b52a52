"""SharedStateRegistry: which retained checkpoints reference which shared files."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from lockgate.engine.checkpointing.messages import StateHandle
from lockgate.engine.checkpointing.metadata import CheckpointMetadata

__all__ = ["SharedStateRegistry", "shared_files"]


def shared_files(metadata: CheckpointMetadata) -> Iterator[StateHandle]:
    """Every file of ``metadata`` that lives in the shared folder, once per reference."""
    for operator in metadata.operators.values():
        for handle in operator.handles:
            if handle is not None:
                yield from handle.shared_files


class SharedStateRegistry:
    """Counts, per shared file, the retained checkpoints that reference it.

    Invariant: a file is handed out for deletion exactly when the last checkpoint that
    referenced it was released, and never while a registered checkpoint still uses it.
    It does no I/O: the coordinator deletes what ``release`` returns.
    """

    def __init__(self) -> None:
        self._references: dict[str, int] = {}
        self._handles: dict[str, StateHandle] = {}
        self._registered: dict[int, tuple[str, ...]] = {}

    def register(self, metadata: CheckpointMetadata) -> None:
        """Count the references of a checkpoint that is now retained (once per id)."""
        if metadata.checkpoint_id in self._registered:
            return
        locations = tuple(dict.fromkeys(handle.location for handle in shared_files(metadata)))
        for handle in shared_files(metadata):
            self._handles.setdefault(handle.location, handle.plain())
        for location in locations:
            self._references[location] = self._references.get(location, 0) + 1
        self._registered[metadata.checkpoint_id] = locations

    def release(self, checkpoint_id: int) -> list[StateHandle]:
        """Drop a checkpoint's references; return the files no retained checkpoint uses now."""
        unused = []
        for location in self._registered.pop(checkpoint_id, ()):
            self._references[location] -= 1
            if self._references[location] == 0:
                del self._references[location]
                unused.append(self._handles.pop(location))
        return unused

    def unreferenced(self, handles: Iterable[StateHandle]) -> list[StateHandle]:
        """Those of ``handles`` (of an aborted checkpoint) that no retained checkpoint uses."""
        return [h.plain() for h in handles if h.location not in self._references]

    def is_registered(self, checkpoint_id: int) -> bool:
        """Whether checkpoint ``checkpoint_id`` is registered (retained) now."""
        return checkpoint_id in self._registered

    def is_referenced(self, location: str) -> bool:
        """Whether a retained checkpoint uses the shared file at ``location``."""
        return location in self._references

    def __repr__(self) -> str:
        return (
            f"SharedStateRegistry(checkpoints={sorted(self._registered)}, "
            f"files={len(self._references)})"
        )
