"""Sources and sinks for lockgate jobs.

Each connector documents its delivery guarantee. Today:

| Connector          | Kind   | Guarantee                                                        |
|--------------------|--------|------------------------------------------------------------------|
| `CollectionSource` | source | replayable by index: exactly-once reads on restore               |
| `FileSource`       | source | replayable by byte offset: exactly-once reads on restore         |
| `CollectSink`      | sink   | exactly-once: two-phase commit, visible when checkpoints complete |
| `PrintSink`        | sink   | standard output, for debugging; at-least-once across restarts    |
| `FileSink`         | sink   | append to a part file per subtask; at-least-once for now         |

A replayable source rewinds to the positions in the restored checkpoint, so each record is
read once into the job's state. End-to-end exactly-once output also needs a transactional
sink; `CollectSink` and `FileSink` become two-phase-commit sinks in a later release.
"""

from lockgate.connectors.collect import CollectSink
from lockgate.connectors.errors import ConnectorError
from lockgate.connectors.files import FileSink, FileSource
from lockgate.connectors.memory import CollectionSource, PrintSink

__all__ = [
    "CollectSink",
    "CollectionSource",
    "ConnectorError",
    "FileSink",
    "FileSource",
    "PrintSink",
]
