from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import DataStream, OutputTag, StreamEnvironment
from lockgate.engine.graph.job_graph import Partitioning


def numbers(env: StreamEnvironment, *, uid: str = "numbers", parallelism=None) -> DataStream[int]:
    return env.from_source(CollectionSource(range(10)), uid=uid, parallelism=parallelism)


def keyed_sums(env: StreamEnvironment) -> None:
    (
        numbers(env)
        .map(abs, uid="abs")
        .key_by(lambda n: n % 3)
        .reduce(max, uid="sums")
        .sink_to(CollectSink(), uid="out")
    )


def chain_uids(env: StreamEnvironment) -> list[tuple[str, ...]]:
    return [chain.uids for chain in env.plan().chains]


def test_forward_operators_of_equal_parallelism_share_one_chain():
    env = StreamEnvironment(parallelism=2)
    (numbers(env).map(abs, uid="abs").filter(bool, uid="nonzero").sink_to(CollectSink(), uid="out"))

    assert chain_uids(env) == [("numbers", "abs", "nonzero", "out")]


def test_a_single_chain_plan_has_no_edges_between_chains():
    env = StreamEnvironment(parallelism=2)
    numbers(env).map(abs).sink_to(CollectSink())

    assert env.plan().edges == ()


def test_key_by_breaks_the_chain_with_a_hash_edge_at_parallelism_two():
    env = StreamEnvironment(parallelism=2)
    keyed_sums(env)

    assert chain_uids(env) == [("numbers", "abs"), ("sums", "out")]
    assert [edge.partitioning for edge in env.plan().edges] == [Partitioning.HASH]


def test_the_plan_renders_its_chains_and_the_edges_between_them():
    env = StreamEnvironment(parallelism=2)
    keyed_sums(env)

    assert str(env.plan()) == (
        "chain 0 x2: numbers -> abs\nchain 1 x2: sums -> out\nchain 0 --hash--> chain 1"
    )


def test_key_by_at_parallelism_one_chains_everything_because_no_record_moves():
    env = StreamEnvironment(parallelism=1)
    keyed_sums(env)

    assert chain_uids(env) == [("numbers", "abs", "sums", "out")]


def test_a_change_of_parallelism_breaks_the_chain_with_a_rebalance_edge():
    env = StreamEnvironment(parallelism=2)
    numbers(env, parallelism=1).map(abs, uid="abs").sink_to(CollectSink(), uid="out")

    plan = env.plan()
    assert [chain.uids for chain in plan.chains] == [("numbers",), ("abs", "out")]
    assert [edge.partitioning for edge in plan.edges] == [Partitioning.REBALANCE]


def test_an_explicit_rebalance_breaks_the_chain_at_equal_parallelism():
    env = StreamEnvironment(parallelism=2)
    numbers(env).rebalance().map(abs, uid="abs").sink_to(CollectSink(), uid="out")

    assert chain_uids(env) == [("numbers",), ("abs", "out")]


def test_a_broadcast_breaks_the_chain_at_parallelism_two():
    env = StreamEnvironment(parallelism=2)
    numbers(env).broadcast().sink_to(CollectSink(), uid="out")

    assert [edge.partitioning for edge in env.plan().edges] == [Partitioning.BROADCAST]


def test_a_union_starts_a_chain_with_one_input_per_unioned_stream():
    env = StreamEnvironment(parallelism=2)
    left, right = numbers(env, uid="left"), numbers(env, uid="right")
    left.union(right).map(abs, uid="merged").sink_to(CollectSink(), uid="out")

    plan = env.plan()
    merged = plan.chain_of("merged")
    assert [chain.uids for chain in plan.chains] == [("left",), ("right",), ("merged", "out")]
    assert [edge.upstream.uids for edge in plan.inputs(merged)] == [("left",), ("right",)]


def test_an_operator_with_two_consumers_is_chained_to_neither():
    env = StreamEnvironment(parallelism=2)
    source = numbers(env)
    source.map(abs, uid="abs").sink_to(CollectSink(), uid="abs-out")
    source.map(str, uid="text").sink_to(CollectSink(), uid="text-out")

    assert chain_uids(env) == [("numbers",), ("abs", "abs-out"), ("text", "text-out")]


async def failing(n):
    raise ValueError(n)


FAILED = OutputTag("failed")


def test_a_side_output_edge_never_chains_so_its_operator_ends_its_chain():
    env = StreamEnvironment(parallelism=2)
    numbers(env).async_map(failing, on_failure=FAILED, uid="calls").side_output(
        FAILED
    ).forward().sink_to(CollectSink(), uid="failed")

    plan = env.plan()
    assert chain_uids(env) == [("numbers", "calls"), ("failed",)]
    assert [(edge.partitioning, edge.tag) for edge in plan.edges] == [
        (Partitioning.FORWARD, FAILED)
    ]


def test_an_operator_with_a_main_and_a_side_consumer_is_chained_to_neither():
    env = StreamEnvironment(parallelism=1)
    calls = numbers(env).async_map(failing, on_failure=FAILED, uid="calls")
    calls.sink_to(CollectSink(), uid="out")
    calls.side_output(FAILED).sink_to(CollectSink(), uid="failed")

    assert chain_uids(env) == [("numbers", "calls"), ("out",), ("failed",)]


def test_the_plan_shows_the_tag_of_a_side_output_edge():
    env = StreamEnvironment(parallelism=2)
    calls = numbers(env).async_map(failing, on_failure=FAILED, uid="calls")
    calls.sink_to(CollectSink(), uid="out")
    calls.side_output(FAILED).key_by(abs).sink_to(CollectSink(), uid="failed")

    assert env.plan().describe().splitlines()[3:] == [
        "chain 0 --forward--> chain 1",
        "chain 0 --hash[failed]--> chain 2",
    ]


def test_chain_of_finds_the_chain_running_an_operator():
    env = StreamEnvironment(parallelism=2)
    keyed_sums(env)

    assert env.plan().chain_of("out").uids == ("sums", "out")


def test_a_chain_is_headed_by_its_input_operator_and_ends_at_its_output_operator():
    env = StreamEnvironment(parallelism=2)
    keyed_sums(env)

    chain = env.plan().chain_of("sums")
    assert (chain.head.uid, chain.tail.uid) == ("sums", "out")


def test_a_chain_name_joins_its_operator_names():
    env = StreamEnvironment()
    numbers(env).map(abs, name="absolute").sink_to(CollectSink(), name="collect")

    assert env.plan().chains[0].name == "numbers -> absolute -> collect"


def test_a_forward_edge_has_one_channel_per_subtask():
    env = StreamEnvironment(parallelism=3)
    left, right = numbers(env, uid="left"), numbers(env, uid="right")
    left.union(right).sink_to(CollectSink())

    assert len(env.plan().channels()) == 3 + 3


def test_a_hash_edge_has_a_channel_from_every_upstream_to_every_downstream_subtask():
    env = StreamEnvironment(parallelism=3)
    numbers(env, parallelism=2).key_by(str).reduce(max).sink_to(CollectSink())

    assert len(env.plan().channels()) == 2 * 3


def test_channel_count_sums_every_edge():
    env = StreamEnvironment(parallelism=2)
    left, right = numbers(env, uid="left"), numbers(env, uid="right")
    merged = left.union(right).map(abs)
    sums = merged.key_by(str).reduce(max, parallelism=3)
    sums.sink_to(CollectSink(), parallelism=1)

    assert len(env.plan().channels()) == (2 + 2) + 2 * 3 + 3 * 1


def test_a_forward_channel_joins_subtasks_of_the_same_index():
    env = StreamEnvironment(parallelism=2)
    numbers(env).union(numbers(env, uid="other")).sink_to(CollectSink())

    pairs = [(c.upstream_index, c.downstream_index) for c in env.plan().channels()]
    assert pairs == [(0, 0), (1, 1), (0, 0), (1, 1)]


def test_subtask_count_sums_the_parallelism_of_every_chain():
    env = StreamEnvironment(parallelism=2)
    sums = numbers(env, parallelism=1).key_by(str).reduce(max, parallelism=4)
    sums.sink_to(CollectSink(), parallelism=4)

    assert env.plan().subtask_count == 1 + 4


def test_disable_chaining_runs_an_operator_in_a_chain_of_its_own_at_parallelism_one():
    env = StreamEnvironment(parallelism=1)
    numbers(env).map(abs, uid="abs").disable_chaining().filter(bool, uid="odd").sink_to(
        CollectSink(), uid="out"
    )

    assert chain_uids(env) == [("numbers",), ("abs",), ("odd", "out")]


def test_start_new_chain_breaks_the_chain_before_an_operator_but_not_after_it():
    env = StreamEnvironment(parallelism=1)
    numbers(env).map(abs, uid="abs").start_new_chain().filter(bool, uid="odd").sink_to(
        CollectSink(), uid="out"
    )

    assert chain_uids(env) == [("numbers",), ("abs", "odd", "out")]


def test_a_sink_with_chaining_disabled_reads_its_own_channel():
    env = StreamEnvironment(parallelism=1)
    numbers(env).sink_to(CollectSink(), uid="out").disable_chaining()

    plan = env.plan()
    assert [chain.uids for chain in plan.chains] == [("numbers",), ("out",)]
    assert [edge.partitioning for edge in plan.edges] == [Partitioning.FORWARD]
