"""Whether a join's inputs have event time: each side needs a watermark strategy upstream.

A join in event time reads the timestamps its records carry, given by the watermark
strategy upstream of each input (the two inputs may have different strategies, each
stamping its own records). One input without any would leave its records with no time to
join by, so the join is refused while the job is built, naming the side.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lockgate.engine.errors import GraphError

if TYPE_CHECKING:
    from lockgate.engine.api.stream import DataStream

__all__ = ["check_event_time_of_inputs"]


def check_event_time_of_inputs(left: DataStream[Any], right: DataStream[Any], label: str) -> None:
    """Raise ``GraphError`` naming ``label`` (the join) and the side that has no event time."""
    for side, stream in (("left", left), ("right", right)):
        problem = stream._event_time_problem()
        if problem is not None:
            raise GraphError(
                f"{label} in event time needs its {side} input's event time: {problem}"
            )
