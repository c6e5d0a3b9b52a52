"""Every async test runs on asyncio and on trio, unless it is marked asyncio_only and says
why (tests/conftest.py): checked over the tests of this session."""

from __future__ import annotations

import inspect
from collections import defaultdict
from types import SimpleNamespace

import pytest

from tests import conftest


def is_async(item: pytest.Function) -> bool:
    function = getattr(item.obj, "hypothesis", None)
    inner = item.obj if function is None else function.inner_test
    return inspect.iscoroutinefunction(getattr(inner, "_anyio_original_func", inner))


def backends_by_test(items: list[pytest.Item]) -> dict[str, set[str]]:
    found: dict[str, set[str]] = defaultdict(set)
    for item in items:
        if isinstance(item, pytest.Function) and is_async(item):
            callspec = getattr(item, "callspec", None)
            backend = callspec.params.get("anyio_backend") if callspec else None
            found[f"{item.path}::{item.originalname}"].add(str(backend))
    return found


def asyncio_only(items: list[pytest.Item]) -> set[str]:
    return {
        f"{item.path}::{item.originalname}"
        for item in items
        if isinstance(item, pytest.Function) and item.get_closest_marker("asyncio_only")
    }


def test_every_async_test_runs_on_asyncio_and_trio_unless_it_says_why(
    request: pytest.FixtureRequest,
) -> None:
    items = request.session.items
    marked = asyncio_only(items)

    wrong = {
        test: backends
        for test, backends in backends_by_test(items).items()
        if backends != ({"asyncio"} if test in marked else {"asyncio", "trio"})
    }

    assert wrong == {}


class Definition:
    """What pytest_generate_tests reads of a test: its id and its closest marker."""

    nodeid = "tests/test_x.py::test_x"

    def __init__(self, marker: pytest.MarkDecorator | None) -> None:
        self.marker = None if marker is None else marker.mark

    def get_closest_marker(self, name: str) -> pytest.Mark | None:
        return self.marker if self.marker and name == self.marker.name else None


@pytest.mark.parametrize(
    ("marker", "backends"),
    [
        (None, ("asyncio", "trio")),
        (pytest.mark.asyncio_only(reason="aiokafka runs on asyncio only"), ("asyncio",)),
    ],
    ids=["unmarked", "asyncio_only"],
)
def test_a_test_runs_on_both_backends_or_on_asyncio_when_marked(
    marker: pytest.MarkDecorator | None, backends: tuple[str, ...]
) -> None:
    assert conftest.backends_of(SimpleNamespace(definition=Definition(marker))) == backends


def test_a_test_marked_asyncio_only_without_a_reason_is_refused() -> None:
    metafunc = SimpleNamespace(definition=Definition(pytest.mark.asyncio_only))

    with pytest.raises(pytest.UsageError, match=r"test_x: asyncio_only needs a reason="):
        conftest.backends_of(metafunc)
