"""JobLock: at most one running job per name and checkpoint storage.

Two runs of one name on one storage would write the same checkpoint folders and delete each
other's checkpoints by retention, until one fails on a checkpoint the other removed. So a
run holds this lock from its start to its end, and a second run is refused while it does.

How far the lock reaches depends on the storage:

- In one process, every storage: two runs are the same job on the same storage when their
  storages name the same folder (file system), the same URL (S3), or are the same object
  (memory, and any other storage).
- Across processes, a file system storage: the lock is an OS file lock (``flock``) on
  ``<base>/<job>/_lock``, which the OS releases when the process ends, however it ends (a
  ``SIGKILL`` too), so a crashed run never blocks the next one. The file names the process
  and run holding it. (``flock`` is not reliable on every network file system.)
- Across processes, S3 has no lock: S3 offers no lock that dies with its holder, and a lease
  with a heartbeat could not stop a paused holder from writing on after its lease expired.
  Run each job name on one S3 prefix from one process at a time.
"""

from __future__ import annotations

import fcntl
import os
import sys
from pathlib import Path
from types import TracebackType

import anyio.to_thread

from lockgate.engine.checkpointing.storage.checkpoint_storage import CheckpointStorage
from lockgate.engine.checkpointing.storage.filesystem import FileSystemCheckpointStorage
from lockgate.engine.checkpointing.storage.layout import LOCK_NAME, check_job_name
from lockgate.engine.errors import CheckpointStorageError, JobError

__all__ = ["JobLock"]

_S3_MODULE = "lockgate.engine.checkpointing.storage.s3"

# The locks this process holds, by (storage identity, job name).
_HELD: dict[tuple[object, str], JobLock] = {}


class JobLock:
    """Held by the one running job of a name on a checkpoint storage; see the module docstring.

    ``async with JobLock(storage, job, run_id=...)`` acquires it or raises ``JobError``
    naming the job, the storage and, where known, the process and run holding it (or
    ``CheckpointStorageError`` if the lock file cannot be made); leaving the block releases
    it. A lock is acquired once.
    """

    def __init__(self, storage: CheckpointStorage, job: str, *, run_id: str) -> None:
        self.storage = storage
        self.job = check_job_name(job)
        self.run_id = run_id
        self._key = (_identity(storage), job)
        self._descriptor: int | None = None
        self._held = False

    @property
    def held(self) -> bool:
        """Whether this lock is held now."""
        return self._held

    async def __aenter__(self) -> JobLock:
        holder = _HELD.setdefault(self._key, self)
        if holder is not self:
            raise self._refused(f"run {holder.run_id}, in this process")
        try:
            if isinstance(self.storage, FileSystemCheckpointStorage):
                path = self.storage.base_path / self.job / LOCK_NAME
                self._descriptor = await anyio.to_thread.run_sync(self._lock_file, path)
        except BaseException:
            del _HELD[self._key]
            raise
        self._held = True
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.release()

    def release(self) -> None:
        """Release the lock; releasing a lock not held does nothing."""
        if not self._held:
            return
        self._held = False
        del _HELD[self._key]
        if self._descriptor is not None:
            os.close(self._descriptor)  # closing the file releases its flock
            self._descriptor = None

    def _lock_file(self, path: Path) -> int:
        """Lock ``path`` for this process and write who holds it into it; return the file."""
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as error:
            raise CheckpointStorageError(
                f"cannot lock job '{self.job}' on {self.storage!r}: {path} cannot be created "
                f"({error}); check that the checkpoint folder is a folder this process may "
                "write to"
            ) from error
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(descriptor, 200, 0).decode(errors="replace").strip()
            os.close(descriptor)
            raise self._refused(holder or "another process") from None
        owner = f"process {os.getpid()}, run {self.run_id}\n".encode()
        os.ftruncate(descriptor, 0)
        os.pwrite(descriptor, owner, 0)
        return descriptor

    def _refused(self, holder: str) -> JobError:
        return JobError(
            f"job '{self.job}' is already running on {self.storage!r} ({holder}); a second "
            "run would overwrite its checkpoints: stop it first, or give this job another "
            "name or checkpoint storage"
        )

    def __repr__(self) -> str:
        state = "held" if self._held else "not held"
        return f"<JobLock {self.job!r} run {self.run_id} {state} on {self.storage!r}>"


def _identity(storage: CheckpointStorage) -> object:
    if isinstance(storage, FileSystemCheckpointStorage):
        return ("file", storage.base_path)
    s3 = sys.modules.get(_S3_MODULE)  # only imported once an S3 storage was made
    if s3 is not None and isinstance(storage, s3.S3CheckpointStorage):
        return ("s3", storage.url)
    return ("object", id(storage))
