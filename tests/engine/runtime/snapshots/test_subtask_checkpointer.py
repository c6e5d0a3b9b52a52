"""Where a subtask's snapshot is encoded: on the event loop when small, in a worker thread
when large, counting the records a sink's transactions hold as well as keyed entries.

The metrics pickle a few sampled batches on the loop too (``RecordBytes``: the first batch,
then one per ``SAMPLE_EVERY`` records), so the tests count pickles per thread."""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

from lockgate.connectors import CollectionSource
from lockgate.engine import StreamEnvironment, run
from lockgate.engine.testing import RecordingTwoPhaseCommitSink

PICKLED_IN: Counter[int] = Counter()  # per thread, the Noted records it pickled


class Noted:
    """A record that notes which thread pickles it."""

    def __init__(self, number: int) -> None:
        self.number = number

    def __reduce__(self) -> tuple[Any, ...]:
        PICKLED_IN[threading.get_ident()] += 1
        return (Noted, (self.number,))


def threads_pickling_a_sink_transaction_of(records: int) -> Counter[int]:
    """Run a job whose final checkpoint pre-commits one transaction of ``records`` records."""
    PICKLED_IN.clear()
    env = StreamEnvironment()
    sink = RecordingTwoPhaseCommitSink[Noted]()
    source = CollectionSource([Noted(i) for i in range(records)])
    env.from_source(source, uid="numbers").sink_to(sink, uid="out")
    run(env.execute, "noted")
    assert len(sink.committed) == records
    return Counter(PICKLED_IN)


def test_a_sink_transaction_holding_many_records_is_encoded_off_the_event_loop():
    threads = threads_pickling_a_sink_transaction_of(50_000)
    on_loop = threads.pop(threading.get_ident(), 0)

    assert sum(threads.values()) >= 50_000  # the transaction, encoded in a worker thread
    assert on_loop <= 1_024  # no more than the metrics' samples


def test_a_sink_transaction_of_a_few_records_is_encoded_on_the_event_loop():
    assert set(threads_pickling_a_sink_transaction_of(10)) == {threading.get_ident()}
