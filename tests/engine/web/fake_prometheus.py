"""A stand-in for lockgate.engine.web.prometheus: the text names each job it was given."""

from __future__ import annotations

from collections.abc import Sequence

from lockgate.engine import JobClient


def prometheus_text(jobs: Sequence[JobClient]) -> bytes:
    return "".join(f'lockgate_job{{job="{job.name}"}} 1\n' for job in jobs).encode()
