"""The configuration page lists every option with its default, as the code has them.

Each table of docs/reference/configuration.md sits under a heading naming what it documents;
OPTIONS maps that heading to the callables (or dataclasses) whose parameters (or fields) the
table must list, in order, each with its default. A new option, a renamed one or a changed
default fails here until the page says so.
"""

from __future__ import annotations

import dataclasses
import enum
import inspect
import re
from collections.abc import Callable
from typing import Any

import pytest

from lockgate.connectors import RollingPolicy
from lockgate.engine import (
    AsyncRetry,
    CheckpointConfig,
    DataStream,
    RestartStrategy,
    StreamEnvironment,
)
from lockgate.engine.state import StateTtlConfig
from tests.docs.pages import DOCS

PAGE = DOCS / "reference" / "configuration.md"

OPTIONS: dict[str, tuple[Callable[..., Any] | type, ...]] = {
    "`StreamEnvironment(...)`": (StreamEnvironment,),
    "`env.from_source(...)`": (StreamEnvironment.from_source,),
    "`env.enable_checkpointing(...)` and `CheckpointConfig`": (
        StreamEnvironment.enable_checkpointing,
        CheckpointConfig,
    ),
    "`env.set_state_backend(...)`": (StreamEnvironment.set_state_backend,),
    "`RestartStrategy.fixed_delay(...)`": (RestartStrategy.fixed_delay,),
    "`RestartStrategy.exponential_delay(...)`": (RestartStrategy.exponential_delay,),
    "`RestartStrategy.failure_rate(...)`": (RestartStrategy.failure_rate,),
    "`env.execute(...)` and `env.start(...)`": (StreamEnvironment.execute, StreamEnvironment.start),
    "`stream.async_map(...)`": (DataStream.async_map,),
    "`AsyncRetry(...)`": (AsyncRetry,),
    "`StateTtlConfig(...)`": (StateTtlConfig,),
    "`RollingPolicy(...)`": (RollingPolicy,),
}

HEADING = re.compile(r"^#{2,3} (?P<title>.+)$")
ROW = re.compile(r"^\| `(?P<option>\w+)` \| (?P<default>required|`[^`]*`) \|")

Options = list[tuple[str, str]]


def documented_tables() -> dict[str, Options]:
    """Each heading of the page with the (option, default) rows of the table under it."""
    tables: dict[str, Options] = {}
    title = ""
    for line in PAGE.read_text().splitlines():
        if heading := HEADING.match(line):
            title = heading["title"]
        elif row := ROW.match(line):
            tables.setdefault(title, []).append((row["option"], row["default"].strip("`")))
    return tables


def shown(default: Any) -> str:
    """A default as the page writes it."""
    if default is inspect.Parameter.empty or default is dataclasses.MISSING:
        return "required"
    if isinstance(default, enum.Enum):
        return f"{type(default).__name__}.{default.name}"
    return repr(default)


def options_of(target: Callable[..., Any] | type) -> Options:
    """The options of a dataclass (its fields) or a callable (its parameters but self)."""
    if dataclasses.is_dataclass(target):
        return [(f.name, shown(f.default)) for f in dataclasses.fields(target)]
    parameters = inspect.signature(target).parameters.values()
    return [(p.name, shown(p.default)) for p in parameters if p.name != "self"]


def test_every_table_of_the_page_is_checked_against_the_code() -> None:
    assert sorted(documented_tables()) == sorted(OPTIONS)


@pytest.mark.parametrize(
    ("heading", "target"),
    [(heading, target) for heading, targets in OPTIONS.items() for target in targets],
    ids=lambda value: value if isinstance(value, str) else value.__qualname__,
)
def test_the_table_lists_every_option_with_its_default(heading: str, target: Any) -> None:
    assert documented_tables().get(heading) == options_of(target)


def test_a_changed_default_is_seen() -> None:
    def configure(*, batch_size: int = 256) -> None: ...

    assert options_of(configure) == [("batch_size", "256")]
    assert options_of(StreamEnvironment)[2] == ("batch_size", "512")
