"""Local state: the folders a state backend keeps on this machine's disk for a job run.

Every such folder is named ``lockgate-<job>-<run>-...`` (``run_folder_prefix``), so the
folders one run left are told apart from every other run's. A backend that keeps them
(``LocalStateOwner``) is claimed by each run of a job from its start to its end; claiming
removes the folders that runs of the job whose process is gone left behind, as Flink
cleans its local state directories when it starts.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Protocol, runtime_checkable

import anyio.to_thread

__all__ = [
    "LocalStateClaim",
    "LocalStateOwner",
    "claimed_local_state",
    "job_folder_prefix",
    "run_folder_prefix",
    "safe_name",
]


def safe_name(part: str) -> str:
    """Return ``part`` with every character but letters, digits, ``.`` and ``_`` as ``_``.

    So the parts of a folder name never hold ``-``, which separates them.
    """
    return "".join(c if c.isalnum() or c in "._" else "_" for c in part)


def job_folder_prefix(job_name: str) -> str:
    """The start of the name of every local folder of the job: ``lockgate-<job>-``."""
    return f"lockgate-{safe_name(job_name)}-"


def run_folder_prefix(job_name: str, run_id: str) -> str:
    """The start of the name of every local folder of one run: ``lockgate-<job>-<run>-``."""
    return f"{job_folder_prefix(job_name)}{safe_name(run_id)}-"


class LocalStateClaim(Protocol):
    """A run's claim on its local state folders; ``release`` ends it (once is enough)."""

    def release(self) -> None:
        """End the claim: the run's folders are gone, or may be removed by the next run."""


@runtime_checkable
class LocalStateOwner(Protocol):
    """A state backend that keeps a job run's state in local folders of its own.

    The job master claims them for each run before its first attempt and releases the claim
    when the run ends; the claim lives no longer than the process that holds it.
    """

    def claim_local_state(self, job_name: str, run_id: str) -> LocalStateClaim:
        """Claim the local folders of run ``run_id`` of ``job_name``, removing dead runs' ones.

        It blocks on the disk: call it from a worker thread.
        """


@asynccontextmanager
async def claimed_local_state(backend: object, job_name: str, run_id: str) -> AsyncIterator[None]:
    """Hold the claim of a ``LocalStateOwner`` backend on a run's folders for the block.

    The claim is made in a worker thread (it may remove folders); any other backend keeps
    nothing on the local disk, and the block runs unclaimed.
    """
    if not isinstance(backend, LocalStateOwner):
        yield
        return
    claim = await anyio.to_thread.run_sync(backend.claim_local_state, job_name, run_id)
    try:
        yield
    finally:
        claim.release()
