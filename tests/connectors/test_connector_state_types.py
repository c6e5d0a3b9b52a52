"""Connectors declare the types savepoints meet in their jobs, under stable names: the
two-phase-commit sinks their transactions, the Kafka and Redis sources their records (which
sinks' transactions and operators keep). Each comes back from the canonical format equal and
of its own type. The other connectors keep plain data; see test_*_savepoint.py."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from lockgate.connectors import FileSink
from lockgate.connectors.files import FileTransaction
from lockgate.connectors.kafka import KafkaRecord, KafkaSource
from lockgate.connectors.postgres.sink import PostgresSink, PostgresTransaction
from lockgate.connectors.redis import RedisStreamSource, StreamEntry
from lockgate.connectors.s3 import S3FileSink, S3FileTransaction
from lockgate.connectors.service import CommittedSink, CommittedTransaction
from lockgate.engine import Sink, Source
from lockgate.engine.io.transactions import TransactionLog
from lockgate.engine.savepoints.values import ValueCodec

DSN = "postgresql://nobody@127.0.0.1:1/none"  # never connected to


def file_case() -> tuple[Sink[Any], Any, str]:
    txn = FileTransaction("/out", "out", 1, "0123456789ab", ".txt", [0, 1, 2])
    return FileSink(Path("/out")), txn, "lockgate.FileTransaction"


def s3_case() -> tuple[Sink[Any], Any, str]:
    txn = S3FileTransaction("bucket", "out/part-out-1-abc.txt", "upload-1", [(1, '"e1"')])
    return S3FileSink("bucket", "out"), txn, "lockgate.S3FileTransaction"


def postgres_case() -> tuple[Sink[Any], Any, str]:
    sink: PostgresSink[int] = PostgresSink(DSN, table="numbers", columns=["value"])
    return (
        sink,
        PostgresTransaction("lockgate/job/out/0-0123456789ab/1/", 3),
        ("lockgate.PostgresTransaction"),
    )


def committed_case() -> tuple[Sink[Any], Any, str]:
    txn = CommittedTransaction("job/run/0/1/4", [{"order": "o1"}, 2])
    return CommittedSink(), txn, "lockgate.CommittedTransaction"


CASES = [file_case, s3_case, postgres_case, committed_case]


def snapshotted_log(txn: Any) -> list[Any]:
    """A writer's log at a snapshot: one transaction pre-committed, the next one open."""
    log: TransactionLog[Any] = TransactionLog()
    log.pre_commit(7, txn)
    log.begin(copy.deepcopy(txn))
    return log.to_state()


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.__name__)
def test_a_sinks_transaction_log_comes_back_from_the_savepoint_format_equal(case: Any) -> None:
    sink, txn, _ = case()
    state = snapshotted_log(txn)
    codec = ValueCodec(sink.state_types())

    restored = codec.decode(codec.encode(state))

    assert restored == state
    assert [type(item["transaction"]) for item in restored] == [type(txn)] * 2


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.__name__)
def test_a_sinks_transaction_type_is_written_under_a_stable_name(case: Any) -> None:
    sink, txn, name = case()
    assert [(codec.cls, codec.name) for codec in sink.state_types()] == [(type(txn), name)]


def kafka_case() -> tuple[Source[Any], Any, str]:
    record = KafkaRecord("in", 2, 41, b"key", None, 1_700_000_000_000, (("trace", b"\x00"),))
    return KafkaSource("127.0.0.1:1", ["in"]), record, "lockgate.KafkaRecord"


def redis_case() -> tuple[Source[Any], Any, str]:
    entry = StreamEntry("in", "1700000000000-3", {"n": "7"})
    return RedisStreamSource("redis://127.0.0.1:1", ["in"]), entry, "lockgate.StreamEntry"


RECORD_CASES = [kafka_case, redis_case]


@pytest.mark.parametrize("case", RECORD_CASES, ids=lambda case: case.__name__)
def test_a_sources_records_come_back_from_the_savepoint_format_equal(case: Any) -> None:
    source, record, _ = case()
    codec = ValueCodec(source.state_types())

    restored = codec.decode(codec.encode([record, (record,)]))

    assert restored == [record, (record,)]
    assert type(restored[0]) is type(record) and type(restored[1]) is tuple


@pytest.mark.parametrize("case", RECORD_CASES, ids=lambda case: case.__name__)
def test_a_sources_record_type_is_written_under_a_stable_name(case: Any) -> None:
    source, record, name = case()
    assert [(codec.cls, codec.name) for codec in source.state_types()] == [(type(record), name)]
