"""Placement: which worker hosts each subtask, the same for every attempt."""

from __future__ import annotations

import pytest

from lockgate.engine.graph.placement import place_subtasks
from lockgate.engine.state.key_groups import key_group_range


def test_subtasks_of_equal_index_and_parallelism_share_a_worker() -> None:
    placement = place_subtasks([(0, 4), (1, 4)], workers=2, max_parallelism=128)

    assert placement.subtasks_of(0) == ((0, 0), (0, 1), (1, 0), (1, 1))
    assert placement.subtasks_of(1) == ((0, 2), (0, 3), (1, 2), (1, 3))


def test_a_subtask_runs_where_the_first_key_group_of_its_range_is_owned() -> None:
    placement = place_subtasks([(0, 3)], workers=2, max_parallelism=128)

    for index in range(3):
        first = key_group_range(index, 128, 3).start
        assert placement.worker_of(0, index) == (0 if first < 64 else 1)


def test_the_same_plan_and_worker_count_place_every_subtask_the_same_way() -> None:
    chains = [(0, 1), (1, 3), (2, 5)]

    first = place_subtasks(chains, workers=3, max_parallelism=16)
    again = place_subtasks(chains, workers=3, max_parallelism=16)

    assert first == again


def test_a_chain_of_parallelism_one_runs_on_the_first_worker() -> None:
    placement = place_subtasks([(0, 1), (1, 2)], workers=2, max_parallelism=128)

    assert placement.worker_of(0, 0) == 0
    assert placement.describe() == "worker 0: chain 0 [0], chain 1 [0]\nworker 1: chain 1 [1]"


def test_a_worker_left_without_subtasks_says_so() -> None:
    placement = place_subtasks([(0, 1)], workers=2, max_parallelism=128)

    assert placement.describe().splitlines()[1] == "worker 1: nothing"


def test_fewer_than_one_worker_is_refused() -> None:
    with pytest.raises(ValueError, match="workers must be at least 1"):
        place_subtasks([(0, 1)], workers=0, max_parallelism=128)
