"""lockgate.engine: the DataStream API, planning, and the runtime that executes jobs.

Build a job on a ``StreamEnvironment`` with ``from_source`` and the stream methods, end every
stream with ``sink_to``, then ``await env.execute(name)`` or ``async with env.start(name)``.
"""

from lockgate.engine.api.broadcast import BroadcastConnectedStream, BroadcastStream
from lockgate.engine.api.client import JobClient, JobResult
from lockgate.engine.api.connected import ConnectedStreams
from lockgate.engine.api.data_stream_sink import DataStreamSink
from lockgate.engine.api.environment import StreamEnvironment
from lockgate.engine.api.interval_join import IntervalJoin, IntervalJoined
from lockgate.engine.api.job_status import JobStatus
from lockgate.engine.api.joined import (
    CoGroupedStreams,
    JoinedStreams,
    WindowedCoGroup,
    WindowedJoin,
)
from lockgate.engine.api.run import run
from lockgate.engine.api.stream import DataStream, KeyedStream
from lockgate.engine.api.windowed import WindowedStream
from lockgate.engine.checkpointing.completed import CompletedCheckpoint
from lockgate.engine.checkpointing.config import CheckpointConfig, CheckpointingMode
from lockgate.engine.checkpointing.messages import CheckpointFailureReason
from lockgate.engine.checkpointing.storage import (
    CheckpointStorage,
    FileSystemCheckpointStorage,
    MemoryCheckpointStorage,
)
from lockgate.engine.errors import (
    AsyncioRequired,
    CheckpointError,
    EngineError,
    ExecutorError,
    GraphError,
    IncompatibleState,
    JobError,
    KeySelectorError,
    OperatorError,
    QueryStateError,
    RestoreError,
    SavepointEncodingError,
    SavepointFormatError,
    SourceError,
    StateEncodingError,
    WorkerLost,
)
from lockgate.engine.events import CheckpointBarrier, EndOfInput, Watermark, WatermarkStatus
from lockgate.engine.functions.async_function import AsyncFunction
from lockgate.engine.functions.async_io import AsyncRetry
from lockgate.engine.functions.broadcast import (
    BroadcastContext,
    KeyedBroadcastProcessFunction,
    ReadOnlyBroadcastContext,
    ReadOnlyMapState,
)
from lockgate.engine.functions.joins import CoGroupFunction, FlatJoinFunction, JoinFunction
from lockgate.engine.functions.process import (
    CheckpointedFunction,
    FunctionInitializationContext,
    FunctionSnapshotContext,
    KeyedCoProcessFunction,
    KeyedProcessFunction,
    ProcessContext,
    RuntimeContext,
)
from lockgate.engine.functions.process_join import ProcessJoinContext, ProcessJoinFunction
from lockgate.engine.functions.side_outputs import OutputTag
from lockgate.engine.functions.timers import TimeDomain, TimerService
from lockgate.engine.graph.planning import ExecutionPlan, OperatorChain
from lockgate.engine.io.sinks import (
    Sink,
    SinkContext,
    SinkWriter,
    TwoPhaseCommitSink,
    TwoPhaseCommitWriter,
)
from lockgate.engine.io.sources import (
    Source,
    SourceContext,
    SourceProgress,
    SourceReader,
    SourceSplit,
    SplitRecords,
)
from lockgate.engine.restore.compatibility import RestoreReport, check_restore
from lockgate.engine.restore.reader import OperatorContents, SnapshotContents, read_snapshot
from lockgate.engine.runtime.executors.executor import Executor
from lockgate.engine.runtime.executors.local import LocalExecutor
from lockgate.engine.runtime.executors.processes import ExecutorStatistics, ProcessExecutor
from lockgate.engine.runtime.job.event_subscription import EventSubscription
from lockgate.engine.runtime.job.lifecycle import (
    CheckpointCompleted,
    CheckpointFailed,
    EventsDropped,
    JobCanceled,
    JobEvent,
    JobFailed,
    JobFailure,
    JobFinished,
    JobRestarting,
    JobStarted,
    RestoredFromCheckpoint,
)
from lockgate.engine.runtime.job.restart import RestartStrategy
from lockgate.engine.runtime.metrics import (
    AsyncIoMetrics,
    JobMetrics,
    OperatorMetrics,
    SubtaskMetrics,
)
from lockgate.engine.savepoints.values import TypeCodec, TypedValue
from lockgate.engine.state import (
    AggregateFunction,
    AggregatingState,
    AggregatingStateDescriptor,
    ListState,
    ListStateDescriptor,
    MapState,
    MapStateDescriptor,
    OperatorStateStore,
    ReducingState,
    ReducingStateDescriptor,
    ValueState,
    ValueStateDescriptor,
)
from lockgate.engine.state.key_groups import key_group_for, stable_hash, subtask_for_key_group
from lockgate.engine.time.clock import Clock, ManualClock, SystemClock
from lockgate.engine.time.generators import (
    BoundedOutOfOrdernessWatermarks,
    WatermarkGenerator,
    WatermarkGeneratorContext,
    WatermarkOutput,
)
from lockgate.engine.time.watermarks import WatermarkAlignment, WatermarkStrategy
from lockgate.engine.windows import (
    ContinuousEventTimeTrigger,
    CountEvictor,
    CountTrigger,
    DeltaEvictor,
    EventTimeSessionWindows,
    EventTimeTrigger,
    Evictor,
    EvictorContext,
    GlobalWindow,
    GlobalWindows,
    OnMergeContext,
    ProcessingTimeSessionWindows,
    ProcessingTimeTrigger,
    ProcessWindowFunction,
    PurgingTrigger,
    SlidingEventTimeWindows,
    SlidingProcessingTimeWindows,
    TimeEvictor,
    TimestampedValue,
    TimeWindow,
    Trigger,
    TriggerContext,
    TriggerResult,
    TumblingEventTimeWindows,
    TumblingProcessingTimeWindows,
    WindowAssigner,
    WindowContext,
    WindowScopedStates,
)

__all__ = [
    "Executor",
    "ExecutorError",
    "ExecutorStatistics",
    "LocalExecutor",
    "ProcessExecutor",
    "WorkerLost",
    "BoundedOutOfOrdernessWatermarks",
    "BroadcastConnectedStream",
    "BroadcastContext",
    "BroadcastStream",
    "KeyedBroadcastProcessFunction",
    "ReadOnlyBroadcastContext",
    "ReadOnlyMapState",
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
    "ProcessingTimeSessionWindows",
    "ProcessingTimeTrigger",
    "ProcessWindowFunction",
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
    "WindowedStream",
    "JoinedStreams",
    "CoGroupedStreams",
    "WindowedJoin",
    "WindowedCoGroup",
    "JoinFunction",
    "FlatJoinFunction",
    "CoGroupFunction",
    "IntervalJoin",
    "IntervalJoined",
    "ProcessJoinFunction",
    "ProcessJoinContext",
    "OperatorContents",
    "RestoreReport",
    "SavepointEncodingError",
    "SavepointFormatError",
    "SnapshotContents",
    "check_restore",
    "read_snapshot",
    "TypeCodec",
    "TypedValue",
    "AggregateFunction",
    "AsyncFunction",
    "AsyncIoMetrics",
    "AsyncRetry",
    "AggregatingState",
    "AggregatingStateDescriptor",
    "CheckpointedFunction",
    "FunctionInitializationContext",
    "FunctionSnapshotContext",
    "ListState",
    "ListStateDescriptor",
    "MapState",
    "MapStateDescriptor",
    "OperatorStateStore",
    "ReducingState",
    "ReducingStateDescriptor",
    "CheckpointConfig",
    "CheckpointError",
    "CheckpointFailureReason",
    "CheckpointStorage",
    "CheckpointingMode",
    "CompletedCheckpoint",
    "FileSystemCheckpointStorage",
    "MemoryCheckpointStorage",
    "RestartStrategy",
    "IncompatibleState",
    "RestoreError",
    "TimeDomain",
    "TimerService",
    "TwoPhaseCommitSink",
    "TwoPhaseCommitWriter",
    "CheckpointBarrier",
    "Clock",
    "ConnectedStreams",
    "DataStream",
    "DataStreamSink",
    "EndOfInput",
    "EngineError",
    "AsyncioRequired",
    "ExecutionPlan",
    "GraphError",
    "JobClient",
    "JobError",
    "JobMetrics",
    "JobResult",
    "JobStatus",
    "JobEvent",
    "JobStarted",
    "RestoredFromCheckpoint",
    "CheckpointCompleted",
    "CheckpointFailed",
    "JobRestarting",
    "JobFinished",
    "JobFailed",
    "JobCanceled",
    "EventsDropped",
    "EventSubscription",
    "JobFailure",
    "KeyedCoProcessFunction",
    "KeyedProcessFunction",
    "KeyedStream",
    "ManualClock",
    "OperatorChain",
    "OperatorMetrics",
    "KeySelectorError",
    "OperatorError",
    "OutputTag",
    "QueryStateError",
    "ProcessContext",
    "RuntimeContext",
    "Sink",
    "SinkContext",
    "SinkWriter",
    "Source",
    "SourceContext",
    "SourceProgress",
    "SourceError",
    "StateEncodingError",
    "SourceReader",
    "SourceSplit",
    "SplitRecords",
    "StreamEnvironment",
    "SubtaskMetrics",
    "SystemClock",
    "ValueState",
    "ValueStateDescriptor",
    "Watermark",
    "WatermarkAlignment",
    "WatermarkGenerator",
    "WatermarkGeneratorContext",
    "WatermarkOutput",
    "WatermarkStatus",
    "WatermarkStrategy",
    "key_group_for",
    "run",
    "stable_hash",
    "subtask_for_key_group",
]
