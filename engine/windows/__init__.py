"""Windows: assigners, triggers, evictors and window functions for ``keyed.window(...)``.

``WindowedStream`` (what ``window()`` returns) lives in ``lockgate.engine.api.windowed``,
which this package does not import: the job graph imports the window spec from here.
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
from lockgate.engine.windows.evictors import (
    CountEvictor,
    DeltaEvictor,
    Evictor,
    EvictorContext,
    TimeEvictor,
    TimestampedValue,
)
from lockgate.engine.windows.functions import ProcessWindowFunction, WindowContext
from lockgate.engine.windows.trigger import OnMergeContext, Trigger, TriggerContext, TriggerResult
from lockgate.engine.windows.triggers import (
    ContinuousEventTimeTrigger,
    CountTrigger,
    EventTimeTrigger,
    ProcessingTimeTrigger,
    PurgingTrigger,
)
from lockgate.engine.windows.window_state import WindowScopedStates

__all__ = [
    "ContinuousEventTimeTrigger",
    "CountEvictor",
    "CountTrigger",
    "DeltaEvictor",
    "EventTimeSessionWindows",
    "EventTimeTrigger",
    "Evictor",
    "EvictorContext",
    "GlobalWindow",
    "GlobalWindows",
    "OnMergeContext",
    "ProcessWindowFunction",
    "ProcessingTimeSessionWindows",
    "ProcessingTimeTrigger",
    "PurgingTrigger",
    "SlidingEventTimeWindows",
    "SlidingProcessingTimeWindows",
    "TimeEvictor",
    "TimeWindow",
    "TimestampedValue",
    "Trigger",
    "TriggerContext",
    "TriggerResult",
    "TumblingEventTimeWindows",
    "TumblingProcessingTimeWindows",
    "WindowAssigner",
    "WindowContext",
    "WindowScopedStates",
]
