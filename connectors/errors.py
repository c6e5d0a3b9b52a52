"""Errors of the connectors.

```
EngineError                   lockgate.engine.errors
└── ConnectorError            root of every error a connector raises
    ├── InvalidSplit          a reader got a split its source never made: a malformed or
    │                         out-of-range position, or an input that changed since the
    │                         checkpoint (also a lockgate.engine.errors.SourceError)
    ├── InputNotFound         a source's input is missing, e.g. no file at a path
    ├── UndecodableInput      input bytes are not text in the encoding the source was given
    └── UnencodableRecord     a sink cannot encode a record in its format, e.g. as JSON
```

Connector options that make no sense (an unknown format, a parallelism below one) raise
``ValueError`` when the connector is built, before any record flows.
"""

from __future__ import annotations

from lockgate.engine.errors import EngineError, SourceError

__all__ = [
    "ConnectorError",
    "InputNotFound",
    "InvalidSplit",
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
