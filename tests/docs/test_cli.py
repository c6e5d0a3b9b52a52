"""The page of the ``lockgate`` command documents exactly the commands its parser has.

The command is found through its entry point in pyproject.toml, so this follows it wherever
the module moves. Each leaf command (``lockgate savepoint inspect``) must have a section on
docs/reference/cli.md, headed with its name, whose table lists its arguments: positionals by
their metavar (``PATH``), options by their long flag (``--json``).
"""

from __future__ import annotations

import argparse
import importlib
import re
import tomllib
from collections.abc import Callable, Iterator
from typing import Any, NoReturn

import pytest

from tests.docs.pages import DOCS, ROOT

PAGE = DOCS / "reference" / "cli.md"
HEADING = re.compile(r"^## `(?P<command>lockgate[\w ]*)`$")
ROW = re.compile(r"^\| `(?P<argument>[\w-]+)` \|")


class Captured(Exception):
    def __init__(self, parser: argparse.ArgumentParser) -> None:
        super().__init__("parser captured")
        self.parser = parser


def entry_point() -> Callable[[list[str]], int]:
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    module, _, attribute = scripts["lockgate"].partition(":")
    main: Callable[[list[str]], int] = getattr(importlib.import_module(module), attribute)
    return main


def command_parser(monkeypatch: pytest.MonkeyPatch) -> argparse.ArgumentParser:
    """The parser ``main`` builds, taken from it at its first ``parse_args``."""

    def capture(self: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> NoReturn:
        raise Captured(self)

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", capture)
    with pytest.raises(Captured) as captured:
        entry_point()(["--help"])
    return captured.value.parser


def leaf_commands(
    parser: argparse.ArgumentParser, prefix: str = "lockgate"
) -> Iterator[tuple[str, list[str]]]:
    """Each command that takes no subcommand, with its arguments as the page names them."""
    subcommands = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subcommands:
        yield prefix, [argument_name(a) for a in parser._actions if a.dest != "help"]
    for action in subcommands:
        for name, child in action.choices.items():
            yield from leaf_commands(child, f"{prefix} {name}")


def argument_name(action: argparse.Action) -> str:
    if not action.option_strings:
        return str(action.metavar or action.dest.upper())
    return max(action.option_strings, key=len)


def documented_commands() -> dict[str, list[str]]:
    commands: dict[str, list[str]] = {}
    command = None
    for line in PAGE.read_text().splitlines():
        if heading := HEADING.match(line):
            command = heading["command"]
            commands[command] = []
        elif command is not None and (row := ROW.match(line)):
            commands[command].append(row["argument"])
    return commands


def test_the_page_documents_every_command_and_argument_of_the_parser(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    parsed = dict(leaf_commands(command_parser(monkeypatch)))

    assert documented_commands() == parsed


def test_the_parser_is_found_with_its_commands(monkeypatch: pytest.MonkeyPatch) -> None:
    parsed = dict(leaf_commands(command_parser(monkeypatch)))

    assert "lockgate savepoint inspect" in parsed
    assert "--json" in parsed["lockgate savepoint inspect"]
