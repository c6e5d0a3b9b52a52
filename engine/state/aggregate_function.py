"""AggregateFunction: how an ``AggregatingState`` (or a window) folds values into a result."""

from __future__ import annotations

from typing import Generic, TypeVar

__all__ = ["AggregateFunction"]

IN = TypeVar("IN")
ACC = TypeVar("ACC")
OUT = TypeVar("OUT")


class AggregateFunction(Generic[IN, ACC, OUT]):
    """Folds values of type ``IN`` into an accumulator ``ACC`` and reads a result ``OUT``.

    Flink's contract: ``add`` and ``merge`` may change the accumulator they are given in
    place and return it, or return a new one. The state that holds an accumulator makes this
    safe for checkpoints: it gives ``add`` a deep copy of any accumulator a snapshot may still
    see, so a snapshot never changes after it is taken.
    """

    def create_accumulator(self) -> ACC:
        """Return a new, empty accumulator."""
        raise NotImplementedError(f"{type(self).__name__} must implement create_accumulator")

    def add(self, value: IN, accumulator: ACC) -> ACC:
        """Fold ``value`` into ``accumulator`` and return the accumulator."""
        raise NotImplementedError(f"{type(self).__name__} must implement add")

    def get_result(self, accumulator: ACC) -> OUT:
        """Return the result the accumulator stands for, without changing it."""
        raise NotImplementedError(f"{type(self).__name__} must implement get_result")

    def merge(self, a: ACC, b: ACC) -> ACC:
        """Return the accumulator holding everything ``a`` and ``b`` hold."""
        raise NotImplementedError(
            f"{type(self).__name__} must implement merge to be used where accumulators merge "
            "(session windows)"
        )

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"
