"""JobRegistry: the jobs a REST API shows and controls, by name."""

from __future__ import annotations

from collections.abc import Iterator

from lockgate.engine.api.client import JobClient
from lockgate.engine.errors import UnknownJob

__all__ = ["JobRegistry"]


class JobRegistry:
    """The running and ended jobs of one process, by name, for the REST API.

    A job is shown once it is added: ``async with env.start(name) as job:
    registry.add(job)``. It stays listed after it ended, with its last status, failures and
    metrics, until it is removed or a job of the same name replaces it; a job of a name
    whose job has not ended cannot be added (``ValueError``). ``get`` raises ``UnknownJob``
    naming the jobs there are. Jobs are listed in the order they were added.
    """

    def __init__(self) -> None:
        self._jobs: dict[str, JobClient] = {}

    def add(self, job: JobClient) -> JobClient:
        """Show ``job`` under its name and return it; a job that ended of that name goes."""
        listed = self._jobs.get(job.name)
        if listed is not None and listed is not job and not listed.status.is_terminal:
            raise ValueError(
                f"a job named '{job.name}' is registered and {listed.status.name}; give the "
                "new job another name, or remove the running one first"
            )
        self._jobs.pop(job.name, None)
        self._jobs[job.name] = job
        return job

    def remove(self, name: str) -> None:
        """Stop showing the job ``name``; raise ``UnknownJob`` if there is none."""
        self.get(name)
        del self._jobs[name]

    def get(self, name: str) -> JobClient:
        """Return the job ``name``; raise ``UnknownJob`` naming the jobs there are."""
        job = self._jobs.get(name)
        if job is None:
            known = ", ".join(f"'{n}'" for n in self._jobs) or "none"
            raise UnknownJob(f"no job named '{name}' is registered; the jobs are: {known}")
        return job

    def jobs(self) -> tuple[JobClient, ...]:
        """Every registered job, in the order added."""
        return tuple(self._jobs.values())

    def __iter__(self) -> Iterator[JobClient]:
        return iter(self.jobs())

    def __len__(self) -> int:
        return len(self._jobs)

    def __contains__(self, name: object) -> bool:
        return name in self._jobs

    def __repr__(self) -> str:
        return f"<JobRegistry jobs={list(self._jobs)}>"
