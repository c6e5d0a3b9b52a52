"""The documents' pure parts: backpressure levels as Flink labels them, the plan as JSON."""

from __future__ import annotations

from collections.abc import Iterator

import orjson
import pytest

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import KeyedProcessFunction, OutputTag, StreamEnvironment
from lockgate.engine.web.plan import plan_document
from lockgate.engine.web.views import backpressure_level


class Passing(KeyedProcessFunction[int, int, int]):
    def process_element(self, value: int, ctx: object) -> Iterator[int]:
        yield value


@pytest.mark.parametrize(
    ("ratio", "level"),
    [(0.0, "OK"), (0.10, "OK"), (0.1001, "LOW"), (0.5, "LOW"), (0.5001, "HIGH"), (1.0, "HIGH")],
)
def test_backpressure_is_ok_up_to_ten_percent_low_up_to_half_and_high_above(
    ratio: float, level: str
) -> None:
    assert backpressure_level(ratio) == level


def test_the_plan_names_its_side_output_edges_and_is_plain_json() -> None:
    late = OutputTag[int]("late")
    env = StreamEnvironment(parallelism=2)
    numbers = env.from_source(CollectionSource(range(3)), uid="numbers")
    main = numbers.key_by(lambda n: n % 2).process(Passing(), uid="split")
    main.sink_to(CollectSink(), uid="out")
    main.side_output(late).sink_to(CollectSink(), uid="late-out")

    document = plan_document(env.plan())

    assert orjson.loads(orjson.dumps(document)) == document
    assert {
        (e["source"], e["target"], e["partitioning"], e["side_output"]) for e in document["edges"]
    } >= {(0, 1, "HASH", None)}
    assert [e["side_output"] for e in document["edges"]].count("late") == 1
