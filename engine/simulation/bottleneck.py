"""The bottleneck of a run: a busy operator whose upstream is backpressured (Flink's rule).

Pure: it reads how each chain spent the run and which chains feed it, nothing else.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["BACKPRESSURED", "Bottleneck", "ChainLoad", "find_bottleneck"]

BACKPRESSURED = 0.5
"""A chain is backpressured when it waits for room downstream more than this share of the
time: Flink's HIGH."""


@dataclass(frozen=True, slots=True)
class ChainLoad:
    """How one chain's subtasks spent the run, on average, and the chains that feed it."""

    chain_id: int
    chain: str
    uids: tuple[str, ...]
    busy: float
    backpressured: float
    idle: float
    upstream: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Bottleneck:
    """The chain that limits the job: busy, not backpressured, and its input backpressured.

    ``upstream`` names the chains that feed it and are backpressured, the most so first;
    the queues build in the channels from them.
    """

    chain: str
    uids: tuple[str, ...]
    busy_ratio: float
    upstream: tuple[str, ...]
    upstream_backpressured_ratio: float

    def describe(self) -> str:
        """One sentence: which operators, how busy, and whose backpressure shows it."""
        operators = ", ".join(f"'{uid}'" for uid in self.uids)
        feeding = ", ".join(f"'{chain}'" for chain in self.upstream)
        return (
            f"{operators} (chain '{self.chain}'): busy {self.busy_ratio:.1%} of the time while "
            f"{feeding} upstream is backpressured {self.upstream_backpressured_ratio:.1%}"
        )


def find_bottleneck(loads: Sequence[ChainLoad]) -> tuple[Bottleneck | None, str]:
    """The bottleneck among ``loads`` and why it is one; ``None`` and why there is none.

    A candidate is a chain that is not backpressured itself while a chain feeding it is:
    the first operator downstream of the backpressure that keeps up no better. Of several,
    the busiest is the bottleneck (the lower chain id on a tie).
    """
    by_id = {load.chain_id: load for load in loads}
    candidates = [
        (load, pressed)
        for load in loads
        if load.backpressured <= BACKPRESSURED and (pressed := _backpressured_inputs(load, by_id))
    ]
    if not candidates:
        return None, _why_none(loads)
    load, pressed = max(candidates, key=lambda found: (found[0].busy, -found[0].chain_id))
    bottleneck = Bottleneck(
        load.chain,
        load.uids,
        load.busy,
        tuple(upstream.chain for upstream in pressed),
        pressed[0].backpressured,
    )
    return bottleneck, f"the bottleneck is {bottleneck.describe()}"


def _backpressured_inputs(load: ChainLoad, by_id: dict[int, ChainLoad]) -> list[ChainLoad]:
    inputs = [by_id[chain_id] for chain_id in load.upstream]
    pressed = [upstream for upstream in inputs if upstream.backpressured > BACKPRESSURED]
    return sorted(pressed, key=lambda upstream: (-upstream.backpressured, upstream.chain_id))


def _why_none(loads: Sequence[ChainLoad]) -> str:
    if not any(load.upstream for load in loads):
        return (
            "no bottleneck can be named: every operator runs in one chain, with no channel "
            "between them to show backpressure; break the chain with disable_chaining() or "
            "start_new_chain() before the operators to compare"
        )
    if not any(load.backpressured > BACKPRESSURED for load in loads):
        return (
            f"no bottleneck: no operator is backpressured more than {BACKPRESSURED:.0%} of the "
            "time, so the job keeps up with its input"
        )
    return (
        "no bottleneck can be named: the backpressured operators feed only operators that "
        "are backpressured themselves"
    )
