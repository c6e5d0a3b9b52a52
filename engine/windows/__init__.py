"""Windows: assigners, triggers and window functions for ``keyed.window(...)``.

``WindowedStream`` (what ``window()`` returns) lives in ``windowed_stream``, which this
package does not import: the job graph imports the window spec from here.
"""

from lockgate.engine.windows.assigners import (
    EventTimeSessionWindows,
    GlobalWindow,
    GlobalWindows,
    ProcessingTimeSessionWindows,
    SlidingEventTimeWindows,
    SlidingProcessingTimeWindows,
    TimeWindow,
    TumblingEventTimeWindows,
    TumblingProcessingTimeWindows,
    WindowAssigner,
)
from lockgate.engine.windows.functions import ProcessWindowFunction, WindowContext
from lockgate.engine.windows.triggers import (
    CountTrigger,
    EventTimeTrigger,
    ProcessingTimeTrigger,
    PurgingTrigger,
    Trigger,
)

__all__ = [
    "CountTrigger",
    "EventTimeSessionWindows",
    "EventTimeTrigger",
    "GlobalWindow",
    "GlobalWindows",
    "ProcessWindowFunction",
    "ProcessingTimeSessionWindows",
    "ProcessingTimeTrigger",
    "PurgingTrigger",
    "SlidingEventTimeWindows",
    "SlidingProcessingTimeWindows",
    "TimeWindow",
    "Trigger",
    "TumblingEventTimeWindows",
    "TumblingProcessingTimeWindows",
    "WindowAssigner",
    "WindowContext",
]
