"""DataStream's chaining methods, as a job author calls them."""

from __future__ import annotations

import pytest

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import GraphError, StreamEnvironment


def test_disable_chaining_returns_the_stream_so_the_job_goes_on_from_it() -> None:
    env = StreamEnvironment()
    numbers = env.from_source(CollectionSource(range(3)), uid="numbers")

    assert numbers.disable_chaining() is numbers


def test_disable_chaining_of_a_keyed_stream_is_refused_naming_its_operator() -> None:
    env = StreamEnvironment()
    keyed = env.from_source(CollectionSource(range(3)), uid="numbers").key_by(lambda n: n)

    with pytest.raises(GraphError, match="operator 'numbers' needs the stream"):
        keyed.disable_chaining()


def test_a_sink_returns_itself_from_disable_chaining() -> None:
    env = StreamEnvironment()
    sink = env.from_source(CollectionSource(range(3))).sink_to(CollectSink(), uid="out")

    assert sink.disable_chaining() is sink
