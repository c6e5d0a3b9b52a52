"""The data plane: channels between subtasks, in one process or across processes.

The contract executors code against:

- **Local channels** (``local_channel``) are plain ``lockgate.actors.Channel`` objects, as
  they have always been: the gates call them directly and the local executor pays nothing.
- **A channel between two workers** has two ends that look to the gates exactly like a
  local ``Channel``. In the producer's process, ``Connection.open_sending(channel_id,
  capacity=...)`` returns a ``SendingChannel``: give it to the ``OutputPartition`` in the
  channel's place. In the consumer's process, build the channel as for a local one
  (``local_channel``, ringing the consumer's doorbell), give it to the ``InputGate``, and
  feed it with ``Connection.open_receiving(channel_id, channel, on_overtaken=...)``;
  ``on_overtaken(barrier, records)`` must add the records to the consumer's input channel
  state of that checkpoint (``InputChannelState.add_overtaken``), or unaligned
  checkpoints lose them.
- **One connection per pair of workers** carries all their channels, both ways. Open
  every end of the attempt on it first, then run it with ``async with connection:``
  around (or beside) the subtasks. One side ``listen``s, the other ``connect``s, both
  with the attempt's token; ``tcp://127.0.0.1:0`` or ``unix:///path``.
- **Credits.** A receiving end grants its channel's capacity in records and
  ``window_bytes`` in bytes; a sending end sends only within them and otherwise raises
  ``MailboxFull`` / waits in ``send``, which the output gate counts as backpressure.
  Records in flight never exceed the window (``statistics()`` shows it).
- **Unaligned barriers** overtake: ``send_first`` sends a ``PRIORITY`` frame ahead of the
  frames still queued and returns their items (output channel state, as locally); the
  receiving end puts the barrier ahead of what it holds and hands those records to
  ``on_overtaken`` (input channel state). Together they are exactly the records the
  barrier overtook.
- **Failure.** A connection that closes or breaks while a channel on it has not ended
  raises ``ConnectionLost`` (naming the peer and the edges) out of ``async with`` and from
  every later send: the executor fails the attempt. A wrong token, a frame out of
  sequence or beyond its credits raise ``TransportProtocolError``.
"""

from __future__ import annotations

from lockgate.engine.runtime.network.transport.connection import (
    DEFAULT_WINDOW_BYTES,
    Connection,
    ConnectionStatistics,
)
from lockgate.engine.runtime.network.transport.credits import CreditStatistics
from lockgate.engine.runtime.network.transport.local import channel_name, local_channel
from lockgate.engine.runtime.network.transport.receiving import (
    OvertakenRecords,
    ReceivingEnd,
    ReceivingStatistics,
)
from lockgate.engine.runtime.network.transport.sending import SendingChannel, SendingStatistics
from lockgate.engine.runtime.network.transport.stream import (
    DataPlaneListener,
    StreamAddress,
    connect,
    listen,
)

__all__ = [
    "DEFAULT_WINDOW_BYTES",
    "Connection",
    "ConnectionStatistics",
    "CreditStatistics",
    "DataPlaneListener",
    "OvertakenRecords",
    "ReceivingEnd",
    "ReceivingStatistics",
    "SendingChannel",
    "SendingStatistics",
    "StreamAddress",
    "channel_name",
    "connect",
    "listen",
    "local_channel",
]
