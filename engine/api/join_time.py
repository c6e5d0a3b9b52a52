"""Where a join's records get their event time: each input's own watermark strategy.

The one place joins read event time. Until records carry timestamps of their own, each
input of a join reads its records' event time with the timestamp assigner of the strategy
upstream of it, found as a window finds its own (through ``filter`` and partitioning,
which leave records unchanged). The two inputs may have different assigners: each side's
records are read with their own side's, so a window join reads ``PerInput(left, right)``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from lockgate.engine.errors import GraphError
from lockgate.engine.functions.two_inputs import PerInput

if TYPE_CHECKING:
    from lockgate.engine.api.stream import DataStream

__all__ = ["event_time_of_input", "event_time_of_inputs"]


def event_time_of_input(stream: DataStream[Any], side: str, label: str) -> Callable[[Any], float]:
    """The function that reads the event time of ``stream``'s records, one input of a join.

    Raises:
        GraphError: naming ``label`` (the join) and ``side``, when the records have no event
            time a join can read.
    """
    found = stream._upstream_timestamp()
    if isinstance(found, str):
        raise GraphError(
            f"{label} in event time needs its {side} input's event time, and {found}; for a "
            f"join, call assign_timestamps_and_watermarks() on the {side} input right before it"
        )
    return found


def event_time_of_inputs(left: DataStream[Any], right: DataStream[Any], label: str) -> PerInput:
    """The event time of a two-input operator's records: the left's, or the (marked) right's."""
    return PerInput(
        event_time_of_input(left, "left", label), event_time_of_input(right, "right", label)
    )
