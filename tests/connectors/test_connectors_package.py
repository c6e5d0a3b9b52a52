import lockgate.connectors


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


def test_the_package_docstring_states_each_connectors_guarantee():
    doc = lockgate.connectors.__doc__ or ""
    assert all(
        f"`{name}`" in doc
        for name in lockgate.connectors.__all__
        if name not in ("ConnectorError", "RollingPolicy")
    )
