import enum
import json
import os
import subprocess
import sys
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lockgate.engine.runtime.network.partitioners import (
    BroadcastPartitioner,
    ForwardPartitioner,
    KeyGroupPartitioner,
    RebalancePartitioner,
    StampedKeyGroupPartitioner,
    StampingPartitioner,
)
from lockgate.engine.state.key_groups import (
    key_group_for,
    key_group_range,
    stable_hash,
    subtask_for_key_group,
)

KEYS = [
    "",
    "user-42",
    "ünïcödé",
    0,
    -1,
    255,
    2**70,
    -(2**70),
    (),
    ("eu", 7),
    ("nested", (1, b"x"), None),
    b"",
    b"\x00\xff",
    0.5,
    -2.25,
    1e300,
    None,
]

HASH_KEYS_SCRIPT = """
import ast, json, sys
from lockgate.engine.state.key_groups import key_group_for, stable_hash
keys = ast.literal_eval(sys.argv[1])
print(json.dumps({
    "stable": [[stable_hash(k), key_group_for(k, 128)] for k in keys],
    "builtin": hash("user-42"),
}))
"""

max_parallelisms = st.integers(min_value=1, max_value=1024)


@st.composite
def layouts(draw: st.DrawFn) -> tuple[int, int]:
    max_parallelism = draw(max_parallelisms)
    return max_parallelism, draw(st.integers(min_value=1, max_value=max_parallelism))


def hash_keys_in_subprocess(hash_seed: str) -> dict[str, object]:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    completed = subprocess.run(
        [sys.executable, "-c", HASH_KEYS_SCRIPT, repr(KEYS)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(completed.stdout)


def route(partitioner, records, channels):
    buffers = [[] for _ in range(channels)]
    partitioner.route(records, buffers)
    return buffers


# Key -> key group -> subtask


def test_key_group_is_the_stable_hash_modulo_max_parallelism():
    assert key_group_for("user-42", 128) == stable_hash("user-42") % 128


def test_subtask_for_key_group_follows_flinks_operator_index_formula():
    assert [subtask_for_key_group(group, 128, 3) for group in (0, 42, 43, 85, 86, 127)] == [
        0,
        0,
        1,
        1,
        2,
        2,
    ]


def test_key_group_range_gives_each_subtask_a_contiguous_slice():
    ranges = [key_group_range(index, 128, 3) for index in range(3)]

    assert ranges == [range(0, 43), range(43, 86), range(86, 128)]


@settings(database=None)
@given(layouts())
def test_key_group_range_holds_exactly_the_key_groups_assigned_to_that_subtask(layout):
    max_parallelism, parallelism = layout
    for index in range(parallelism):
        owned = [
            group
            for group in range(max_parallelism)
            if subtask_for_key_group(group, max_parallelism, parallelism) == index
        ]
        assert list(key_group_range(index, max_parallelism, parallelism)) == owned


@settings(database=None)
@given(layouts())
def test_key_group_ranges_of_all_subtasks_partition_every_key_group_in_order(layout):
    max_parallelism, parallelism = layout
    ranges = [key_group_range(i, max_parallelism, parallelism) for i in range(parallelism)]

    assert [group for r in ranges for group in r] == list(range(max_parallelism))


@settings(database=None)
@given(layouts())
def test_every_subtask_owns_at_least_one_key_group(layout):
    max_parallelism, parallelism = layout
    sizes = [len(key_group_range(i, max_parallelism, parallelism)) for i in range(parallelism)]

    assert min(sizes) >= 1


# Stability and equality of stable_hash


def test_stable_hash_is_the_same_in_processes_with_different_hash_seeds():
    first, second = hash_keys_in_subprocess("1"), hash_keys_in_subprocess("2")
    here = [[stable_hash(key), key_group_for(key, 128)] for key in KEYS]

    assert first["builtin"] != second["builtin"], "the seeds should change built-in hash()"
    assert first["stable"] == second["stable"] == here


def test_stable_hash_fits_in_32_bits():
    assert all(0 <= stable_hash(key) < 2**32 for key in KEYS)


def test_keys_equal_in_a_dict_hash_equally():
    assert stable_hash(1) == stable_hash(1.0) == stable_hash(True)


def test_negative_zero_hashes_like_zero():
    assert stable_hash(-0.0) == stable_hash(0)


def test_tuples_of_equal_keys_hash_equally():
    assert stable_hash((1, "a")) == stable_hash((1.0, "a")) == stable_hash((True, "a"))


def test_an_int_and_its_string_are_different_keys():
    assert stable_hash(1) != stable_hash("1")


def test_a_string_and_its_bytes_are_different_keys():
    assert stable_hash("a") != stable_hash(b"a")


def test_tuple_boundaries_are_part_of_the_key():
    assert stable_hash(("ab", "c")) != stable_hash(("a", "bc"))


def test_a_subclass_of_a_supported_type_hashes_like_its_value():
    class Region(enum.IntEnum):
        EU = 7

    assert stable_hash(Region.EU) == stable_hash(7)


def test_a_str_enum_member_hashes_like_the_equal_string():
    class Colour(enum.StrEnum):
        RED = "red"

    assert stable_hash(Colour.RED) == stable_hash("red")


def test_a_str_mixin_enum_member_hashes_like_the_equal_string():
    class Colour(str, enum.Enum):  # noqa: UP042 - the mixin form, not StrEnum, is the bug
        RED = "red"

    assert stable_hash(Colour.RED) == stable_hash("red")


@pytest.mark.parametrize(
    "key", [{1, 2}, object(), [1], 1 + 2j], ids=["set", "object", "list", "complex"]
)
def test_an_unsupported_key_type_raises_type_error_saying_what_to_return(key):
    with pytest.raises(TypeError, match="make the key selector return str, bytes, int"):
        stable_hash(key)


def test_a_tuple_holding_an_unsupported_key_raises_type_error():
    with pytest.raises(TypeError, match="of type set"):
        stable_hash(("a", {1}))


def test_ten_thousand_string_keys_use_every_key_group_and_none_more_than_twice_the_mean():
    counts = Counter(key_group_for(f"user-{i}", 128) for i in range(10_000))

    assert len(counts) == 128
    assert max(counts.values()) <= 2 * 10_000 / 128


def test_consecutive_integer_keys_spread_over_all_key_groups():
    counts = Counter(key_group_for(i, 128) for i in range(10_000))

    assert len(counts) == 128
    assert max(counts.values()) <= 2 * 10_000 / 128


# Partitioners


def test_forward_partitioner_appends_every_record_to_its_one_buffer_in_order():
    assert route(ForwardPartitioner(), [1, 2, 3], 1) == [[1, 2, 3]]


def test_broadcast_partitioner_appends_every_record_to_every_buffer():
    assert route(BroadcastPartitioner(), ["a", "b"], 3) == [["a", "b"]] * 3


def test_rebalance_partitioner_deals_records_round_robin():
    buffers = route(RebalancePartitioner(), ["a", "b", "c", "d", "e"], 3)

    assert buffers == [["a", "d"], ["b", "e"], ["c"]]


def test_rebalance_partitioner_continues_the_round_robin_in_the_next_batch():
    partitioner, buffers = RebalancePartitioner(), [[], [], []]
    partitioner.route(["a", "b"], buffers)
    partitioner.route(["c", "d"], buffers)

    assert buffers == [["a", "d"], ["b"], ["c"]]


def test_rebalance_partitioner_starts_at_the_given_channel():
    buffers = route(RebalancePartitioner(start=2), ["a", "b"], 3)

    assert buffers == [["b"], [], ["a"]]


def test_rebalance_partitioner_spreads_single_record_batches_evenly():
    partitioner, buffers = RebalancePartitioner(), [[], [], []]
    for record in range(9):
        partitioner.route([record], buffers)

    assert buffers == [[0, 3, 6], [1, 4, 7], [2, 5, 8]]


def test_key_group_partitioner_sends_equal_keys_to_the_same_buffer():
    records = [("a", 1), ("b", 2), ("a", 3), ("b", 4), ("a", 5)]
    buffers = route(KeyGroupPartitioner(lambda r: r[0], 128), records, 4)

    buffers_holding = Counter(key for buffer in buffers for key in {k for k, _ in buffer})
    assert buffers_holding == {"a": 1, "b": 1}


def test_key_group_partitioner_sends_each_key_to_the_subtask_owning_its_key_group():
    keys = [f"user-{i}" for i in range(200)]
    buffers = route(KeyGroupPartitioner(lambda r: r, 128), keys, 3)

    expected = {key: subtask_for_key_group(key_group_for(key, 128), 128, 3) for key in keys}
    assert {key: i for i, buffer in enumerate(buffers) for key in buffer} == expected


def test_key_group_partitioner_keeps_the_order_of_records_within_a_buffer():
    records = [("a", n) for n in range(10)]
    buffers = route(KeyGroupPartitioner(lambda r: r[0], 128), records, 2)

    assert [record for buffer in buffers for record in buffer] == records


def test_key_group_partitioner_routes_equal_keys_of_different_types_together():
    buffers = route(KeyGroupPartitioner(lambda r: r, 128), [1, 1.0, True], 4)

    assert sorted(len(buffer) for buffer in buffers) == [0, 0, 0, 3]


def test_key_group_partitioner_routes_the_same_key_the_same_way_in_every_batch():
    partitioner = KeyGroupPartitioner(lambda r: r, 128)
    first, second = route(partitioner, ["k"], 5), route(partitioner, ["k"], 5)

    assert first == second


def test_key_group_partitioner_rejects_an_unsupported_key_saying_what_to_return():
    partitioner = KeyGroupPartitioner(lambda r: r, 128)

    with pytest.raises(TypeError, match="make the key selector return"):
        route(partitioner, [object()], 2)


def test_key_group_partitioner_rejects_an_unhashable_key_saying_what_to_return():
    partitioner = KeyGroupPartitioner(lambda r: r, 128)

    with pytest.raises(TypeError, match="make the key selector return"):
        route(partitioner, [[1, 2]], 2)


def test_a_stamped_key_group_partitioner_routes_a_pair_as_its_value_would_go():
    keys = [f"user-{i}" for i in range(100)]
    plain = route(KeyGroupPartitioner(lambda r: r, 128), keys, 3)

    stamped = route(StampedKeyGroupPartitioner(lambda r: r, 128), [(1.0, k) for k in keys], 3)

    assert stamped == [[(1.0, key) for key in buffer] for buffer in plain]


def test_a_stamped_key_group_partitioner_names_the_values_key_problem():
    partitioner = StampedKeyGroupPartitioner(lambda r: r, 128)

    with pytest.raises(TypeError, match="make the key selector return"):
        route(partitioner, [(1.0, [1, 2])], 2)


def test_a_stamping_partitioner_gives_records_the_timestamp_none():
    buffers = route(StampingPartitioner(RebalancePartitioner()), ["a", "b", "c"], 2)

    assert buffers == [[(None, "a"), (None, "c")], [(None, "b")]]
