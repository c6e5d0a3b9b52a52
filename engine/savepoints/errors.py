"""Errors of savepoints: values that cannot be written canonically, files that cannot be read.

```
EngineError                      (lockgate.engine.errors)
├── RestoreError
│   └── SavepointFormatError     a savepoint's bytes cannot be read as they are: damaged, a newer
│                                format version, an unregistered type, or a pickled value that
│                                was not unpickled because reading it would run code
└── SavepointEncodingError       a value has no canonical form: neither plain nor a registered
                                 type, and pickle was not allowed (also a ``TypeError``)
```
"""

from __future__ import annotations

from lockgate.engine.errors import EngineError, RestoreError

__all__ = ["SavepointEncodingError", "SavepointFormatError"]


class SavepointFormatError(RestoreError):
    """Savepoint bytes cannot be read; the message names the file and says what to do.

    Raised when reading a savepoint state file that is damaged or truncated, written in a
    format version this lockgate does not know, holds a type no ``TypeCodec`` is registered
    for, or carries a pickled value while pickle is not allowed (it is never unpickled then).
    """


class SavepointEncodingError(EngineError, TypeError):
    """A value cannot be written to a savepoint; the message names its type and what to do.

    Raised when writing a savepoint meets a value that is neither plain data nor of a
    registered type while pickle is not allowed; writing the state of an operator names its
    uid, the state and the key group too.
    """
