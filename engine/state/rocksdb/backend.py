"""RocksDBStateBackend: keyed state on disk in RocksDB (extra ``rocksdb``).

Importing this module loads nothing of rocksdict: the extra is loaded when the first
operator subtask with keyed state opens its database.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from lockgate.engine.state.backend import KeyedStateBackend, KeyedStateBackendSpec
from lockgate.engine.state.rocksdb.local_run import LocalRun
from lockgate.engine.state.rocksdb.options import CACHE_ENTRIES, CompactionStyle, RocksDBOptions

__all__ = ["RocksDBStateBackend"]


class RocksDBStateBackend:
    """Keeps keyed state on disk in RocksDB (extra ``rocksdb``): state larger than memory.

    Each operator subtask and attempt gets a database folder of its own under ``path`` (the
    system's temporary folder by default), deleted when the operator closes, with the
    RocksDB checkpoints of incremental checkpoints beside it until they are uploaded.
    Databases are opened only by operators that keep keyed state. They compact with
    ``compaction_style`` (``"level"``, the default, or ``"universal"``: Flink's
    ``state.backend.rocksdb.compaction.style``) once ``level0_compaction_trigger`` level-0
    files pile up (RocksDB's default 4); ``options`` holds both, validated when the backend
    is made (see ``RocksDBOptions``). In front of each database a write-back cache keeps
    the values of up to ``cache_entries`` hot keys as Python objects (``CACHE_ENTRIES`` by
    default), written back on eviction and before every snapshot. A restore of an
    incremental (RocksDB) checkpoint opens its files as each subtask's database, downloaded
    into a folder under ``path`` first (``native_restore_folder``); at another parallelism
    the key groups a subtask does not own are deleted from them, and the rest of its key
    groups inserted from the files of the other old subtasks that held them. Each run of a
    job claims its folders (``claim_local_state``: a lock file under ``path`` that dies with
    its process), and removes on start the folders of the job's runs whose process is gone.
    """

    name = "rocksdb"

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        compaction_style: CompactionStyle = "level",
        level0_compaction_trigger: int = 4,
        cache_entries: int = CACHE_ENTRIES,
    ) -> None:
        """Keep databases under ``path``, tuned as the keyword options say.

        Raises:
            ValueError: an unknown or ``"fifo"`` compaction style, a trigger below 1, or a
                cache of fewer than 1 entry.
        """
        self.path = Path(tempfile.gettempdir() if path is None else path)
        self.options = RocksDBOptions(compaction_style, level0_compaction_trigger, cache_entries)

    def create_keyed_state_backend(self, spec: KeyedStateBackendSpec) -> KeyedStateBackend:
        """Return a new ``RocksDBKeyedStateStore`` in a folder of its own under ``path``."""
        from lockgate.engine.state.rocksdb.store import RocksDBKeyedStateStore

        return RocksDBKeyedStateStore(
            self.path / spec.folder_name,
            spec.clock,
            max_parallelism=spec.max_parallelism,
            owner=spec.owner,
            options=self.options,
        )

    def claim_local_state(self, job_name: str, run_id: str) -> LocalRun:
        """Lock the run's folders under ``path``; remove those of the job's dead runs."""
        return LocalRun.claim(self.path, job_name, run_id)

    def native_restore_folder(self, backend: str) -> Path | None:
        """Return a new folder under ``path`` for a RocksDB checkpoint's files; else ``None``.

        A subtask's store then moves the folder to its own (a rename: one file system).
        """
        if backend != self.name:
            return None
        self.path.mkdir(parents=True, exist_ok=True)
        return Path(tempfile.mkdtemp(prefix="lockgate-restore-", dir=self.path))

    def __repr__(self) -> str:
        return (
            f"RocksDBStateBackend(path={str(self.path)!r}, "
            f"compaction_style={self.options.compaction_style!r}, "
            f"level0_compaction_trigger={self.options.level0_compaction_trigger}, "
            f"cache_entries={self.options.cache_entries})"
        )
