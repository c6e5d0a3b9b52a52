"""The RocksDB backend's options: validated when set, and the ones RocksDB and its cache run."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lockgate.engine import StreamEnvironment
from lockgate.engine.state import KeyedStateBackendSpec, RocksDBStateBackend, ValueStateDescriptor
from lockgate.engine.state.backends import state_backend_for
from lockgate.engine.state.rocksdb.options import RocksDBOptions
from lockgate.engine.time.clock import SystemClock

VALUE = ValueStateDescriptor[int]("value")
SPEC = KeyedStateBackendSpec("job", "run1", 0, "counts", 0, 128, SystemClock())


@pytest.fixture
def opened(tmp_path: Path) -> Iterator[Any]:
    """Open a database of ``backend`` (by writing a value); return its RocksDB options."""
    stores = []

    def open_with(backend: RocksDBStateBackend) -> dict[str, str]:
        store = backend.create_keyed_state_backend(SPEC)
        stores.append(store)
        store.current_key = "a"
        store.get_state(VALUE).update(1)
        return options_in(backend.path / SPEC.folder_name)

    yield open_with
    for store in stores:
        store.close()


def options_in(folder: Path) -> dict[str, str]:
    """The options RocksDB wrote to the latest OPTIONS file of the database in ``folder``."""
    latest = max(folder.glob("OPTIONS-*"), key=lambda path: int(path.name.split("-")[1]))
    lines = (line.strip() for line in latest.read_text().splitlines())
    return dict(line.split("=", 1) for line in lines if "=" in line and not line.startswith("#"))


def test_a_database_compacts_with_the_style_and_trigger_its_backend_was_given(
    tmp_path: Path, opened: Any
) -> None:
    backend = RocksDBStateBackend(
        tmp_path, compaction_style="universal", level0_compaction_trigger=8
    )

    options = opened(backend)

    assert (options["compaction_style"], options["level0_file_num_compaction_trigger"]) == (
        "kCompactionStyleUniversal",
        "8",
    )


def test_by_default_a_database_keeps_rocksdbs_level_compaction_and_triggers(
    tmp_path: Path, opened: Any
) -> None:
    options = opened(RocksDBStateBackend(tmp_path))

    triggers = ("file_num_compaction", "slowdown_writes", "stop_writes")
    assert [options["compaction_style"]] + [options[f"level0_{t}_trigger"] for t in triggers] == [
        "kCompactionStyleLevel",
        "4",
        "20",
        "36",
    ]


def test_a_high_level0_trigger_moves_the_write_stall_triggers_above_it(
    tmp_path: Path, opened: Any
) -> None:
    options = opened(RocksDBStateBackend(tmp_path, level0_compaction_trigger=30))

    assert (options["level0_slowdown_writes_trigger"], options["level0_stop_writes_trigger"]) == (
        "46",
        "62",
    )


@pytest.mark.parametrize("style", ["tiered", "LEVEL", "", None])
def test_an_unknown_compaction_style_fails_naming_the_accepted_ones(style: Any) -> None:
    with pytest.raises(
        ValueError, match=r"unknown compaction_style .*; use 'level' or 'universal'"
    ):
        RocksDBStateBackend(compaction_style=style)


def test_fifo_compaction_is_refused_because_it_would_drop_keyed_state() -> None:
    with pytest.raises(ValueError, match="'fifo' deletes the oldest files, and keyed state"):
        RocksDBOptions(compaction_style="fifo")  # type: ignore[arg-type]


@pytest.mark.parametrize("trigger", [0, -4, 2.5, True, "8"])
def test_a_level0_trigger_that_is_not_a_positive_whole_number_fails(trigger: Any) -> None:
    with pytest.raises(ValueError, match="level0_compaction_trigger must be a whole number"):
        RocksDBStateBackend(level0_compaction_trigger=trigger)


def test_the_memory_backend_refuses_compaction_options() -> None:
    with pytest.raises(ValueError, match=r"no RocksDB options \(compaction_style\)"):
        state_backend_for("memory", compaction_style="level")


def test_set_state_backend_hands_the_compaction_options_to_the_rocksdb_backend() -> None:
    env = StreamEnvironment()

    env.set_state_backend("rocksdb", compaction_style="universal", level0_compaction_trigger=8)

    assert isinstance(env.state_backend, RocksDBStateBackend)
    assert env.state_backend.options == RocksDBOptions("universal", 8)


def test_set_state_backend_leaves_rocksdbs_defaults_for_options_not_given() -> None:
    env = StreamEnvironment()

    env.set_state_backend("rocksdb", level0_compaction_trigger=16)

    assert repr(env.state_backend).endswith(
        "compaction_style='level', level0_compaction_trigger=16, cache_entries=20000)"
    )


def test_set_state_backend_fails_when_configured_with_an_invalid_option() -> None:
    env = StreamEnvironment()

    with pytest.raises(ValueError, match="compaction_style 'fifo'"):
        env.set_state_backend("rocksdb", compaction_style="fifo")  # type: ignore[arg-type]


@pytest.mark.parametrize("entries", [0, -1, 2.5, True, "100"])
def test_a_cache_that_is_not_a_positive_whole_number_of_entries_fails(entries: Any) -> None:
    with pytest.raises(ValueError, match=r"cache_entries must be .* at least 1; .*20,000"):
        RocksDBStateBackend(cache_entries=entries)


def test_set_state_backend_sizes_each_subtasks_cache_as_told(tmp_path: Path) -> None:
    env = StreamEnvironment()
    env.set_state_backend("rocksdb", path=tmp_path, cache_entries=100)

    store = env.state_backend.create_keyed_state_backend(SPEC)
    capacity = store.cache_statistics().capacity  # type: ignore[attr-defined]
    store.close()

    assert capacity == 100


def test_the_memory_backend_refuses_a_cache_size() -> None:
    with pytest.raises(ValueError, match=r"no RocksDB options \(cache_entries\)"):
        state_backend_for("memory", cache_entries=100)
