"""The built-in watermark generators, tested as a user tests their own: with a recording output."""

from __future__ import annotations

import math

import pytest

from lockgate.engine import BoundedOutOfOrdernessWatermarks, Watermark
from lockgate.engine.testing import RecordingWatermarkOutput
from tests.engine.jobs.event_time import below


def _seen(generator: BoundedOutOfOrdernessWatermarks, *times: float) -> RecordingWatermarkOutput:
    output = RecordingWatermarkOutput()
    for time in times:
        generator.on_event(time, time, output)
    generator.on_periodic_emit(output)
    return output


def test_a_bounded_generator_without_records_emits_nothing() -> None:
    assert _seen(BoundedOutOfOrdernessWatermarks(5.0)).watermarks == []


def test_the_watermark_trails_the_newest_timestamp_by_the_out_of_orderness() -> None:
    output = _seen(BoundedOutOfOrdernessWatermarks(5.0), 10.0, 30.0, 20.0)

    assert output.watermarks == [Watermark(below(25.0))]


def test_a_record_exactly_as_late_as_allowed_is_still_above_the_watermark() -> None:
    assert _seen(BoundedOutOfOrdernessWatermarks(5.0), 30.0).current < 25.0


def test_older_timestamps_never_move_the_watermark_back() -> None:
    generator = BoundedOutOfOrdernessWatermarks(0.0)
    _seen(generator, 30.0)

    assert _seen(generator, 3.0).watermarks == [Watermark(below(30.0))]


def test_a_bounded_generator_emits_nothing_per_record() -> None:
    generator, output = BoundedOutOfOrdernessWatermarks(0.0), RecordingWatermarkOutput()

    generator.on_event("a", 1.0, output)

    assert output.watermarks == []


def test_a_batch_of_timestamps_counts_as_its_records_one_by_one() -> None:
    generator = BoundedOutOfOrdernessWatermarks(1.0)
    generator.on_timestamps([4.0, 9.0, 2.0])

    assert _seen(generator).watermarks == [Watermark(below(8.0))]


def test_a_negative_out_of_orderness_is_refused() -> None:
    with pytest.raises(ValueError, match="max_out_of_orderness must be 0 or more"):
        BoundedOutOfOrdernessWatermarks(-math.inf)
