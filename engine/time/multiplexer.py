"""WatermarkOutputMultiplexer: one watermark out of several (a source subtask's splits) ☐.

Flink's ``WatermarkOutputMultiplexer`` with ``CombinedWatermarkStatus``: each registered
output (a split) has its own watermark and idleness; the combined watermark is the minimum
over the active outputs, and only goes up; the combined stream is idle while every output
is. An output is *immediate* (each change may pass a new combined watermark on at once: a
punctuated generator's) or *deferred* (``deferred=True``: changes wait for ``update``, as
periodic emission gathers every split's before combining them). Pure: each call returns
what to pass on downstream, in order.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from lockgate.engine.events import Watermark, WatermarkStatus

__all__ = ["CombinedOutput", "WatermarkOutputMultiplexer"]

CombinedOutput = Watermark | WatermarkStatus
"""What a change of the combined output passes on: a new watermark, or a new status."""

_IDLE, _ACTIVE = WatermarkStatus(idle=True), WatermarkStatus(idle=False)


@dataclass(slots=True)
class _Partial:
    watermark: float = -math.inf
    idle: bool = False


class WatermarkOutputMultiplexer:
    """Combines the watermarks and idleness of named outputs into one.

    Invariants: the combined watermark is the minimum over the registered outputs that are
    not idle, and never goes back (a lower minimum emits nothing); an output's watermark
    never goes back either; emitting on an output marks it active (as in Flink); the
    combined output is idle exactly while every registered output is, and an output that is
    unregistered (a finished split) no longer counts. With no output registered nothing is
    emitted.
    """

    __slots__ = ("_combined", "_idle", "_outputs")

    def __init__(self) -> None:
        self._outputs: dict[str, _Partial] = {}
        self._combined = -math.inf
        self._idle = False

    @property
    def combined(self) -> float:
        """The last combined watermark passed on (``-inf`` before the first)."""
        return self._combined

    @property
    def idle(self) -> bool:
        """Whether the combined output is idle now."""
        return self._idle

    @property
    def outputs(self) -> dict[str, float | None]:
        """Each registered output's watermark, ``None`` while it is idle."""
        return {key: None if p.idle else p.watermark for key, p in self._outputs.items()}

    def register(self, output: str) -> None:
        """Add ``output``, active, without a watermark: it holds the combined one back."""
        if output in self._outputs:
            raise ValueError(f"watermark output '{output}' is registered already")
        self._outputs[output] = _Partial()

    def unregister(self, output: str) -> list[CombinedOutput]:
        """Remove ``output`` (its split finished): it no longer holds the others back."""
        if self._outputs.pop(output, None) is None:
            return []
        return self.update()

    def emit(
        self, output: str, timestamp: float, *, deferred: bool = False
    ) -> list[CombinedOutput]:
        """``output`` emitted a watermark at ``timestamp`` (and is active)."""
        partial = self._outputs[output]
        woke, partial.idle = partial.idle, False
        if timestamp > partial.watermark:
            partial.watermark = timestamp
        elif not woke:
            return []
        return [] if deferred else self.update()

    def mark_idle(self, output: str, *, deferred: bool = False) -> list[CombinedOutput]:
        """``output`` is idle: it no longer holds the combined watermark back."""
        partial = self._outputs[output]
        if partial.idle:
            return []
        partial.idle = True
        return [] if deferred else self.update()

    def mark_active(self, output: str, *, deferred: bool = False) -> list[CombinedOutput]:
        """``output`` counts again, with the watermark it had."""
        partial = self._outputs[output]
        if not partial.idle:
            return []
        partial.idle = False
        return [] if deferred else self.update()

    def update(self) -> list[CombinedOutput]:
        """Combine the outputs as they are now (after deferred changes); return what changed."""
        if not self._outputs:  # every split finished: nothing to combine (the end is near)
            return []
        active = [p.watermark for p in self._outputs.values() if not p.idle]
        changes: list[CombinedOutput] = []
        idle = not active
        if idle != self._idle:
            self._idle = idle
            changes.append(_IDLE if idle else _ACTIVE)
        if active and (lowest := min(active)) > self._combined:
            self._combined = lowest
            changes.append(Watermark(lowest))
        return changes

    def __repr__(self) -> str:
        return (
            f"<WatermarkOutputMultiplexer combined={self._combined} idle={self._idle} "
            f"{self.outputs}>"
        )
