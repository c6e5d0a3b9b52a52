"""The names of lockgate's metrics, written once: fields, Flink's names, units, meanings.

Every metric that ``job.metrics()`` reports is a field of a dataclass in
``lockgate.engine.runtime.metrics`` named in snake case (``busy_time_ms_per_second``); its
``flink`` name is Apache Flink's (``busyTimeMsPerSecond``), which the Prometheus export
uses after a scope prefix (``lockgate_task_busyTimeMsPerSecond``). The simulation's report,
the REST API and the Prometheus export read these names from here, so that one metric has
one name everywhere. ``docs/reference/metrics.md`` lists every entry; a test holds the page
and this table together.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

__all__ = ["METRICS", "MetricKind", "MetricName", "MetricScope", "metric"]


class MetricScope(enum.Enum):
    """What one value of a metric describes, and the prefix of its Prometheus name."""

    JOB = "job"
    TASK = "task"  # one subtask of a chain of operators
    OPERATOR = "operator"  # one operator in one subtask


class MetricKind(enum.Enum):
    """How a metric's value behaves, and which Prometheus type it is exported as."""

    COUNTER = "counter"  # only grows during an attempt; exported with a _total suffix
    GAUGE = "gauge"  # a value now: a fill, a watermark, a count in flight
    RATE = "rate"  # per second over the rolling window (exported as a gauge)
    HISTOGRAM = "histogram"  # a distribution over the whole attempt


@dataclass(frozen=True, slots=True)
class MetricName:
    """One metric: its field in ``job.metrics()``, Flink's name, its unit and meaning.

    ``prometheus`` is the name the export writes: ``lockgate_<scope>_<flink>``.
    """

    field: str
    flink: str
    scope: MetricScope
    kind: MetricKind
    unit: str
    description: str

    @property
    def prometheus(self) -> str:
        """The Prometheus name: the scope's prefix, then Flink's name."""
        return f"lockgate_{self.scope.value}_{self.flink}"


_T, _O, _J = MetricScope.TASK, MetricScope.OPERATOR, MetricScope.JOB
_C, _G, _R, _H = MetricKind.COUNTER, MetricKind.GAUGE, MetricKind.RATE, MetricKind.HISTOGRAM

METRICS: tuple[MetricName, ...] = (
    MetricName("records_in", "numRecordsIn", _T, _C, "records", "records the subtask took in"),
    MetricName("records_out", "numRecordsOut", _T, _C, "records", "records the subtask sent on"),
    MetricName(
        "records_in_per_second",
        "numRecordsInPerSecond",
        _T,
        _R,
        "records/s",
        "records taken in per second, over the rolling window",
    ),
    MetricName(
        "records_out_per_second",
        "numRecordsOutPerSecond",
        _T,
        _R,
        "records/s",
        "records sent on per second, over the rolling window",
    ),
    MetricName(
        "bytes_in",
        "numBytesIn",
        _T,
        _C,
        "bytes",
        "the size of the records taken in, as the data plane pickles them (from samples)",
    ),
    MetricName(
        "bytes_out",
        "numBytesOut",
        _T,
        _C,
        "bytes",
        "the size of the records sent on, as the data plane pickles them (from samples)",
    ),
    MetricName(
        "bytes_in_per_second",
        "numBytesInPerSecond",
        _T,
        _R,
        "bytes/s",
        "bytes taken in per second, over the rolling window",
    ),
    MetricName(
        "bytes_out_per_second",
        "numBytesOutPerSecond",
        _T,
        _R,
        "bytes/s",
        "bytes sent on per second, over the rolling window",
    ),
    MetricName(
        "busy_time_ms_per_second",
        "busyTimeMsPerSecond",
        _T,
        _R,
        "ms/s",
        "time neither idle nor backpressured: running operators, writing to a sink",
    ),
    MetricName(
        "backpressured_time_ms_per_second",
        "backPressuredTimeMsPerSecond",
        _T,
        _R,
        "ms/s",
        "time waiting for room in a full output channel",
    ),
    MetricName(
        "idle_time_ms_per_second",
        "idleTimeMsPerSecond",
        _T,
        _R,
        "ms/s",
        "time waiting for input",
    ),
    MetricName(
        "busy_time",
        "accumulatedBusyTime",
        _T,
        _C,
        "s",
        "busy time since the attempt started",
    ),
    MetricName(
        "backpressured_time",
        "accumulatedBackpressuredTime",
        _T,
        _C,
        "s",
        "backpressured time since the attempt started",
    ),
    MetricName(
        "idle_time", "accumulatedIdleTime", _T, _C, "s", "idle time since the attempt started"
    ),
    MetricName(
        "mailbox_fill",
        "inPoolUsage",
        _T,
        _G,
        "0..1",
        "how full the subtask's input channels are together (0 for a source)",
    ),
    MetricName(
        "output_fill",
        "outPoolUsage",
        _T,
        _G,
        "0..1",
        "how full the channels the subtask sends to are together (0 for a sink)",
    ),
    MetricName(
        "input_buffered",
        "inputQueueLength",
        _T,
        _G,
        "records",
        "records waiting in the subtask's input channels",
    ),
    MetricName(
        "output_buffered",
        "outputQueueLength",
        _T,
        _G,
        "records",
        "records held in the subtask's output buffers, not yet sent",
    ),
    MetricName(
        "current_input_watermark",
        "currentInputWatermark",
        _T,
        _G,
        "event time",
        "the newest watermark the subtask took in; none before the first and after the last",
    ),
    MetricName(
        "current_output_watermark",
        "currentOutputWatermark",
        _T,
        _G,
        "event time",
        "the newest watermark the subtask sent on; none before the first and after the last",
    ),
    MetricName(
        "watermark_alignment_drift",
        "watermarkAlignmentDrift",
        _T,
        _G,
        "event time",
        "how far a source subtask's watermark is above its alignment group's; none unless aligned",
    ),
    MetricName(
        "split_watermarks",
        "currentSplitWatermark",
        _O,
        _G,
        "event time",
        "the watermark of each split of a source subtask that reads by split (label split); "
        "none while the split is idle or before its first",
    ),
    MetricName(
        "records_in", "numRecordsIn", _O, _C, "records", "records an operator of a chain took in"
    ),
    MetricName(
        "records_out",
        "numRecordsOut",
        _O,
        _C,
        "records",
        "records an operator of a chain sent on (its main output)",
    ),
    MetricName(
        "records_in_per_second",
        "numRecordsInPerSecond",
        _O,
        _R,
        "records/s",
        "records an operator took in per second, over the rolling window",
    ),
    MetricName(
        "records_out_per_second",
        "numRecordsOutPerSecond",
        _O,
        _R,
        "records/s",
        "records an operator sent on per second, over the rolling window",
    ),
    MetricName(
        "late_records_dropped",
        "numLateRecordsDropped",
        _O,
        _C,
        "records",
        "records a window or interval join operator dropped as late (no late-data side output)",
    ),
    MetricName(
        "side_output_records",
        "numSideOutputRecords",
        _O,
        _C,
        "records",
        "records sent to each read side output (label tag)",
    ),
    MetricName("capacity", "asyncCapacity", _O, _G, "records", "an async_map queue's capacity"),
    MetricName("in_flight", "asyncInFlight", _O, _G, "calls", "async_map calls running now"),
    MetricName(
        "queued",
        "asyncQueued",
        _O,
        _G,
        "records",
        "records in an async_map operator's queue (called, or with a result waiting its turn)",
    ),
    MetricName(
        "backlog", "asyncBacklog", _O, _G, "records", "records waiting outside the full queue"
    ),
    MetricName("calls", "asyncCalls", _O, _C, "calls", "async_map attempts started"),
    MetricName(
        "completed", "asyncCompleted", _O, _C, "records", "records whose call ended (or gave up)"
    ),
    MetricName("retries", "asyncRetries", _O, _C, "calls", "attempts after a failed one"),
    MetricName("timeouts", "asyncTimeouts", _O, _C, "calls", "attempts the timeout cut"),
    MetricName(
        "failures", "asyncFailures", _O, _C, "records", "records whose every attempt failed"
    ),
    MetricName(
        "latency",
        "asyncLatencySeconds",
        _O,
        _H,
        "s",
        "how long the async_map attempts that returned took, over the whole attempt",
    ),
    MetricName("attempt", "numRestarts", _J, _C, "restarts", "restarts of the job so far"),
    MetricName(
        "completed",
        "numberOfCompletedCheckpoints",
        _J,
        _C,
        "checkpoints",
        "checkpoints that completed",
    ),
    MetricName(
        "failed",
        "numberOfFailedCheckpoints",
        _J,
        _C,
        "checkpoints",
        "checkpoints that were aborted",
    ),
    MetricName(
        "in_progress",
        "numberOfInProgressCheckpoints",
        _J,
        _G,
        "checkpoints",
        "checkpoints triggered and not yet ended",
    ),
    MetricName(
        "duration",
        "lastCheckpointDuration",
        _J,
        _G,
        "s",
        "from the trigger to the completion of the latest completed checkpoint",
    ),
    MetricName(
        "state_size",
        "lastCheckpointSize",
        _J,
        _G,
        "bytes",
        "bytes the latest completed checkpoint wrote",
    ),
    MetricName(
        "alignment_duration",
        "lastCheckpointAlignmentDuration",
        _J,
        _G,
        "s",
        "the longest alignment of the latest completed checkpoint (first to last barrier)",
    ),
    MetricName(
        "start_delay",
        "lastCheckpointStartDelay",
        _J,
        _G,
        "s",
        "the longest wait from the trigger to a subtask's first barrier",
    ),
    MetricName(
        "sync_duration",
        "lastCheckpointSyncDuration",
        _J,
        _G,
        "s",
        "the longest synchronous part (the copy taken on the event loop)",
    ),
    MetricName(
        "async_duration",
        "lastCheckpointAsyncDuration",
        _J,
        _G,
        "s",
        "the longest asynchronous part (encoding and writing, off the event loop)",
    ),
    MetricName(
        "persisted_in_flight",
        "lastCheckpointPersistedData",
        _J,
        _G,
        "bytes",
        "bytes of in-flight records (channel state) the latest completed checkpoint stored",
    ),
    MetricName(
        "unaligned",
        "lastCheckpointUnaligned",
        _J,
        _G,
        "0 or 1",
        "whether any subtask took the latest completed checkpoint unaligned",
    ),
)
"""Every metric, task scope first, then operator and job scope."""

_BY_FIELD = {(name.scope, name.field): name for name in METRICS}


def metric(scope: MetricScope, field: str) -> MetricName:
    """The metric of ``scope`` whose field in ``job.metrics()`` is ``field``.

    Raises:
        KeyError: naming the field and scope, when no metric has them.
    """
    try:
        return _BY_FIELD[scope, field]
    except KeyError:
        raise KeyError(f"no {scope.value} metric has the field '{field}'") from None
