"""Shared test settings.

Every async test runs on asyncio (pytest-asyncio, auto mode). Hypothesis has no deadline
(timings on the CI machines are noisy); under CI it is derandomized, so a run is repeatable.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import settings

settings.register_profile("dev", deadline=None)
settings.register_profile("ci", deadline=None, derandomize=True, print_blob=True)
settings.load_profile("ci" if os.environ.get("CI") else "dev")


def _service(variable: str, name: str) -> str:
    address = os.environ.get(variable)
    if address:
        return address
    message = f"{name} is not running ({variable} is unset); run the tests with `make test`"
    if os.environ.get("CI"):
        pytest.fail(message)  # in CI a missing service is a failure, never a skip
    pytest.skip(message)


@pytest.fixture(scope="session")
def postgres_dsn() -> str:
    """The DSN of the PostgreSQL server scripts/with-services started."""
    return _service("LOCKGATE_PG_DSN", "PostgreSQL")


@pytest.fixture(scope="session")
def redis_url() -> str:
    """The URL of the Redis server scripts/with-services started."""
    return _service("LOCKGATE_REDIS_URL", "Redis")


@pytest.fixture(scope="session")
def s3_endpoint() -> str:
    """The endpoint of the moto S3 server scripts/with-services started."""
    return _service("LOCKGATE_S3_ENDPOINT", "the S3 server")


@pytest.fixture(scope="session")
def kafka_bootstrap() -> str:
    """The bootstrap address of the Kafka-protocol broker (Tansu) scripts/with-services started."""
    return _service("LOCKGATE_KAFKA_BOOTSTRAP", "the Kafka broker")
