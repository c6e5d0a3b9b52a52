"""The page of the ``lockgate`` command documents exactly the commands its parser has.

The command is found through its entry point in pyproject.toml, so this follows it wherever
the module moves. Each leaf command (``lockgate savepoint inspect``) must have a section on
docs/reference/cli.md, headed with its name, whose table lists its arguments: positionals by
their metavar (``PATH``), options by their long flag (``--json``).
"""

from __future__ import annotations

import importlib
import re
import tomllib
from collections.abc import Iterator

import click

from tests.docs.pages import DOCS, ROOT

PAGE = DOCS / "reference" / "cli.md"
HEADING = re.compile(r"^## `(?P<command>lockgate[\w ]*)`$")
ROW = re.compile(r"^\| `(?P<argument>[\w:|-]+)` \|")


def entry_point_group() -> click.Group:
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    module, _, _ = scripts["lockgate"].partition(":")
    group = importlib.import_module(module).lockgate
    assert isinstance(group, click.Group)
    return group


def leaf_commands(
    command: click.Command, prefix: str = "lockgate"
) -> Iterator[tuple[str, list[str]]]:
    """Each command that takes no subcommand, with its arguments as the page names them."""
    if isinstance(command, click.Group):
        for name, child in command.commands.items():
            yield from leaf_commands(child, f"{prefix} {name}")
        return
    yield prefix, [argument_name(p) for p in command.params if p.name != "help"]


def argument_name(parameter: click.Parameter) -> str:
    if isinstance(parameter, click.Argument):
        return str(parameter.metavar or parameter.name).upper()
    return max(parameter.opts, key=len)


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


def test_the_page_documents_every_command_and_argument_of_the_parser() -> None:
    parsed = dict(leaf_commands(entry_point_group()))

    assert documented_commands() == parsed


def test_the_parser_is_found_with_its_commands() -> None:
    parsed = dict(leaf_commands(entry_point_group()))

    assert "lockgate savepoint inspect" in parsed
    assert "--json" in parsed["lockgate savepoint inspect"]
    assert "--savepoint-on-stop" in parsed["lockgate run"]
