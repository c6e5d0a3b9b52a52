"""SimulationReport: what a simulation run found, as series, summaries, a table and JSON."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from lockgate.engine.simulation.bottleneck import Bottleneck
from lockgate.engine.simulation.faults.recovery import FaultReport
from lockgate.engine.simulation.sections import (
    AsyncIoReport,
    CheckpointReport,
    SinkReport,
    SubtaskReport,
)
from lockgate.engine.simulation.table import render_table

__all__ = ["SimulationReport"]


@dataclass(frozen=True)
class SimulationReport:
    """A simulation run of job ``job_name``: for ``seed``, over ``until`` virtual seconds.

    ``times`` ends each interval of ``report_every`` seconds that the series hold a value
    for. ``bottleneck`` is the chain that limits the job, if one can be named, and
    ``bottleneck_reason`` says why it is, or why none is. The same job, seed and options
    give a byte-identical ``to_json()``. ``async_io`` has one section per ``async_map``
    operator and subtask (calls, what waited, latency); ``checkpoints`` lists every
    checkpoint with its phases; ``faults`` every fault of the run (``Simulation(faults=...)``
    and the models' outages) with its recovery and catch-up times.
    """

    job_name: str
    seed: int
    until: float
    report_every: float
    times: tuple[float, ...]
    subtasks: tuple[SubtaskReport, ...]
    sinks: tuple[SinkReport, ...]
    bottleneck: Bottleneck | None
    bottleneck_reason: str
    async_io: tuple[AsyncIoReport, ...] = ()
    checkpoints: tuple[CheckpointReport, ...] = ()
    faults: tuple[FaultReport, ...] = ()

    def of(self, uid: str) -> tuple[SubtaskReport, ...]:
        """The subtasks that run operator ``uid``."""
        return tuple(subtask for subtask in self.subtasks if uid in subtask.uids)

    def sink(self, uid: str) -> SinkReport:
        """The report of modelled sink ``uid``."""
        for sink in self.sinks:
            if sink.uid == uid:
                return sink
        known = ", ".join(f"'{sink.uid}'" for sink in self.sinks) or "none"
        raise KeyError(f"no modelled sink '{uid}' in the report; its sinks are: {known}")

    def async_map(self, uid: str) -> tuple[AsyncIoReport, ...]:
        """The sections of ``async_map`` operator ``uid``, one per subtask."""
        return tuple(section for section in self.async_io if section.uid == uid)

    def to_dict(self) -> dict[str, Any]:
        """The report as plain data: what ``to_json`` writes."""
        plain: dict[str, Any] = _rounded(asdict(self))
        return plain

    def to_json(self, *, indent: int | None = None) -> str:
        """The report as JSON: the summaries and every series, floats to 6 decimals."""
        return json.dumps(self.to_dict(), indent=indent, sort_keys=True)

    def to_html(self, path: str | os.PathLike[str]) -> Path:
        """Write the report as one self-contained HTML page with plots; return its path.

        The plots are plotly's (the extra ``simulation``: ``pip install
        'lockgate[simulation]'``), its JavaScript inlined, so the page opens offline.

        Raises:
            ImportError: plotly is not installed.
        """
        from lockgate.engine.simulation.html_report import write_html  # plotly: the extra

        return write_html(self, path)

    def to_table(self) -> str:
        """The report as a plain-text table: subtasks, sinks, then the bottleneck."""
        title = (
            f"simulation of '{self.job_name}', seed {self.seed}: {self.until:g} virtual "
            f"seconds, reported every {self.report_every:g} s"
        )
        duration = self.times[-1] if self.times else 0.0
        return render_table(
            title,
            self.subtasks,
            self.sinks,
            self.bottleneck_reason,
            duration=duration,
            faults=self.faults,
            async_io=self.async_io,
        )

    def __str__(self) -> str:
        return self.to_table()


def _rounded(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, 6)
    if isinstance(value, dict):
        return {key: _rounded(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_rounded(item) for item in value]
    return value
