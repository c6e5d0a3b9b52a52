import re

import pytest

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import (
    DataStream,
    GraphError,
    KeyedProcessFunction,
    OutputTag,
    StreamEnvironment,
)

LATE = OutputTag("late")


class Running(KeyedProcessFunction[str, int, int]):
    def process_element(self, value, ctx):
        yield value


def numbers(env: StreamEnvironment, *, uid: str = "numbers") -> DataStream[int]:
    return env.from_source(CollectionSource([1, 2, 3]), uid=uid)


def plan_fails(message):
    return pytest.raises(GraphError, match=re.escape(message))


def test_a_job_without_operators_is_rejected_with_advice_to_add_a_source():
    env = StreamEnvironment()

    with plan_fails("the job has no operators; add a source with env.from_source()"):
        env.plan()


def test_two_operators_with_the_same_uid_are_rejected_naming_the_uid():
    env = StreamEnvironment()
    numbers(env).map(abs, uid="twice").map(abs, uid="twice").sink_to(CollectSink())

    with plan_fails("operator uid 'twice' is used twice"):
        env.plan()


def test_a_uid_repeated_across_separate_streams_is_rejected():
    env = StreamEnvironment()
    numbers(env, uid="numbers").sink_to(CollectSink(), uid="out")
    numbers(env, uid="numbers").sink_to(CollectSink(), uid="out2")

    with plan_fails("operator uid 'numbers' is used twice"):
        env.plan()


def test_reduce_on_a_non_keyed_stream_is_rejected_asking_for_key_by():
    env = StreamEnvironment()
    numbers(env).reduce(max, uid="sums").sink_to(CollectSink())

    with plan_fails(
        "operator 'sums' (reduce) needs a keyed stream; got a non-keyed stream; call key_by() first"
    ):
        env.plan()


def test_process_on_a_non_keyed_stream_is_rejected_asking_for_key_by():
    env = StreamEnvironment()
    numbers(env).process(Running(), uid="running").sink_to(CollectSink())

    with plan_fails("operator 'running' (process) needs a keyed stream"):
        env.plan()


def test_a_map_after_key_by_ends_the_keyed_stream_so_a_later_reduce_is_rejected():
    env = StreamEnvironment()
    numbers(env).key_by(str).map(abs).reduce(max, uid="sums").sink_to(CollectSink())

    with plan_fails("operator 'sums' (reduce) needs a keyed stream"):
        env.plan()


def test_reduce_and_process_on_a_keyed_stream_are_accepted():
    env = StreamEnvironment()
    keyed = numbers(env).key_by(str)
    keyed.reduce(max, uid="sums").sink_to(CollectSink(), uid="sums-out")
    keyed.process(Running(), uid="running").sink_to(CollectSink(), uid="running-out")

    assert env.plan().chain_of("sums").uids == ("sums", "sums-out")


def test_an_operator_with_parallelism_above_max_parallelism_is_rejected_naming_it():
    env = StreamEnvironment(max_parallelism=4)
    numbers(env).map(abs, uid="wide", parallelism=8).sink_to(CollectSink(), parallelism=8)

    with plan_fails("operator 'wide' has parallelism 8, outside 1..4 (max_parallelism)"):
        env.plan()


def test_an_operator_with_parallelism_zero_is_rejected_naming_it():
    env = StreamEnvironment()
    numbers(env).sink_to(CollectSink(), uid="out", parallelism=0)

    with plan_fails("operator 'out' has parallelism 0"):
        env.plan()


def test_a_stream_that_reaches_no_sink_is_rejected_naming_its_last_operator():
    env = StreamEnvironment()
    numbers(env).map(abs, uid="dangling")

    with plan_fails("the stream of operator 'dangling' reaches no sink; add .sink_to(...)"):
        env.plan()


def test_a_source_nobody_reads_is_rejected_naming_it():
    env = StreamEnvironment()
    numbers(env, uid="used").sink_to(CollectSink())
    numbers(env, uid="unused")

    with plan_fails("the stream of operator 'unused' reaches no sink"):
        env.plan()


def test_a_forward_edge_between_different_parallelisms_is_rejected_naming_both_operators():
    env = StreamEnvironment(parallelism=1)
    numbers(env).forward().map(abs, uid="wide", parallelism=2).sink_to(CollectSink())

    with plan_fails("operator 'wide' has a forward input from 'numbers' but parallelism 2 != 1"):
        env.plan()


def test_a_change_of_parallelism_without_explicit_partitioning_is_accepted():
    env = StreamEnvironment(parallelism=1)
    numbers(env).map(abs, uid="wide", parallelism=2).sink_to(CollectSink(), parallelism=2)

    assert env.plan().chain_of("wide").parallelism == 2


def test_an_environment_rejects_a_batch_size_larger_than_the_channel_capacity():
    with pytest.raises(ValueError, match=r"batch_size \(600\) must be .* at most channel_capacity"):
        StreamEnvironment(batch_size=600, channel_capacity=500)


def test_an_environment_rejects_a_batch_size_of_zero():
    with pytest.raises(ValueError, match=r"batch_size \(0\) must be at least 1"):
        StreamEnvironment(batch_size=0)


def test_an_environment_accepts_a_batch_size_equal_to_the_channel_capacity():
    env = StreamEnvironment(batch_size=500, channel_capacity=500)

    assert (env.batch_size, env.channel_capacity) == (500, 500)


def test_an_environment_rejects_a_default_parallelism_above_max_parallelism():
    with pytest.raises(ValueError, match=r"between 1 and max_parallelism \(4\); got 5"):
        StreamEnvironment(parallelism=5, max_parallelism=4)


async def lookup(value):
    return value


def split(env: StreamEnvironment) -> DataStream[int]:
    return numbers(env).key_by(str).process(Running(), uid="split")


def test_side_output_of_a_map_is_rejected_naming_it_and_the_operators_that_have_them():
    env = StreamEnvironment()
    doubled = numbers(env).map(abs, uid="doubled")

    with plan_fails(
        "operator 'doubled' (map) has no side outputs; side outputs come from process() "
        "(ctx.output(tag, value)), async_map(on_failure=tag) and windows "
        "(side_output_late_data(tag))"
    ):
        doubled.side_output(LATE)


def test_side_output_of_a_source_is_rejected_naming_it():
    env = StreamEnvironment()

    with plan_fails("operator 'numbers' (source) has no side outputs"):
        numbers(env).side_output(LATE)


def test_side_output_of_a_union_is_rejected_asking_for_it_before_the_union():
    env = StreamEnvironment()
    union = split(env).union(numbers(env, uid="more"))

    with plan_fails(
        "side_output(OutputTag('late')) needs the stream of one operator; got a union of "
        "'split', 'more'; call side_output() on each stream before union()"
    ):
        union.side_output(LATE)


def test_side_output_of_a_keyed_stream_is_rejected_asking_for_it_before_key_by():
    env = StreamEnvironment()
    keyed = split(env).key_by(str)

    with plan_fails(
        "side_output(OutputTag('late')) of operator 'split' needs the stream the operator's "
        "method returned; call side_output() on it before key_by(), rebalance(), broadcast() "
        "or forward()"
    ):
        keyed.side_output(LATE)


def test_side_output_of_a_side_output_is_rejected():
    env = StreamEnvironment()
    late = split(env).side_output(LATE)

    with plan_fails(
        "side_output(OutputTag('later')) of operator 'split': this stream is its side output "
        "OutputTag('late'), which has no side outputs"
    ):
        late.side_output(OutputTag("later"))


def test_side_output_of_an_async_map_failing_the_job_is_rejected_saying_to_set_on_failure():
    env = StreamEnvironment()
    calls = numbers(env).async_map(lookup, uid="calls")

    with plan_fails(
        "async_map 'calls' sends nothing to side output OutputTag('late'): its on_failure is "
        "'fail'; give it on_failure=OutputTag('late') to send its failed records there"
    ):
        calls.side_output(LATE)


def test_side_output_of_an_async_map_is_rejected_for_a_tag_other_than_its_on_failure():
    env = StreamEnvironment()
    calls = numbers(env).async_map(lookup, on_failure=OutputTag("failed"), uid="calls")

    with plan_fails("its on_failure is OutputTag('failed'); give it on_failure=OutputTag('late')"):
        calls.side_output(LATE)


def test_side_output_needs_an_output_tag_not_a_name():
    env = StreamEnvironment()

    with plan_fails("side_output() of 'split' needs an OutputTag; got 'late'"):
        split(env).side_output("late")  # type: ignore[arg-type]


def test_an_operator_read_only_through_a_side_output_reaches_a_sink():
    env = StreamEnvironment()
    numbers(env).async_map(lookup, on_failure=LATE, uid="calls").side_output(
        OutputTag("late")
    ).sink_to(CollectSink(), uid="failed")

    assert [edge.tag for edge in env.plan().edges] == [LATE]


@pytest.mark.parametrize(("name", "error"), [("", ValueError), (3, TypeError)])
def test_an_output_tag_needs_a_non_empty_name(name: object, error: type[Exception]) -> None:
    with pytest.raises(error, match="an OutputTag's name must"):
        OutputTag(name)  # type: ignore[arg-type]
