"""ModelContext: every model's randomness comes from the one seed, its uid and its names."""

from __future__ import annotations

from lockgate.engine.simulation import ModelContext


def test_the_same_seed_uid_and_names_give_the_same_draws() -> None:
    first = ModelContext("out", 7).random("writer", 0)
    second = ModelContext("out", 7).random("writer", 0)

    assert [first.random() for _ in range(3)] == [second.random() for _ in range(3)]


def test_another_seed_uid_or_name_gives_other_draws() -> None:
    draws = {
        ModelContext(uid, seed).random(name).random()
        for uid, seed, name in [("out", 7, "a"), ("out", 8, "a"), ("in", 7, "a"), ("out", 7, "b")]
    }

    assert len(draws) == 4
