"""``lockgate simulate SCENARIO``: run a scenario file on virtual time (engine/simulation/)."""

from __future__ import annotations

from pathlib import Path

import click

from lockgate.engine.simulation.cli import simulate_main

__all__ = ["simulate"]


@click.command()
@click.argument("scenario", metavar="SCENARIO", type=click.Path(path_type=Path))
@click.option("--html", type=click.Path(path_type=Path), help="Write the HTML report here.")
@click.option("--json", "json_path", type=click.Path(path_type=Path), help="Write the JSON series.")
@click.option("--seed", type=int, help="The seed, instead of the scenario's.")
@click.option("--until", type=float, help="Virtual seconds, instead of the scenario's.")
def simulate(
    scenario: Path, html: Path | None, json_path: Path | None, seed: int | None, until: float | None
) -> int:
    """Run the scenario SCENARIO (a TOML file) on virtual time and print its report."""
    argv = [str(scenario)]
    for flag, value in (
        ("--html", html),
        ("--json", json_path),
        ("--seed", seed),
        ("--until", until),
    ):
        if value is not None:
            argv += [flag, str(value)]
    return simulate_main(argv)
