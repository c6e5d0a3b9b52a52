"""``lockgate simulate``: run a scenario file on virtual time and write its report.

::

    lockgate simulate SCENARIO.toml [--html REPORT.html] [--json SERIES.json]
                                    [--seed N] [--until SECONDS]

Prints the report's table; ``--html`` writes the HTML report with its plots (the extra
``simulation``), ``--json`` the report as JSON (every series). ``--seed`` and ``--until``
override the scenario's. Exit status: 0 when the simulation ran, 1 when the simulated
job failed (its error is printed), 2 when the command cannot run (bad arguments, a
scenario that cannot be read, a job that cannot be imported).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Sequence
from pathlib import Path

from lockgate.engine.errors import EngineError, JobError
from lockgate.engine.simulation.scenario import Scenario, ScenarioError

__all__ = ["add_arguments", "simulate_main"]

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``simulate``'s arguments to ``parser``."""
    parser.add_argument("scenario", type=Path, metavar="SCENARIO", help="the scenario's TOML file")
    parser.add_argument("--html", type=Path, metavar="PATH", help="write the HTML report here")
    parser.add_argument("--json", type=Path, metavar="PATH", help="write the JSON series here")
    parser.add_argument("--seed", type=int, help="the seed, instead of the scenario's")
    parser.add_argument("--until", type=float, help="virtual seconds, instead of the scenario's")


def simulate_main(argv: Sequence[str] | None = None) -> int:
    """Run ``lockgate simulate`` with ``argv`` (default ``sys.argv[1:]``); return its status."""
    parser = argparse.ArgumentParser(prog="lockgate simulate", description=__doc__.splitlines()[0])
    add_arguments(parser)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # argparse printed the usage, or the help
        return EXIT_USAGE if exit_.code else EXIT_OK
    return simulate(args)


def simulate(args: argparse.Namespace) -> int:
    """Run the scenario ``args`` names and write what they ask for."""
    try:
        scenario = Scenario.load(args.scenario)
        overrides = {"seed": args.seed, "until": args.until}
        scenario = dataclasses.replace(
            scenario, **{key: value for key, value in overrides.items() if value is not None}
        )
        simulation = scenario.simulation()
    except (ScenarioError, EngineError, ValueError, OSError) as error:
        print(f"lockgate simulate: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    try:
        report = simulation.run(args.scenario.stem)
    except (JobError, EngineError) as error:
        print(f"lockgate simulate: the simulated job failed: {error}", file=sys.stderr)
        return EXIT_FAILED
    print(report.to_table())
    if args.json is not None:
        args.json.write_text(report.to_json())
        print(f"\nJSON series: {args.json}")
    if args.html is not None:
        try:
            report.to_html(args.html)
        except ImportError as error:
            print(f"lockgate simulate: error: {error}", file=sys.stderr)
            return EXIT_USAGE
        print(f"HTML report: {args.html}")
    return EXIT_OK
