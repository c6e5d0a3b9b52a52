"""YoungGeneration: the young collections' threshold, raised while any holder runs."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from lockgate.engine.io.young_generation import YOUNG_THRESHOLD, YoungGeneration


@pytest.fixture(autouse=True)
def default_threshold() -> Iterator[None]:
    saved = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield
    gc.set_threshold(*saved)


def test_a_holder_raises_the_young_threshold_and_puts_it_back_when_it_lets_go() -> None:
    young = YoungGeneration()

    young.hold()
    held = gc.get_threshold()
    young.release()

    assert (held, gc.get_threshold()) == ((YOUNG_THRESHOLD, 10, 10), (700, 10, 10))


def test_the_threshold_stays_raised_until_the_last_holder_lets_go() -> None:
    young = YoungGeneration()
    young.hold()
    young.hold()

    young.release()

    assert gc.get_threshold() == (YOUNG_THRESHOLD, 10, 10)
    young.release()
    assert gc.get_threshold() == (700, 10, 10)


def test_a_threshold_someone_else_set_meanwhile_is_kept() -> None:
    young = YoungGeneration()
    young.hold()
    gc.set_threshold(5_000, 20, 20)

    young.release()

    assert gc.get_threshold() == (5_000, 20, 20)


def test_a_threshold_already_higher_is_left_alone() -> None:
    gc.set_threshold(100_000, 10, 10)
    young = YoungGeneration()

    young.hold()
    held = gc.get_threshold()
    young.release()

    assert held == gc.get_threshold() == (100_000, 10, 10)
