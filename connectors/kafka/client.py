"""The aiokafka clients of the Kafka connectors: imported with the extra's hint, and started."""

from __future__ import annotations

from typing import Any

import anyio

from lockgate.connectors.errors import ConnectorError

try:
    # aiokafka ships no type hints
    from aiokafka import (  # type: ignore[import-untyped]
        AIOKafkaConsumer,
        AIOKafkaProducer,
        TopicPartition,
    )
    from aiokafka.errors import KafkaError  # type: ignore[import-untyped]
except ImportError as error:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        "KafkaSource and KafkaSink need aiokafka; install the extra: pip install 'lockgate[kafka]'"
    ) from error

__all__ = ["AIOKafkaConsumer", "AIOKafkaProducer", "KafkaError", "TopicPartition"]

# How long a client waits for the broker before it gives up (connect, metadata, first fetch).
_REQUEST_TIMEOUT_S = 10.0


async def _started(client: Any, bootstrap: str) -> Any:
    try:
        await client.start()
    except KafkaError as error:
        await client.stop()
        raise ConnectorError(
            f"cannot reach the Kafka broker at {bootstrap}: {error}; check the bootstrap "
            "address and that the broker is running"
        ) from error
    except BaseException:  # cancelled while it connects: leave no client open
        with anyio.CancelScope(shield=True):
            await client.stop()
        raise
    return client
