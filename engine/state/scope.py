"""StateScope: what a state handle needs from the store it belongs to."""

from __future__ import annotations

from typing import Any, Protocol

__all__ = ["StateScope"]


class StateScope(Protocol):
    """The key that state handles read and write, and the epoch that owns in-place writes.

    A ``KeyedStateStore`` is a scope whose key changes per record; an ``OperatorStateStore``
    is a scope with one fixed key (``None``), so operator list and broadcast state reuse the
    keyed ``ListState`` and ``MapState``.
    """

    @property
    def current_key(self) -> Any:
        """The key whose state handles read and write now."""

    @property
    def epoch(self) -> int:
        """The snapshot epoch: entries made in it may be changed in place."""

    def note_copy(self) -> None:
        """Count one container copied because a snapshot could still see it."""
