"""show_progress: a progress bar of a bounded job whose sources know their size (rich).

The bar counts what the sources' readers have read (``Source.progress()``), in the sources'
unit when they share one (records, bytes), else in percent of the mean of their fractions.
It is drawn only for a job whose every source is bounded and knows its size; otherwise
``show_progress`` returns at once. ``lockgate run`` draws it when its output is a terminal.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TextIO

import anyio

from lockgate.engine.api.client import JobClient
from lockgate.engine.graph.job_graph import OperatorKind
from lockgate.engine.io.sources import Source, SourceProgress

__all__ = ["REFRESH", "overall_progress", "show_progress", "sources_of"]

REFRESH = 0.2
"""Seconds between two updates of the bar."""


def sources_of(job: JobClient) -> list[Source[Any]]:
    """The job's sources, as its plan holds them."""
    nodes = (node for chain in job.plan.chains for node in chain.operators)
    return [node.function for node in nodes if node.kind is OperatorKind.SOURCE]


def overall_progress(sources: Sequence[Source[Any]]) -> SourceProgress | None:
    """The sources' progress together; ``None`` if one is unbounded or does not know its size."""
    parts = [source.progress() if source.bounded else None for source in sources]
    known = [part for part in parts if part is not None]
    if not known or len(known) < len(parts):
        return None
    if len({part.unit for part in known}) == 1:
        done, total = sum(p.done for p in known), sum(p.total for p in known)
        return SourceProgress(done, total, known[0].unit)
    percent = round(100 * sum(p.fraction for p in known) / len(known))
    return SourceProgress(percent, 100, "%")


async def show_progress(job: JobClient, stream: TextIO) -> None:
    """Draw the job's progress on ``stream`` until cancelled; at the end, its last state.

    On a terminal the bar is redrawn every ``REFRESH`` seconds; elsewhere only the last
    state is written.
    """
    sources = sources_of(job)
    first = overall_progress(sources)
    if first is None:
        return
    try:  # the extra 'cli'; without it, no bar
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
    except ImportError:
        return
    name, unit = TextColumn(f"job '{job.name}'"), TextColumn(first.unit)
    columns = (name, BarColumn(), MofNCompleteColumn(), unit)
    with Progress(*columns, console=Console(file=stream), auto_refresh=False) as bar:
        task = bar.add_task("read", total=first.total)
        try:
            while True:
                _update(bar, task, overall_progress(sources))
                await anyio.sleep(REFRESH)
        finally:
            _update(bar, task, overall_progress(sources))


def _update(bar: Any, task: Any, progress: SourceProgress | None) -> None:
    if progress is not None:
        bar.update(task, completed=progress.done, total=progress.total)
        bar.refresh()
