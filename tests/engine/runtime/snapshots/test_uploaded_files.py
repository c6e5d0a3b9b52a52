"""UploadedFiles: a native snapshot reuses only files a completed checkpoint used."""

from __future__ import annotations

from lockgate.engine.checkpointing.messages import StateHandle
from lockgate.engine.runtime.snapshots.incremental import UploadedFiles

A = {("000008.sst", 10): StateHandle("shared/a", 10, "crc:a", is_shared=True)}
B = {("000009.sst", 20): StateHandle("shared/b", 20, "crc:b", is_shared=True)}


def test_nothing_is_reusable_before_a_checkpoint_completes() -> None:
    uploaded = UploadedFiles()
    uploaded.written(1, "counts", A)
    assert uploaded.reusable("counts") == {}


def test_the_files_a_completed_checkpoint_used_become_reusable() -> None:
    uploaded = UploadedFiles()
    uploaded.written(1, "counts", A)
    uploaded.completed(1)
    assert (uploaded.reusable("counts"), uploaded.reusable("other")) == (A, {})


def test_the_files_of_an_aborted_checkpoint_never_become_reusable() -> None:
    uploaded = UploadedFiles()
    uploaded.written(1, "counts", A)
    uploaded.completed(1)
    uploaded.written(2, "counts", {**A, **B})
    uploaded.aborted(2)
    uploaded.completed(2)  # a late notification changes nothing
    assert uploaded.reusable("counts") == A


def test_a_completion_without_native_snapshots_keeps_the_reusable_files() -> None:
    uploaded = UploadedFiles()
    uploaded.written(1, "counts", A)
    uploaded.completed(1)
    uploaded.written(3, "counts", B)
    uploaded.completed(2)  # a savepoint, say: nothing native was written for it
    uploaded.completed(3)
    assert uploaded.reusable("counts") == B


def test_a_completed_checkpoint_forgets_older_pending_ones() -> None:
    uploaded = UploadedFiles()
    uploaded.written(1, "counts", A)
    uploaded.written(2, "counts", B)
    uploaded.completed(2)
    uploaded.completed(1)  # subsumed: it can no longer complete and become the base
    assert uploaded.reusable("counts") == B
