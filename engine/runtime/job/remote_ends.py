"""RemoteEnds: where a deployment gets the ends of channels that cross processes.

A worker executor builds only its own subtasks (``deploy(..., hosts=...)``); a channel
whose other end is in another worker process is the data plane's: ``RemoteEnds.sending``
gives the producer's end (it looks like a ``Channel`` to the output gate), and
``RemoteEnds.receiving`` feeds the consumer's local channel. Records an unaligned barrier
overtook where they arrived go to the consumer's input channel state through an
``OvertakenRouter``, which learns each channel's state and index as the input gates are
built.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from lockgate.actors import Channel
from lockgate.engine.checkpointing.channel_state import ChannelId
from lockgate.engine.events import ChannelItem, CheckpointBarrier
from lockgate.engine.runtime.network.input_channel_state import InputChannelState

__all__ = ["OvertakenRouter", "RemoteEnds"]


class RemoteEnds(Protocol):
    """The data plane's ends of the channels between this process and another."""

    def sending(self, channel: ChannelId, *, capacity: int) -> Channel[ChannelItem]:
        """The producer's end of ``channel``, whose consumer is in another process."""

    def receiving(
        self,
        channel: ChannelId,
        local: Channel[ChannelItem],
        on_overtaken: Callable[[CheckpointBarrier, list[Any]], None],
    ) -> None:
        """Feed ``local`` with what the producer of ``channel``, in another process, sends."""


class OvertakenRouter:
    """Hands records an unaligned barrier overtook to the input channel state they belong to.

    Invariant: a channel's records go to the state of the input gate that reads it, under
    the channel's index there, for the barrier's checkpoint.
    """

    def __init__(self) -> None:
        self._states: dict[ChannelId, tuple[InputChannelState, int]] = {}

    def register(self, state: InputChannelState, keys: Sequence[ChannelId]) -> None:
        """Route the channels ``keys`` (in gate order) to ``state``."""
        for index, key in enumerate(keys):
            self._states[key] = (state, index)

    def for_channel(self, key: ChannelId) -> Callable[[CheckpointBarrier, list[Any]], None]:
        """What takes the records overtaken on channel ``key``."""

        def overtaken(barrier: CheckpointBarrier, records: list[Any]) -> None:
            state, index = self._states[key]
            state.add_overtaken(barrier.checkpoint_id, index, records)

        return overtaken
