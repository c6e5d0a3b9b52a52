"""Shared test settings.

Every ``async def`` test and fixture runs through anyio's pytest plugin (``anyio_mode =
"auto"`` in pyproject.toml), once on asyncio and once on trio: ``pytest_generate_tests``
below parametrizes ``anyio_backend`` for each of them, so a test's id ends in ``[asyncio]``
or ``[trio]``. A test that cannot run on trio says why with
``@pytest.mark.asyncio_only(reason=...)`` (or a module's ``pytestmark``): its client library
is asyncio's (asyncpg, redis, aiokafka, aiobotocore) or it tests asyncio itself. It then
runs on asyncio alone. Hypothesis has no deadline (timings on the CI machines are noisy);
under CI it is derandomized, so a run is repeatable.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import settings

settings.register_profile("dev", deadline=None)
settings.register_profile("ci", deadline=None, derandomize=True, print_blob=True)
settings.load_profile("ci" if os.environ.get("CI") else "dev")

BACKENDS = ("asyncio", "trio")
ASYNCIO_ONLY = "asyncio_only"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{ASYNCIO_ONLY}(reason): the async test runs on asyncio alone, never on trio; "
        "the reason names the asyncio-only library or API it needs",
    )


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Run every anyio test on each backend, or on asyncio alone when it says why."""
    if "anyio_backend" in metafunc.fixturenames:
        metafunc.parametrize("anyio_backend", backends_of(metafunc), indirect=True, scope="module")


def backends_of(metafunc: pytest.Metafunc) -> tuple[str, ...]:
    """Both backends, or asyncio alone for a test marked asyncio_only with a reason."""
    marker = metafunc.definition.get_closest_marker(ASYNCIO_ONLY)
    if marker is None:
        return BACKENDS
    if not marker.kwargs.get("reason"):
        raise pytest.UsageError(
            f"{metafunc.definition.nodeid}: {ASYNCIO_ONLY} needs a reason= naming the "
            "asyncio-only library or API the test uses"
        )
    return ("asyncio",)


@pytest.fixture(scope="module")
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """The backend an async test runs on; pytest_generate_tests gives the values."""
    return str(request.param)


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
