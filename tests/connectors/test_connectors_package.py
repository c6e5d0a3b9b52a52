import re
from pathlib import Path

import lockgate.connectors

GUIDE = Path(__file__).parents[2] / "docs" / "guides" / "connectors.md"


ERRORS = {"IngressClosed", "IngressFull", "IngressNotCommitted", "SubscriberTooSlow"}


def test_the_package_exports_every_connector_the_error_root_and_the_service_errors():
    assert sorted(lockgate.connectors.__all__) == [
        "CollectSink",
        "CollectionSource",
        "CommittedSink",
        "ConnectorError",
        "FileSink",
        "FileSource",
        "IngressClosed",
        "IngressFull",
        "IngressNotCommitted",
        "IngressSource",
        "KafkaSink",
        "KafkaSource",
        "PostgresSink",
        "PrintSink",
        "RedisStreamSink",
        "RedisStreamSource",
        "RollingPolicy",
        "S3FileSink",
        "SubscriberTooSlow",
    ]


def test_the_guarantee_table_of_the_connectors_guide_names_every_connector():
    rows = re.findall(r"^\| `(\w+)", GUIDE.read_text(), flags=re.MULTILINE)
    connectors = set(lockgate.connectors.__all__) - {"ConnectorError", "RollingPolicy", *ERRORS}

    assert connectors <= set(rows)
