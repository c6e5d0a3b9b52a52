from __future__ import annotations

import operator

import pytest

from lockgate.engine.state import (
    AggregatingStateDescriptor,
    KeyedStateStore,
    ListStateDescriptor,
    MapStateDescriptor,
    ReducingStateDescriptor,
    StateTtlConfig,
    ValueStateDescriptor,
)
from lockgate.engine.time.clock import ManualClock
from tests.engine.state.states import Average

TTL = StateTtlConfig(10.0)
ON_READ = StateTtlConfig(10.0, update_type="on_read_and_write")


def store_at(key: str = "k") -> tuple[KeyedStateStore, ManualClock]:
    clock = ManualClock()
    store = KeyedStateStore(clock)
    store.current_key = key
    return store, clock


def test_a_ttl_must_be_positive() -> None:
    with pytest.raises(ValueError, match="positive"):
        StateTtlConfig(0)


def test_an_unknown_update_type_is_refused() -> None:
    with pytest.raises(ValueError, match="update_type"):
        StateTtlConfig(1.0, update_type="on_read")  # type: ignore[arg-type]


def test_descriptors_without_a_ttl_still_take_their_positional_arguments() -> None:
    assert ReducingStateDescriptor[int]("r", operator.add).ttl is None


def test_a_value_lives_until_just_before_its_ttl() -> None:
    store, clock = store_at()
    state = store.get_state(ValueStateDescriptor[int]("v", ttl=TTL))
    state.update(1)
    clock.advance(9.999)
    assert state.value() == 1


def test_a_value_expires_at_its_ttl_and_reads_as_the_default() -> None:
    store, clock = store_at()
    state = store.get_state(ValueStateDescriptor[int]("v", default=-1, ttl=TTL))
    state.update(1)
    clock.advance(10.0)
    assert state.value() == -1


def test_an_expired_value_is_removed_when_read() -> None:
    store, clock = store_at()
    state = store.get_state(ValueStateDescriptor[int]("v", ttl=TTL))
    state.update(1)
    clock.advance(10.0)
    state.value()
    assert store.statistics().entries == 0


def test_a_write_refreshes_a_value() -> None:
    store, clock = store_at()
    state = store.get_state(ValueStateDescriptor[int]("v", ttl=TTL))
    state.update(1)
    clock.advance(6.0)
    state.update(2)
    clock.advance(6.0)
    assert state.value() == 2


def test_a_read_does_not_refresh_by_default() -> None:
    store, clock = store_at()
    state = store.get_state(ValueStateDescriptor[int]("v", ttl=TTL))
    state.update(1)
    clock.advance(6.0)
    state.value()
    clock.advance(6.0)
    assert state.value() is None


def test_a_read_refreshes_with_on_read_and_write() -> None:
    store, clock = store_at()
    state = store.get_state(ValueStateDescriptor[int]("v", ttl=ON_READ))
    state.update(1)
    clock.advance(6.0)
    state.value()
    clock.advance(6.0)
    assert state.value() == 1


def test_a_list_expires_as_a_whole_after_its_last_write() -> None:
    store, clock = store_at()
    state = store.get_state(ListStateDescriptor[int]("l", ttl=TTL))
    state.add(1)
    clock.advance(6.0)
    state.add(2)
    clock.advance(9.0)
    assert state.get() == [1, 2]
    clock.advance(1.0)
    assert state.get() == []


def test_adding_to_an_expired_list_starts_a_new_list() -> None:
    store, clock = store_at()
    state = store.get_state(ListStateDescriptor[int]("l", ttl=TTL))
    state.add(1)
    clock.advance(10.0)
    state.add(2)
    assert state.get() == [2]


def test_a_list_read_refreshes_with_on_read_and_write() -> None:
    store, clock = store_at()
    state = store.get_state(ListStateDescriptor[int]("l", ttl=ON_READ))
    state.update([1])
    clock.advance(6.0)
    state.get()
    clock.advance(6.0)
    assert state.get() == [1]


def test_map_entries_expire_one_by_one() -> None:
    store, clock = store_at()
    state = store.get_state(MapStateDescriptor[str, int]("m", ttl=TTL))
    state.put("old", 1)
    clock.advance(6.0)
    state.put("new", 2)
    clock.advance(6.0)
    assert state.items() == [("new", 2)]


def test_an_expired_map_entry_is_absent_to_every_read() -> None:
    store, clock = store_at()
    state = store.get_state(MapStateDescriptor[str, int]("m", ttl=TTL))
    state.put("a", 1)
    clock.advance(10.0)
    assert (state.get("a"), state.contains("a"), state.keys(), state.is_empty()) == (
        None,
        False,
        [],
        True,
    )


def test_a_map_whose_entries_all_expired_holds_no_state_once_read() -> None:
    store, clock = store_at()
    state = store.get_state(MapStateDescriptor[str, int]("m", ttl=TTL))
    state.put_all({"a": 1, "b": 2})
    clock.advance(10.0)
    state.values()
    assert store.statistics().entries == 0


def test_a_map_get_refreshes_only_that_entry_with_on_read_and_write() -> None:
    store, clock = store_at()
    state = store.get_state(MapStateDescriptor[str, int]("m", ttl=ON_READ))
    state.put_all({"a": 1, "b": 2})
    clock.advance(6.0)
    state.get("a")
    clock.advance(6.0)
    assert state.items() == [("a", 1)]


def test_a_reduced_value_expires_and_adding_starts_over() -> None:
    store, clock = store_at()
    state = store.get_state(ReducingStateDescriptor[int]("r", operator.add, ttl=TTL))
    state.add(1)
    state.add(2)
    clock.advance(10.0)
    assert state.get() is None
    state.add(5)
    assert state.get() == 5


def test_an_accumulator_expires_after_its_last_add() -> None:
    store, clock = store_at()
    state = store.get_state(AggregatingStateDescriptor("a", Average(), ttl=TTL))
    state.add(2)
    clock.advance(6.0)
    state.add(4)
    clock.advance(9.0)
    assert state.get() == 3.0
    clock.advance(1.0)
    assert state.get() is None


def test_clear_after_expiry_leaves_no_state() -> None:
    store, clock = store_at()
    state = store.get_state(ListStateDescriptor[int]("l", ttl=TTL))
    state.add(1)
    clock.advance(10.0)
    state.clear()
    assert (state.get(), store.statistics().entries) == ([], 0)


def test_a_state_without_ttl_never_expires() -> None:
    store, clock = store_at()
    state = store.get_state(ValueStateDescriptor[int]("v"))
    state.update(1)
    clock.advance(1e9)
    assert state.value() == 1


def test_declaring_one_name_with_two_ttls_is_refused() -> None:
    store, _ = store_at()
    store.get_state(ValueStateDescriptor[int]("v", ttl=TTL))
    with pytest.raises(ValueError, match="declared twice"):
        store.get_state(ValueStateDescriptor[int]("v", ttl=ON_READ))


async def test_a_job_s_keyed_state_expires_on_the_job_s_clock() -> None:
    from lockgate.connectors import CollectionSource, CollectSink
    from lockgate.engine import (
        KeyedProcessFunction,
        ProcessContext,
        RuntimeContext,
        StreamEnvironment,
        ValueStateDescriptor,
    )
    from lockgate.engine.state import StateTtlConfig

    clock = ManualClock()

    class CountWithTtl(KeyedProcessFunction[str, str, tuple[str, int]]):
        def open(self, context: RuntimeContext) -> None:
            descriptor = ValueStateDescriptor[int]("count", default=0, ttl=StateTtlConfig(10.0))
            self.count = context.get_state(descriptor)

        def process_element(self, value: str, ctx: ProcessContext[str]) -> object:
            if value == "tick":
                clock.advance(20.0)  # the job's clock moves past the TTL between two records
                return None
            self.count.update(self.count.value() + 1)
            return [(value, self.count.value())]

    env = StreamEnvironment(clock=clock)
    sink = CollectSink()
    env.from_source(CollectionSource(["a", "a", "tick", "a"])).key_by(lambda v: "k").process(
        CountWithTtl(), uid="counts"
    ).sink_to(sink)

    await env.execute("ttl")

    assert sink.results == [("a", 1), ("a", 2), ("a", 1)]
