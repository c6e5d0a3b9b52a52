"""WriterLock: the lock a running FileSink writer holds, so no other writer removes its files."""

from __future__ import annotations

import os
import secrets
import sys
from pathlib import Path

if sys.platform != "win32":
    import fcntl

__all__ = ["WriterLock", "is_held"]


class WriterLock:
    """A lock file a FileSink writer holds from open to close; the OS frees it if the process dies.

    Invariant: a lock file is under its name only while its writer holds it, or after the
    writer ended without closing (a killed process), when nothing holds it: the file is
    locked before it is renamed into place and removed before it is unlocked. So a writer
    whose lock file nobody holds, or who has none, has ended, and its hidden files are no
    running writer's. Locks are ``flock`` locks, held per open file, so two writers in one
    process exclude each other as two in different processes do. Without ``flock``
    (Windows) every other writer counts as running, and nothing of theirs is removed.
    """

    def __init__(self, path: Path, descriptor: int | None) -> None:
        self.path = path
        self._descriptor = descriptor

    @classmethod
    def acquire(cls, path: Path) -> WriterLock:
        """Create the lock file ``path`` and hold it: it appears there already locked."""
        staging = path.with_name(f"{path.name}.{secrets.token_hex(4)}")
        descriptor = os.open(staging, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            if sys.platform != "win32":
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            os.rename(staging, path)
        except BaseException:
            os.close(descriptor)
            staging.unlink(missing_ok=True)
            raise
        return cls(path, descriptor)

    @property
    def is_released(self) -> bool:
        """Whether ``release`` was called."""
        return self._descriptor is None

    def release(self) -> None:
        """Remove the lock file, then unlock it; a second call does nothing."""
        descriptor, self._descriptor = self._descriptor, None
        if descriptor is not None:
            try:
                self.path.unlink(missing_ok=True)
            finally:
                os.close(descriptor)

    def __repr__(self) -> str:
        state = "released" if self.is_released else "held"
        return f"<WriterLock '{self.path.name}' {state}>"


def is_held(path: Path) -> bool:
    """Whether a running writer holds the lock file ``path``; ``False`` if there is none.

    Blocking (a brief ``open``). The probe takes a shared lock for a moment, which conflicts
    only with a writer's own: probes never mistake each other for a running writer. Without
    ``flock`` (Windows) always ``True``.
    """
    if sys.platform == "win32":
        return True
    try:
        descriptor = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(descriptor, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(descriptor)
    return False
