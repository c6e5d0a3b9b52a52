import re
from pathlib import Path

import lockgate.connectors

GUIDE = Path(__file__).parents[2] / "docs" / "guides" / "connectors.md"


def test_the_package_exports_every_connector_and_the_error_root():
    assert sorted(lockgate.connectors.__all__) == [
        "CollectSink",
        "CollectionSource",
        "ConnectorError",
        "FileSink",
        "FileSource",
        "KafkaSink",
        "KafkaSource",
        "PostgresSink",
        "PrintSink",
        "RedisStreamSink",
        "RedisStreamSource",
        "RollingPolicy",
        "S3FileSink",
    ]


def test_the_guarantee_table_of_the_connectors_guide_names_every_connector():
    rows = re.findall(r"^\| `(\w+)", GUIDE.read_text(), flags=re.MULTILINE)
    connectors = set(lockgate.connectors.__all__) - {"ConnectorError", "RollingPolicy"}

    assert connectors <= set(rows)
