"""Recent idempotency keys: a key seen again within its time to live is a duplicate."""

from __future__ import annotations

from lockgate.connectors.service.recent_keys import RecentKeys


def test_a_key_seen_again_within_its_ttl_is_a_duplicate():
    keys = RecentKeys(ttl=10.0)

    assert not keys.seen("a", 0, now=0.0)
    assert keys.seen("a", 1, now=9.9)
    assert not keys.seen("a", 2, now=10.0)


def test_a_checkpoint_keeps_only_the_keys_of_records_before_its_position():
    keys = RecentKeys(ttl=10.0)
    keys.seen("a", 0, now=0.0)
    keys.seen("b", 5, now=2.0)

    assert keys.remaining_before(5, now=4.0) == {"a": 6.0}


def test_restored_keys_live_out_the_time_they_had_left_on_the_new_clock():
    keys = RecentKeys.restored(10.0, {"a": 3.0, "b": 8.0}, position=5, now=100.0)

    assert keys.seen("a", 5, now=102.0)
    assert not keys.seen("a", 6, now=103.0)  # a's time was up: seen anew, at position 6
    assert keys.seen("b", 7, now=107.0)
    assert keys.remaining_before(6, now=107.0) == {"b": 1.0}
