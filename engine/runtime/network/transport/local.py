"""Local channels: a channel whose two ends are subtasks of one process, as today.

A local channel is a plain ``lockgate.actors.Channel`` counting records: the gates call it
directly, with nothing in between, so the local executor pays nothing for the data plane.
The receiving end of a channel from another process is a local channel too, fed by its
connection (``ReceivingEnd``).
"""

from __future__ import annotations

from lockgate.actors import Channel, Doorbell
from lockgate.engine.checkpointing.channel_state import ChannelId
from lockgate.engine.events import ChannelItem, item_size

__all__ = ["channel_name", "local_channel"]


def channel_name(channel: ChannelId) -> str:
    """The name a channel goes by in statistics and errors: ``edge3[0->1]``."""
    return f"edge{channel.edge_id}[{channel.upstream_index}->{channel.downstream_index}]"


def local_channel(
    channel: ChannelId, capacity: int, *, doorbell: Doorbell | None
) -> Channel[ChannelItem]:
    """Return a channel of ``capacity`` records that rings the consumer's ``doorbell``."""
    return Channel(capacity, size_of=item_size, doorbell=doorbell, name=channel_name(channel))
