"""Control messages every actor understands."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["StopActor"]


@dataclass(frozen=True, slots=True)
class StopActor:
    """Control message: finish the message in hand, then stop.

    It travels on the control inbox, so it overtakes queued data messages.
    """
