"""LocalRun: a job run's claim on its RocksDB folders, an OS lock that dies with its process.

Under a RocksDB backend's path::

    lockgate-<job>-<run>.lock                      the run's lock file, locked while it runs
    lockgate-<job>-<run>-a<n>-<uid>-<i>            a database of the run
    lockgate-<job>-<run>-a<n>-<uid>-<i>-checkpoints   its RocksDB checkpoints

A run's lock file is locked (``flock``) before the run makes any folder and removed after
its operators deleted theirs. The OS releases the lock when the process ends, however it
ends (``SIGKILL`` too), so a lock file that can be locked belongs to a run whose process is
gone. Claiming a run removes the folders of every such dead run of the job, and their lock
files. Nothing else is removed: a folder without a lock file (a lockgate before locks, or
another program) is left alone, as is every folder of a run whose lock is held.
"""

from __future__ import annotations

import fcntl
import logging
import os
import shutil
from pathlib import Path

from lockgate.engine.state.local_state import job_folder_prefix, run_folder_prefix

__all__ = ["LocalRun", "remove_dead_runs"]

_LOCK_SUFFIX = ".lock"

logger = logging.getLogger(__name__)


class LocalRun:
    """A run's claim on its folders under ``path``: its lock file, locked until ``release``.

    Invariant: while the claim is held (and the process lives), no other run's claim
    removes a folder of this run.
    """

    def __init__(self, lock: Path, descriptor: int) -> None:
        self.lock = lock
        self._descriptor: int | None = descriptor

    @classmethod
    def claim(cls, path: Path, job_name: str, run_id: str) -> LocalRun:
        """Lock the run's lock file under ``path``, then remove the job's dead runs' folders."""
        path.mkdir(parents=True, exist_ok=True)
        lock = path / _lock_name(run_folder_prefix(job_name, run_id))
        claimed = cls(lock, _create_locked(lock))
        removed = remove_dead_runs(path, job_name)
        if removed:
            logger.info(
                "removed %d RocksDB folders of job '%s' under %s that runs whose process is "
                "gone left behind",
                len(removed),
                job_name,
                path,
                extra={"job": job_name},
            )
        return claimed

    @property
    def held(self) -> bool:
        """Whether the claim is held (not released yet)."""
        return self._descriptor is not None

    def release(self) -> None:
        """Remove the lock file and unlock it; releasing again does nothing."""
        if self._descriptor is None:
            return
        self.lock.unlink(missing_ok=True)
        os.close(self._descriptor)
        self._descriptor = None

    def __repr__(self) -> str:
        return f"<LocalRun {str(self.lock)!r} {'held' if self.held else 'released'}>"


def remove_dead_runs(path: Path, job_name: str) -> list[str]:
    """Remove the folders and lock files of the runs of ``job_name`` whose process is gone.

    Return the names of the folders removed.
    """
    prefix = job_folder_prefix(job_name)
    locks = [
        entry
        for entry in path.iterdir()
        if entry.name.startswith(prefix) and entry.name.endswith(_LOCK_SUFFIX)
    ]
    removed: list[str] = []
    for lock in locks:
        removed += _remove_if_dead(lock)
    return removed


def _remove_if_dead(lock: Path) -> list[str]:
    try:
        descriptor = os.open(lock, os.O_RDWR)
    except FileNotFoundError:  # its run ended meanwhile, or another claim removed it
        return []
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:  # its run is alive
        os.close(descriptor)
        return []
    try:
        prefix = lock.name.removesuffix(_LOCK_SUFFIX) + "-"
        folders = [e for e in lock.parent.iterdir() if e.name.startswith(prefix) and e.is_dir()]
        for folder in folders:
            shutil.rmtree(folder, ignore_errors=True)
        lock.unlink(missing_ok=True)
        return [folder.name for folder in folders]
    finally:
        os.close(descriptor)


def _create_locked(lock: Path) -> int:
    # Locked under a temporary name, then renamed: the lock file is never seen unlocked.
    temporary = lock.with_name(f".{lock.name}.tmp")
    descriptor = os.open(temporary, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.replace(temporary, lock)
    except BaseException:
        os.close(descriptor)
        temporary.unlink(missing_ok=True)
        raise
    return descriptor


def _lock_name(run_prefix: str) -> str:
    return run_prefix.removesuffix("-") + _LOCK_SUFFIX
