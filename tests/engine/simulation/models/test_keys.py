"""Key distributions: every key equally likely, or hot keys after Zipf's law."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from lockgate.engine.simulation import UniformKeys, ZipfKeys


def counts(keys: UniformKeys | ZipfKeys, draws: int = 50_000) -> Counter[int]:
    rng = random.Random(1)
    return Counter(keys.draw(rng) for _ in range(draws))


def test_uniform_keys_come_from_the_whole_range_about_equally() -> None:
    seen = counts(UniformKeys(10))

    assert set(seen) == set(range(10))
    assert max(seen.values()) / min(seen.values()) < 1.1


def test_zipf_keys_draw_the_hottest_key_as_often_as_its_probability_says() -> None:
    keys = ZipfKeys(1_000, exponent=1.0)
    seen = counts(keys)

    assert seen.most_common(1)[0][0] == 0
    assert seen[0] / 50_000 == pytest.approx(keys.probability(0), rel=0.05)
    assert keys.probability(0) == pytest.approx(1 / 7.485, rel=0.01)


def test_zipf_probabilities_add_up_to_one() -> None:
    keys = ZipfKeys(50, exponent=1.2)

    assert sum(keys.probability(key) for key in range(50)) == pytest.approx(1.0)


def test_a_key_count_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="ZipfKeys: count must be a whole number of keys"):
        ZipfKeys(0)
