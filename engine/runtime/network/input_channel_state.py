"""InputChannelState: the input side of unaligned checkpoints in one subtask's input gate.

Two kinds of in-flight records pass through it: those restored from a checkpoint, which the
subtask processes before anything it reads from its channels, and those it records for the
unaligned checkpoint in progress. Records restored and not yet processed when an unaligned
checkpoint starts precede everything on their channel, so they start that checkpoint's
channel state.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from typing import Any

from lockgate.engine.checkpointing.channel_state import ChannelId, ChannelRecords

__all__ = ["InputChannelState"]


class InputChannelState:
    """Restored input records to process first, and the records recorded per checkpoint.

    Restored records come out in channel order, in batches of at most ``batch_size``.
    At most one checkpoint is recorded at a time; ``take`` hands out its channel state once
    ``finish`` has been called for it, keyed by ``ChannelId``, each channel's records in
    the order they were read.
    """

    def __init__(
        self, keys: Sequence[ChannelId], restored: ChannelRecords, *, batch_size: int
    ) -> None:
        self.keys = list(keys)
        unknown = set(restored) - set(self.keys)
        if unknown:
            raise ValueError(
                f"restored channel state for channels this gate does not read: {unknown}"
            )
        self._restored: deque[tuple[int, list[Any]]] = deque(
            (index, records[start : start + batch_size])
            for index, key in enumerate(self.keys)
            for records in [restored.get(key, [])]
            for start in range(0, len(records), batch_size)
        )
        self._recording: int | None = None
        self._records: list[list[Any]] = []
        self._finished: tuple[int, list[list[Any]]] | None = None
        self._early: dict[int, list[tuple[int, list[Any]]]] = {}

    @property
    def has_restored(self) -> bool:
        """Whether restored records are still to be processed."""
        return bool(self._restored)

    def next_restored(self) -> list[Any]:
        """Return the next batch of restored records (``has_restored`` must be true)."""
        return self._restored.popleft()[1]

    def start(self, checkpoint_id: int) -> None:
        """Record for ``checkpoint_id`` from now, starting with the restored records left.

        Records its barriers overtook before it started (``add_overtaken``) follow them.
        """
        self._recording = checkpoint_id
        self._records = [[] for _ in self.keys]
        for index, batch in self._restored:
            self._records[index].extend(batch)
        for index, records in self._early.pop(checkpoint_id, []):
            self._records[index].extend(records)
        self._early = {early: kept for early, kept in self._early.items() if early > checkpoint_id}

    def add_overtaken(self, checkpoint_id: int, channel: int, records: list[Any]) -> None:
        """Keep ``records``, which the barrier of ``checkpoint_id`` overtook on ``channel``.

        For a channel whose sending end is in another process: its barrier overtook these
        records where they had arrived, in this process, so this subtask's channel state
        holds them. The barrier may come before the checkpoint is recorded here (it waits
        at the channel's head until the gate reads it): its records then wait for
        ``start``. Nothing is kept for a checkpoint that is over.
        """
        if self._recording == checkpoint_id:
            self._records[channel].extend(records)
        elif records and (self._recording is None or checkpoint_id > self._recording):
            self._early.setdefault(checkpoint_id, []).append((channel, records))

    def record(self, channel: int, records: list[Any]) -> None:
        """Keep ``records``, read from ``channel``, for the checkpoint being recorded."""
        self._records[channel].extend(records)

    def finish(self, checkpoint_id: int) -> None:
        """The channel state of ``checkpoint_id`` is complete: keep it for ``take``."""
        if self._recording == checkpoint_id:
            self._finished = (checkpoint_id, self._records)
            self._recording, self._records = None, []

    def abort(self, checkpoint_id: int) -> None:
        """Stop recording for ``checkpoint_id``; what was recorded is dropped."""
        self._early.pop(checkpoint_id, None)
        if self._recording == checkpoint_id:
            self._recording, self._records = None, []

    def take(self, checkpoint_id: int) -> ChannelRecords:
        """Return the finished channel state of ``checkpoint_id`` (empty if there is none)."""
        finished, self._finished = self._finished, None
        if finished is None or finished[0] != checkpoint_id:
            return {}
        return {key: records for key, records in zip(self.keys, finished[1], strict=True)}

    def __repr__(self) -> str:
        return (
            f"<InputChannelState restored_batches={len(self._restored)}"
            f" recording={self._recording}>"
        )
