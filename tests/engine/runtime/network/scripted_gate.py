"""A tiny deterministic input gate over pre-filled channel queues, for the aligner's tests."""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass, field

from hypothesis import strategies as st

from lockgate.engine import CheckpointBarrier, EndOfInput
from lockgate.engine.events import SnapshotOptions
from lockgate.engine.runtime.network.barrier_aligner import (
    AbortCheckpoint,
    AlignmentMode,
    BarrierAligner,
    ChannelStateComplete,
    Decision,
    TriggerSnapshot,
    TriggerUnalignedSnapshot,
)

ALIGNED = AlignmentMode.ALIGNED
AT_LEAST_ONCE = AlignmentMode.AT_LEAST_ONCE
END = EndOfInput()
UNALIGNED = SnapshotOptions(unaligned=True)
Item = str | CheckpointBarrier | EndOfInput


def barrier(checkpoint_id: int, options: SnapshotOptions | None = None) -> CheckpointBarrier:
    return CheckpointBarrier(checkpoint_id, float(checkpoint_id), options or SnapshotOptions())


def unaligned(checkpoint_id: int) -> CheckpointBarrier:
    return barrier(checkpoint_id, UNALIGNED)


def timeoutable(checkpoint_id: int, timeout: float) -> CheckpointBarrier:
    return barrier(checkpoint_id, SnapshotOptions(unaligned=True, aligned_timeout=timeout))


def describe(decision: Decision) -> str:
    match decision:
        case TriggerSnapshot(barrier=b):
            return f"snapshot {b.checkpoint_id}"
        case TriggerUnalignedSnapshot(barrier=b):
            return f"unaligned {b.checkpoint_id}"
        case ChannelStateComplete(checkpoint_id=n):
            return f"complete {n}"
        case AbortCheckpoint(checkpoint_id=n):
            return f"abort {n}"


@dataclass
class ScriptedGate:
    """Reads pre-filled channel queues as a subtask's input gate would, skipping blocked ones.

    ``output`` holds the records in processing order with the decisions ("snapshot n",
    "unaligned n", "complete n", "abort n"); ``trace`` holds, after each barrier or end of
    input, the event and the blocked channels; ``recorded`` the records read from recording
    channels, by the checkpoint whose channel state they are. Barriers are delivered at
    time ``now``.
    """

    queues: list[deque[Item]]
    aligner: BarrierAligner
    output: list[str] = field(default_factory=list)
    trace: list[tuple[str, set[int]]] = field(default_factory=list)
    recorded: dict[int, list[str]] = field(default_factory=lambda: defaultdict(list))
    now: float = 0.0

    def readable(self) -> list[int]:
        return [c for c, q in enumerate(self.queues) if q and not self.aligner.is_blocked(c)]

    def read(self, channel: int) -> None:
        item = self.queues[channel].popleft()
        match item:
            case CheckpointBarrier(checkpoint_id=n):
                event = f"{channel}: barrier {n}"
                decisions = self.aligner.on_barrier(channel, item, now=self.now)
            case EndOfInput():
                event, decisions = f"{channel}: end", self.aligner.on_end_of_input(channel)
            case record:
                self.output.append(record)
                if channel in self.aligner.recording_channels:
                    assert self.aligner.pending_checkpoint is not None
                    self.recorded[self.aligner.pending_checkpoint].append(record)
                return
        self.output.extend(describe(decision) for decision in decisions)
        self.trace.append((event, set(self.aligner.blocked_channels)))

    def tick(self, now: float) -> None:
        """Let time pass to ``now``: the pending alignment may time out."""
        self.now = now
        self.output.extend(describe(decision) for decision in self.aligner.on_time(now))

    def run(self, choose: Callable[[list[int]], int] | None = None) -> ScriptedGate:
        """Read until nothing is readable: round-robin, or in the order ``choose`` picks."""
        turn = 0
        while readable := self.readable():
            if choose is None:
                channel = min(readable, key=lambda c: (c - turn) % len(self.queues))
            else:
                channel = choose(readable)
            self.read(channel)
            turn = channel + 1
        return self


def run(*channels: list[Item], mode: AlignmentMode = ALIGNED) -> ScriptedGate:
    gate = ScriptedGate(
        [deque(items) for items in channels], BarrierAligner(len(channels), mode=mode)
    )
    return gate.run()


# Random interleavings of per-channel streams "records, barrier 1, records, ...".


@st.composite
def channel_streams(
    draw: st.DrawFn, make_barrier: Callable[[int], CheckpointBarrier] = barrier
) -> list[list[Item]]:
    """Each channel: k barriers with records around them; one that stops short of the most
    barriers ends with EndOfInput (else the alignment it misses could never finish)."""
    count = draw(st.integers(1, 4))
    barriers = draw(st.lists(st.integers(0, 3), min_size=count, max_size=count))
    streams = []
    for channel, k in enumerate(barriers):
        items: list[Item] = []
        for segment in range(k + 1):
            records = draw(st.integers(0, 3))
            items += [f"r{channel}.{segment}.{i}" for i in range(records)]
            if segment < k:
                items.append(make_barrier(segment + 1))
        if k < max(barriers) or draw(st.booleans()):
            items.append(END)
        streams.append(items)
    return streams


def records_before(streams: list[list[Item]], checkpoint_id: int) -> set[str]:
    """The records that precede barrier ``checkpoint_id`` on each channel (all, if none)."""
    found: set[str] = set()
    for items in streams:
        for item in items:
            if isinstance(item, CheckpointBarrier) and item.checkpoint_id == checkpoint_id:
                break
            if isinstance(item, str):
                found.add(item)
    return found


def emitted_before_each_snapshot(output: list[str]) -> dict[int, set[str]]:
    """Per checkpoint, the records processed before its snapshot (aligned or unaligned)."""
    return {
        int(entry.split()[1]): {r for r in output[:position] if r.startswith("r")}
        for position, entry in enumerate(output)
        if entry.startswith(("snapshot", "unaligned"))
    }
