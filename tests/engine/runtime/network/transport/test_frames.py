"""Frames and their codec: every item kind survives the wire, however the bytes arrive."""

from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass
from typing import Any

import pytest

from lockgate.engine import CheckpointBarrier, EndOfInput, Watermark
from lockgate.engine.checkpointing.channel_state import ChannelId
from lockgate.engine.errors import TransportProtocolError
from lockgate.engine.events import SnapshotKind, SnapshotOptions, WatermarkStatus
from lockgate.engine.runtime.network.transport.codec import (
    decode_credit,
    decode_item,
    encode_credit,
    encode_item,
    encode_priority,
)
from lockgate.engine.runtime.network.transport.frames import (
    HEADER,
    MAX_FRAME,
    FrameKind,
    FrameReader,
    encode_frame,
)

CHANNEL = ChannelId(7, 2, 3)
Point = namedtuple("Point", "x y")


@dataclass(frozen=True)
class Order:
    id: int
    items: tuple[str, ...]


ITEMS: list[Any] = [
    [("w1", 1), ("w2", 2)],
    [Point(1, 2), Order(3, ("a", "b")), bytearray(b"xy"), {"k": {1, 2}}, None, 2.5],
    [],
    CheckpointBarrier(4, 12.5),
    CheckpointBarrier(5, 13.0, SnapshotOptions(unaligned=True, aligned_timeout=0.5)),
    CheckpointBarrier(6, 14.0, SnapshotOptions(SnapshotKind.SAVEPOINT, target="file:///sp")),
    Watermark(99.5),
    WatermarkStatus(idle=True),
    EndOfInput(),
]


def types_of(item: Any) -> list[type]:
    return [type(value) for value in item] if type(item) is list else [type(item)]


def wire(item: Any, sequence: int = 0) -> bytes:
    kind, payload = encode_item(item)
    return encode_frame(kind, CHANNEL, sequence, payload)


@pytest.mark.parametrize("item", ITEMS, ids=lambda item: type(item).__name__)
def test_every_item_kind_round_trips_with_its_channel_and_sequence(item: Any) -> None:
    (frame,) = FrameReader().feed(wire(item, sequence=41))

    assert (frame.channel, frame.sequence) == (CHANNEL, 41)
    assert frame.kind is (FrameKind.DATA if type(item) is list else FrameKind.EVENT)
    decoded = decode_item(frame.payload)
    assert decoded == item
    assert types_of(decoded) == types_of(item)


def test_a_priority_barrier_round_trips_as_its_own_kind() -> None:
    barrier = CheckpointBarrier(3, 1.0, SnapshotOptions(unaligned=True))
    data = encode_frame(FrameKind.PRIORITY, CHANNEL, 0, encode_priority(barrier))

    (frame,) = FrameReader().feed(data)

    assert frame.kind is FrameKind.PRIORITY
    assert decode_item(frame.payload) == barrier


def test_a_credit_round_trips_records_and_bytes() -> None:
    data = encode_frame(FrameKind.CREDIT, CHANNEL, 5, encode_credit(2048, 16 << 20))

    (frame,) = FrameReader().feed(data)

    assert (frame.kind, frame.sequence) == (FrameKind.CREDIT, 5)
    assert decode_credit(frame.payload) == (2048, 16 << 20)


def test_a_reader_cuts_frames_however_the_bytes_arrive() -> None:
    data = b"".join(wire(item, sequence) for sequence, item in enumerate(ITEMS))
    reader = FrameReader()

    frames = [frame for index in range(len(data)) for frame in reader.feed(data[index : index + 1])]

    assert [decode_item(frame.payload) for frame in frames] == ITEMS
    assert [frame.sequence for frame in frames] == list(range(len(ITEMS)))
    assert reader.buffered == 0


def test_a_reader_keeps_frames_past_its_limit_for_the_next_feed() -> None:
    reader = FrameReader()

    first = reader.feed(wire(ITEMS[0], 0) + wire(ITEMS[3], 1), limit=1)

    assert [frame.sequence for frame in first] == [0]
    assert [frame.sequence for frame in reader.feed(b"")] == [1]


def test_a_frame_longer_than_the_largest_is_refused() -> None:
    header = HEADER.pack(MAX_FRAME + 1, FrameKind.DATA, 0, 0, 0, 0)

    with pytest.raises(TransportProtocolError, match="cannot be read"):
        FrameReader(name="w0<->w1").feed(header)


def test_a_frame_of_unknown_kind_is_refused() -> None:
    header = HEADER.pack(HEADER.size - 4, 99, 0, 0, 0, 0)

    with pytest.raises(TransportProtocolError, match="unknown kind 99"):
        FrameReader().feed(header)
