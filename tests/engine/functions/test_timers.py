"""TimerQueue: per-key timers over a keyed-state table, without an event loop."""

from __future__ import annotations

import math
from typing import Any

import pytest

from lockgate.engine.functions.timers import TimerQueue


def _queue(table: dict[Any, tuple[float, ...]] | None = None) -> TimerQueue:
    return TimerQueue({} if table is None else table)


def test_timers_fire_in_timestamp_order_up_to_the_time_reached() -> None:
    queue = _queue()
    queue.register("b", 20.0)
    queue.register("a", 10.0)
    queue.register("c", 30.0)

    assert list(queue.pop_due(25.0)) == [("a", 10.0), ("b", 20.0)]
    assert queue.next_timestamp() == 30.0


def test_a_key_has_one_timer_per_timestamp() -> None:
    table: dict[Any, tuple[float, ...]] = {}
    queue = _queue(table)
    queue.register("a", 10.0)
    queue.register("a", 10.0)
    queue.register("a", 5.0)

    assert table == {"a": (5.0, 10.0)}
    assert list(queue.pop_due(10.0)) == [("a", 5.0), ("a", 10.0)]


def test_a_deleted_timer_never_fires() -> None:
    table: dict[Any, tuple[float, ...]] = {}
    queue = _queue(table)
    queue.register("a", 10.0)
    queue.register("b", 12.0)
    queue.delete("a", 10.0)
    queue.delete("a", 99.0)  # none there: nothing happens

    assert queue.next_timestamp() == 12.0
    assert list(queue.pop_due(100.0)) == [("b", 12.0)]
    assert table == {}


def test_fired_timers_leave_the_table() -> None:
    table: dict[Any, tuple[float, ...]] = {}
    queue = _queue(table)
    queue.register("a", 1.0)
    queue.register("a", 2.0)

    assert list(queue.pop_due(1.0)) == [("a", 1.0)]
    assert table == {"a": (2.0,)}


def test_a_queue_over_a_restored_table_finds_every_timer() -> None:
    restored = {"a": (3.0, 7.0), "b": (5.0,)}

    queue = _queue(dict(restored))

    assert len(queue) == 3
    assert list(queue.pop_due(10.0)) == [("a", 3.0), ("b", 5.0), ("a", 7.0)]


def test_a_timer_registered_while_firing_fires_too_if_it_is_due() -> None:
    queue = _queue()
    queue.register("a", 1.0)
    fired = []
    for key, timestamp in queue.pop_due(5.0):
        fired.append((key, timestamp))
        if timestamp == 1.0:
            queue.register(key, 4.0)
            queue.register(key, 9.0)

    assert fired == [("a", 1.0), ("a", 4.0)]
    assert queue.next_timestamp() == 9.0


def test_a_timer_deleted_and_registered_again_fires_once() -> None:
    queue = _queue()
    queue.register("a", 1.0)
    queue.delete("a", 1.0)
    queue.register("a", 1.0)

    assert list(queue.pop_due(1.0)) == [("a", 1.0)]


def test_a_timer_at_nan_is_refused_and_every_other_timer_still_fires() -> None:
    queue = _queue()
    queue.register("a", 10.0)

    with pytest.raises(ValueError, match="timer for key 'b' at NaN would never fire"):
        queue.register("b", math.nan)
    queue.register("c", 20.0)

    assert list(queue.pop_due(math.inf)) == [("a", 10.0), ("c", 20.0)]
