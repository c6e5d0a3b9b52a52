from pathlib import Path
from typing import Any

import pytest

from lockgate.engine.checkpointing.channel_state import ChannelId
from lockgate.engine.checkpointing.native_state import NativeKeyedState
from lockgate.engine.checkpointing.snapshots import OperatorSnapshot
from lockgate.engine.restore.redistribute import (
    NativeSources,
    even_split,
    native_sources,
    redistribute,
)
from lockgate.engine.state.key_groups import key_group_for, key_group_range, subtask_for_key_group

MAX_PARALLELISM = 13
RESCALES = [(2, 4), (4, 2), (3, 3)]
KEYS = [f"user-{n}" for n in range(200)]


def ids(rescale: tuple[int, int]) -> str:
    return f"{rescale[0]}->{rescale[1]}"


def keyed_snapshots(parallelism: int) -> list[OperatorSnapshot]:
    keyed: list[dict[int, dict[str, dict[Any, Any]]]] = [{} for _ in range(parallelism)]
    for key in KEYS:
        group = key_group_for(key, MAX_PARALLELISM)
        owner = subtask_for_key_group(group, MAX_PARALLELISM, parallelism)
        keyed[owner].setdefault(group, {}).setdefault("count", {})[key] = len(key)
    return [OperatorSnapshot("sums", keyed=groups) for groups in keyed]


def list_snapshots(parallelism: int) -> list[OperatorSnapshot]:
    return [
        OperatorSnapshot("src", lists={"splits": [f"{index}-{n}" for n in range(index + 2)]})
        for index in range(parallelism)
    ]


def keys_of(snapshot: OperatorSnapshot) -> dict[Any, int]:
    return {
        key: group
        for group, states in snapshot.keyed.items()
        for table in states.values()
        for key in table
    }


@pytest.mark.parametrize("rescale", RESCALES, ids=ids)
def test_every_key_lands_in_the_subtask_owning_its_key_group(rescale: tuple[int, int]) -> None:
    old, new = rescale
    restored = redistribute(keyed_snapshots(old), new, MAX_PARALLELISM)
    for index, snapshot in enumerate(restored):
        owned = key_group_range(index, MAX_PARALLELISM, new)
        for key, group in keys_of(snapshot).items():
            assert group == key_group_for(key, MAX_PARALLELISM)
            assert group in owned


@pytest.mark.parametrize("rescale", RESCALES, ids=ids)
def test_keyed_values_are_neither_lost_nor_duplicated(rescale: tuple[int, int]) -> None:
    old, new = rescale
    restored = redistribute(keyed_snapshots(old), new, MAX_PARALLELISM)
    values = [
        (key, value)
        for snapshot in restored
        for states in snapshot.keyed.values()
        for key, value in states["count"].items()
    ]
    assert sorted(values) == sorted((key, len(key)) for key in KEYS)


@pytest.mark.parametrize("rescale", RESCALES, ids=ids)
def test_list_state_is_split_evenly_keeping_every_item_in_order(rescale: tuple[int, int]) -> None:
    old, new = rescale
    before = list_snapshots(old)
    restored = redistribute(before, new, MAX_PARALLELISM)
    chunks = [snapshot.lists["splits"] for snapshot in restored]
    assert [item for chunk in chunks for item in chunk] == [
        item for snapshot in before for item in snapshot.lists["splits"]
    ]
    assert max(map(len, chunks)) - min(map(len, chunks)) <= 1


@pytest.mark.parametrize("rescale", RESCALES, ids=ids)
def test_union_state_reaches_every_new_subtask_in_full(rescale: tuple[int, int]) -> None:
    old, new = rescale
    before = [OperatorSnapshot("src", unions={"offsets": [index]}) for index in range(old)]
    restored = redistribute(before, new, MAX_PARALLELISM)
    assert [snapshot.unions for snapshot in restored] == [{"offsets": list(range(old))}] * new


@pytest.mark.parametrize("rescale", RESCALES, ids=ids)
def test_broadcast_state_is_the_first_old_subtasks_copy_everywhere(
    rescale: tuple[int, int],
) -> None:
    old, new = rescale
    before = [OperatorSnapshot("rules", broadcast={"r": {"v": index}}) for index in range(old)]
    restored = redistribute(before, new, MAX_PARALLELISM)
    assert [snapshot.broadcast for snapshot in restored] == [{"r": {"v": 0}}] * new


def test_new_subtasks_do_not_share_mutable_state() -> None:
    before = [OperatorSnapshot("rules", broadcast={"r": {"v": 0}}, unions={"u": [1]})]
    first, second = redistribute(before, 2, MAX_PARALLELISM)
    first.broadcast["r"]["v"] = 99
    first.unions["u"].append(2)
    assert second.broadcast == {"r": {"v": 0}}
    assert second.unions == {"u": [1]}


def test_every_new_subtask_keeps_the_operator_uid() -> None:
    restored = redistribute(keyed_snapshots(2), 3, MAX_PARALLELISM)
    assert [snapshot.uid for snapshot in restored] == ["sums"] * 3


def test_even_split_gives_the_first_chunks_one_item_more() -> None:
    assert even_split([1, 2, 3, 4, 5], 3) == [[1, 2], [3, 4], [5]]


def test_even_split_gives_empty_chunks_when_items_are_fewer_than_parts() -> None:
    assert even_split(["a"], 3) == [["a"], [], []]


def test_a_key_group_beyond_max_parallelism_is_rejected() -> None:
    old = [OperatorSnapshot("sums", keyed={20: {"count": {"a": 1}}})]
    with pytest.raises(ValueError, match=r"'sums'.*key group 20"):
        redistribute(old, 2, MAX_PARALLELISM)


def test_a_parallelism_above_max_parallelism_is_rejected() -> None:
    with pytest.raises(ValueError, match="parallelism 14"):
        redistribute(keyed_snapshots(2), 14, MAX_PARALLELISM)


def test_snapshots_of_different_operators_are_rejected() -> None:
    with pytest.raises(ValueError, match="several operators"):
        redistribute([OperatorSnapshot("a"), OperatorSnapshot("b")], 2, MAX_PARALLELISM)


def test_redistributing_nothing_is_rejected() -> None:
    with pytest.raises(ValueError, match="old subtasks"):
        redistribute([], 2, MAX_PARALLELISM)


def with_channel_state(index: int) -> OperatorSnapshot:
    return OperatorSnapshot(
        "sums",
        lists={"pending": [index]},
        input_channels={ChannelId(0, 0, index): [f"in-{index}"]},
        output_channels={ChannelId(1, index, 0): [f"out-{index}"]},
    )


def test_channel_state_stays_with_its_subtask_at_the_same_parallelism() -> None:
    new = redistribute([with_channel_state(0), with_channel_state(1)], 2, 8)

    assert [s.input_channels for s in new] == [{(0, 0, 0): ["in-0"]}, {(0, 0, 1): ["in-1"]}]
    assert [s.output_channels for s in new] == [{(1, 0, 0): ["out-0"]}, {(1, 1, 0): ["out-1"]}]


def test_channel_state_cannot_be_redistributed_to_another_parallelism() -> None:
    old = [with_channel_state(0), OperatorSnapshot("sums")]

    with pytest.raises(ValueError, match=r"in-flight .* parallelism 2; .* at parallelism 3"):
        redistribute(old, 3, 8)


def test_channels_without_records_do_not_stop_a_rescaling() -> None:
    idle = OperatorSnapshot("sums", input_channels={ChannelId(0, 0, 0): []})

    new = redistribute([idle], 2, 8)

    assert [s.input_channels for s in new] == [{}, {}]


def native(subtask: int) -> NativeKeyedState:
    return NativeKeyedState("rocksdb", {"subtask": subtask}, folder=Path(f"download-{subtask}"))


def test_native_keyed_state_stays_with_its_subtask_at_the_same_parallelism() -> None:
    old = [OperatorSnapshot("sums", native=native(index)) for index in range(2)]

    new = redistribute(old, 2, 8)

    assert [snapshot.native for snapshot in new] == [native(0), native(1)]


def test_native_keyed_state_cannot_be_redistributed_to_another_parallelism() -> None:
    old = [OperatorSnapshot("sums", native=native(index)) for index in range(2)]

    with pytest.raises(ValueError, match="read them into key groups"):
        redistribute(old, 3, 8)


def test_each_new_subtask_builds_on_the_old_files_holding_most_of_its_key_groups() -> None:
    # 2 -> 3 of 128 key groups: old 0..63 and 64..127; new 0..42, 43..85 and 86..127
    sources = native_sources([True, True], 3, 128)

    assert sources == [
        NativeSources(range(0, 43), 0),
        NativeSources(range(43, 86), 1, (0,)),  # 22 of its groups were old 1's, 21 old 0's
        NativeSources(range(86, 128), 1),
    ]


def test_scaling_in_inserts_the_other_old_subtasks_key_groups_into_the_first_of_equals() -> None:
    sources = native_sources([True, True, True, True], 2, 128)

    assert [(source.base, source.others) for source in sources] == [(0, (1,)), (2, (3,))]


def test_old_subtasks_that_left_no_files_are_nobodys_source() -> None:
    sources = native_sources([True, False], 2, 128)

    assert [(source.base, source.others) for source in sources] == [(0, ()), (None, ())]
