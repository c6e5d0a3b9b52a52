"""find_bottleneck: the busy chain whose input is backpressured, or why there is none."""

from __future__ import annotations

from lockgate.engine.simulation.bottleneck import ChainLoad, find_bottleneck


def load(
    chain_id: int, busy: float, backpressured: float, upstream: tuple[int, ...] = ()
) -> ChainLoad:
    idle = 1.0 - busy - backpressured
    return ChainLoad(
        chain_id, f"c{chain_id}", (f"op{chain_id}",), busy, backpressured, idle, upstream
    )


def test_the_busy_chain_behind_a_backpressured_one_is_the_bottleneck() -> None:
    bottleneck, reason = find_bottleneck([load(0, 0.0, 0.9), load(1, 0.99, 0.0, (0,))])

    assert bottleneck is not None
    assert (bottleneck.uids, bottleneck.upstream) == (("op1",), ("c0",))
    assert reason == (
        "the bottleneck is 'op1' (chain 'c1'): busy 99.0% of the time while 'c0' upstream is "
        "backpressured 90.0%"
    )


def test_a_backpressured_chain_is_never_the_bottleneck_itself() -> None:
    loads = [load(0, 0.0, 0.9), load(1, 0.3, 0.6, (0,)), load(2, 0.95, 0.0, (1,))]

    bottleneck, _ = find_bottleneck(loads)

    assert bottleneck is not None and bottleneck.uids == ("op2",)


def test_of_two_candidates_the_busier_is_the_bottleneck() -> None:
    loads = [load(0, 0.0, 0.9), load(1, 0.7, 0.0, (0,)), load(2, 0.0, 0.8), load(3, 0.9, 0.0, (2,))]

    bottleneck, _ = find_bottleneck(loads)

    assert bottleneck is not None and bottleneck.uids == ("op3",)


def test_a_job_that_keeps_up_has_no_bottleneck() -> None:
    bottleneck, reason = find_bottleneck([load(0, 0.1, 0.1), load(1, 0.5, 0.0, (0,))])

    assert bottleneck is None
    assert "no operator is backpressured more than 50%" in reason


def test_one_chain_has_no_channel_to_tell_a_bottleneck_by() -> None:
    bottleneck, reason = find_bottleneck([load(0, 1.0, 0.0)])

    assert bottleneck is None
    assert "disable_chaining()" in reason
