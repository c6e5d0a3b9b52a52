"""Errors of the connectors.

```
EngineError                   lockgate.engine.errors
└── ConnectorError            root of every error a connector raises
    ├── InvalidSplit          a reader got a split its source never made: a malformed or
    │                         out-of-range position, or an input that changed since the
    │                         checkpoint (also a lockgate.engine.errors.SourceError)
    ├── InputNotFound         a source's input is missing, e.g. no file at a path
    ├── UndecodableInput      input bytes are not text in the encoding the source was given
    ├── UnencodableRecord     a sink cannot encode a record in its format, e.g. as JSON
    ├── IngressFull           send_nowait found an IngressSource full, or no job reading it
    ├── IngressClosed         a send to an IngressSource whose input was ended (close())
    ├── IngressNotCommitted   a wait_for_commit send whose attempt ended before a completed
    │                         checkpoint covered the record
    └── SubscriberTooSlow     a CommittedSink subscriber fell behind its buffer and was
                              dropped (on_overflow="drop")
```

Connector options that make no sense (an unknown format, a parallelism below one) raise
``ValueError`` when the connector is built, before any record flows.
"""

from __future__ import annotations

from lockgate.engine.errors import EngineError, SourceError

__all__ = [
    "ConnectorError",
    "IngressClosed",
    "IngressFull",
    "IngressNotCommitted",
    "InputNotFound",
    "InvalidSplit",
    "SubscriberTooSlow",
    "UndecodableInput",
    "UnencodableRecord",
]


class ConnectorError(EngineError):
    """Root of every error raised by lockgate.connectors."""


class InvalidSplit(ConnectorError, SourceError):
    """A reader was given a split its source cannot resume from.

    Either the position is not one this source writes (a snapshot of another source, or a
    savepoint edited by hand), or the input changed since the position was taken.
    """


class InputNotFound(ConnectorError):
    """A source's input does not exist; the message names it. The OS error is ``__cause__``."""


class UndecodableInput(ConnectorError):
    """Input bytes are not valid text in the source's encoding; the message says where."""


class UnencodableRecord(ConnectorError):
    """A sink was given a record it cannot encode in its format.

    The message names the sink and subtask; the encoder's error is ``__cause__``.
    """


class IngressFull(ConnectorError):
    """``IngressSource.send_nowait`` could not accept a record now.

    Either ``capacity`` records wait for the job to read them (it is backpressured), or no
    job reads the ingress (it has not started, or it is restarting). ``await send()`` waits
    instead.
    """


class IngressClosed(ConnectorError):
    """A record was sent to an ``IngressSource`` after ``close()`` ended its input."""


class IngressNotCommitted(ConnectorError):
    """A record sent with ``wait_for_commit`` is not known to be committed.

    The job's attempt that read it ended (it failed, restarted, stopped or was cancelled)
    before a completed checkpoint covered it. The record is still held, so a restarted
    attempt may yet reflect it: send it again with the same ``idempotency_key`` to have it
    counted once, or answer the client with an error.
    """


class SubscriberTooSlow(ConnectorError):
    """A ``CommittedSink`` subscription with ``on_overflow="drop"`` fell behind and was dropped.

    Its buffer was full when more records committed. It yielded every record committed
    before them and none after; subscribe again to read on (``from_beginning=True`` re-reads
    what the sink keeps), with a larger ``buffer``, or with ``on_overflow="backpressure"``.
    """
