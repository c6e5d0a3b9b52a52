"""An output gate with side output partitions: main records go to main partitions, side
records to their tag's; flushes, events, channel state and restores cover both."""

from __future__ import annotations

from typing import Any

from lockgate.actors import Channel
from lockgate.engine import CheckpointBarrier, EndOfInput, ManualClock, OutputTag
from lockgate.engine.checkpointing.channel_state import ChannelId
from lockgate.engine.events import ChannelItem, SnapshotOptions, item_size
from lockgate.engine.runtime.network.output_gate import OutputGate
from lockgate.engine.runtime.network.partitioners import ForwardPartitioner
from lockgate.engine.runtime.network.partitions import OutputPartition

LATE, EARLY = OutputTag("late"), OutputTag("early")
MAIN_KEY, LATE_KEY = ChannelId(0, 0, 0), ChannelId(1, 0, 0)
UNALIGNED = CheckpointBarrier(1, 0.0, SnapshotOptions(unaligned=True))


def channel(capacity: int = 100) -> Channel[ChannelItem]:
    return Channel(capacity, size_of=item_size)


def drain(ch: Channel[ChannelItem]) -> list[Any]:
    return [ch.receive_nowait() for _ in range(len(ch))]


def gate(
    main: Channel[ChannelItem],
    late: Channel[ChannelItem],
    restored: dict[ChannelId, list[Any]] | None = None,
) -> OutputGate:
    return OutputGate(
        [
            OutputPartition(ForwardPartitioner(), [main], [MAIN_KEY]),
            OutputPartition(ForwardPartitioner(), [late], [LATE_KEY], tag=LATE),
        ],
        batch_size=2,
        clock=ManualClock(),
        restored=restored,
    )


async def test_emit_sends_main_records_to_the_main_partitions_only() -> None:
    main, late = channel(), channel()
    output = gate(main, late)

    await output.emit([1, 2])

    assert (drain(main), drain(late)) == ([[1, 2]], [])


async def test_side_records_go_to_their_tag_and_a_tag_nobody_reads_is_dropped() -> None:
    main, late = channel(), channel()
    output = gate(main, late)

    await output.emit_with_side([1, 2], {LATE: ["a", "b"], EARLY: ["dropped"]})

    assert (drain(main), drain(late)) == ([[1, 2]], [["a", "b"]])
    assert output.records_out == 4


async def test_a_partial_side_batch_is_buffered_until_flushed() -> None:
    main, late = channel(), channel()
    output = gate(main, late)

    await output.emit_with_side([], {LATE: ["a"]})
    assert (drain(late), output.buffered) == ([], 1)
    await output.flush()

    assert (drain(main), drain(late)) == ([], [["a"]])


async def test_main_records_without_a_main_partition_are_dropped_uncounted() -> None:
    late = channel()
    output = OutputGate(
        [OutputPartition(ForwardPartitioner(), [late], [LATE_KEY], tag=LATE)],
        batch_size=2,
        clock=ManualClock(),
    )

    await output.emit_with_side([1, 2, 3], {LATE: ["a", "b"]})

    assert (drain(late), output.records_out) == ([["a", "b"]], 2)


async def test_a_barrier_follows_the_side_records_emitted_before_it() -> None:
    main, late = channel(), channel()
    output = gate(main, late)
    barrier = CheckpointBarrier(1, 0.0)

    await output.emit_with_side([1], {LATE: ["a"]})
    await output.broadcast_event(barrier)

    assert (drain(main), drain(late)) == ([[1], barrier], [["a"], barrier])


async def test_an_unaligned_barrier_overtakes_side_records_and_keeps_them_as_state() -> None:
    main, late = channel(), channel()
    output = gate(main, late)
    await output.emit_with_side([1], {LATE: ["a", "b", "c"]})

    state = output.overtake(UNALIGNED)

    assert state == {MAIN_KEY: [1], LATE_KEY: ["a", "b", "c"]}
    assert drain(late) == [UNALIGNED, ["a", "b"]]


async def test_restored_side_channel_state_is_sent_before_new_side_records() -> None:
    main, late = channel(), channel()
    output = gate(main, late, restored={LATE_KEY: ["r1"]})

    await output.emit_with_side([], {LATE: ["n1"]})
    await output.flush()

    assert drain(late) == [["r1"], ["n1"]]


async def test_end_of_input_reaches_and_closes_the_side_channels() -> None:
    main, late = channel(), channel()
    output = gate(main, late)

    await output.emit_with_side([], {LATE: ["a"]})
    await output.end_input()

    assert drain(late) == [["a"], EndOfInput()]
    assert late.closed
