"""The state backends by name: the one module that names both the memory and RocksDB backends.

The RocksDB modules are imported only when a RocksDB backend is asked for, so a job on the
memory backend never loads the ``rocksdb`` extra.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lockgate.engine.state.backend import KeyGroups, StateBackend
from lockgate.engine.state.memory.backend import MemoryStateBackend

if TYPE_CHECKING:
    from lockgate.engine.state.rocksdb.backend import RocksDBStateBackend
    from lockgate.engine.state.rocksdb.options import CompactionStyle

__all__ = ["native_key_groups", "native_rescale", "native_rescalable", "state_backend_for"]


def state_backend_for(
    name: str,
    *,
    path: str | os.PathLike[str] | None = None,
    compaction_style: CompactionStyle | None = None,
    level0_compaction_trigger: int | None = None,
    cache_entries: int | None = None,
) -> StateBackend:
    """Return the state backend called ``name``: ``"memory"`` or ``"rocksdb"`` (under ``path``).

    The RocksDB options are ``RocksDBStateBackend``'s; ``None`` leaves the default.

    Raises:
        ValueError: an unknown name, an invalid RocksDB option, or a ``path`` or a RocksDB
            option for the memory backend.
        ImportError: ``"rocksdb"`` without its extra installed.
    """
    if name == "memory":
        _check_nothing_for_rocksdb(
            path=path,
            compaction_style=compaction_style,
            level0_compaction_trigger=level0_compaction_trigger,
            cache_entries=cache_entries,
        )
        return MemoryStateBackend()
    if name == "rocksdb":
        tuning = (compaction_style, level0_compaction_trigger, cache_entries)
        backend = _rocksdb_backend(path, *tuning)
        _check_rocksdb_installed()
        return backend
    raise ValueError(f"unknown state backend {name!r}; use 'memory' or 'rocksdb'")


def _rocksdb_backend(
    path: str | os.PathLike[str] | None,
    style: CompactionStyle | None,
    trigger: int | None,
    cache_entries: int | None,
) -> RocksDBStateBackend:
    from lockgate.engine.state.rocksdb.backend import RocksDBStateBackend
    from lockgate.engine.state.rocksdb.options import RocksDBOptions

    default = RocksDBOptions()
    return RocksDBStateBackend(
        path,
        compaction_style=default.compaction_style if style is None else style,
        level0_compaction_trigger=default.level0_compaction_trigger if trigger is None else trigger,
        cache_entries=default.cache_entries if cache_entries is None else cache_entries,
    )


def _check_nothing_for_rocksdb(path: object, **options: object) -> None:
    if path is not None:
        raise ValueError("the memory state backend keeps state on the heap; it takes no path")
    given = [option for option, value in options.items() if value is not None]
    if given:
        raise ValueError(
            "the memory state backend keeps state on the heap; it takes no RocksDB options "
            f"({', '.join(given)}); use set_state_backend('rocksdb', ...) for them"
        )


def _check_rocksdb_installed() -> None:
    try:
        importlib.import_module("lockgate.engine.state.rocksdb.store")
    except ImportError as error:
        raise ImportError(
            f"the RocksDB state backend needs rocksdict ({error}); "
            "install the extra: pip install 'lockgate[rocksdb]'",
            name=error.name,
        ) from error


def native_key_groups(
    backend: str, folder: Path, description: Mapping[str, Any], max_parallelism: int
) -> KeyGroups:
    """Return key group -> state name -> key -> plain value of the files in ``folder``.

    ``folder`` holds every file a ``NativeKeyedSnapshot`` of ``backend`` listed, under their
    names; ``description`` is what it described. Keys are grouped by ``max_parallelism``.

    Raises:
        ValueError: an unknown backend, or a description in a format this lockgate cannot read.
        ImportError: ``"rocksdb"`` without its extra installed.
    """
    _check_native(backend)
    from lockgate.engine.state.rocksdb.checkpoint import key_groups_in

    return key_groups_in(folder, description, max_parallelism)


def native_rescalable(backend: str, descriptions: Sequence[Mapping[str, Any]]) -> bool:
    """Whether ``native_rescale`` can merge the files of snapshots described so.

    Raises:
        ValueError: an unknown backend.
        ImportError: ``"rocksdb"`` without its extra installed.
    """
    _check_native(backend)
    from lockgate.engine.state.rocksdb.rescale import formats_agree

    return formats_agree(descriptions)


def native_rescale(
    backend: str,
    base: tuple[Path, Mapping[str, Any]],
    others: Sequence[tuple[Path, Mapping[str, Any]]],
    key_groups: range,
    max_parallelism: int,
) -> dict[str, Any]:
    """Make the files in ``base``'s folder hold exactly ``key_groups`` of every snapshot given.

    Each snapshot is a folder of a ``NativeKeyedSnapshot``'s files and its description; the
    base's files are changed (the other key groups deleted, the others' of ``key_groups``
    inserted), the others' only read. Returns the description of the base's files now,
    which a keyed state backend of ``backend`` opens as they are (``restore_native``).

    Raises:
        ValueError: an unknown backend, a description this lockgate cannot read, or states
            stored in layouts that cannot merge (``native_rescalable`` tells first).
        ImportError: ``"rocksdb"`` without its extra installed.
    """
    _check_native(backend)
    from lockgate.engine.state.rocksdb.rescale import rescale_files

    return rescale_files(base, others, key_groups, max_parallelism)


def _check_native(backend: str) -> None:
    if backend != "rocksdb":
        raise ValueError(f"keyed state stored by the unknown backend {backend!r}")
