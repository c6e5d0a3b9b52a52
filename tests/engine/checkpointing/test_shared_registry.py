"""SharedStateRegistry: a shared file is handed out for deletion exactly when unused."""

from __future__ import annotations

from lockgate.engine.checkpointing.messages import StateHandle
from lockgate.engine.checkpointing.metadata import CheckpointMetadata, OperatorStateHandles
from lockgate.engine.checkpointing.shared_registry import SharedStateRegistry


def shared(name: str) -> StateHandle:
    return StateHandle(f"/job/shared/{name}", 1, "sha256:x", is_shared=True)


def checkpoint(checkpoint_id: int, *handles: StateHandle | None) -> CheckpointMetadata:
    return CheckpointMetadata(
        "job", checkpoint_id, 0.0, 8, {"op": OperatorStateHandles(len(handles), handles)}
    )


def chained(name: str, *base: StateHandle) -> StateHandle:
    own = shared(name)
    return StateHandle(own.location, 1, "sha256:x", shared=base, is_shared=True)


def test_a_file_is_released_only_when_the_last_checkpoint_using_it_is() -> None:
    registry = SharedStateRegistry()
    full = shared("full-1")
    registry.register(checkpoint(1, full))
    registry.register(checkpoint(2, chained("delta-2", full)))
    registry.register(checkpoint(3, chained("delta-3", full, shared("delta-2"))))

    assert registry.release(1) == []
    assert registry.release(2) == []
    assert sorted(h.location for h in registry.release(3)) == [
        "/job/shared/delta-2",
        "/job/shared/delta-3",
        "/job/shared/full-1",
    ]


def test_private_files_and_empty_slots_are_never_counted() -> None:
    registry = SharedStateRegistry()
    registry.register(checkpoint(1, StateHandle("/job/chk-1/op-0", 1, "sha256:x"), None))

    assert registry.release(1) == []
    assert not registry.is_referenced("/job/chk-1/op-0")


def test_an_aborted_checkpoint_may_delete_only_its_own_new_files() -> None:
    registry = SharedStateRegistry()
    full = shared("full-1")
    registry.register(checkpoint(1, full))

    aborted = chained("delta-2", full)
    assert registry.unreferenced(aborted.shared_files) == [shared("delta-2")]


def test_registering_a_checkpoint_twice_counts_it_once() -> None:
    registry = SharedStateRegistry()
    metadata = checkpoint(1, shared("full-1"))
    registry.register(metadata)
    registry.register(metadata)

    assert [h.location for h in registry.release(1)] == ["/job/shared/full-1"]


def test_a_checkpoint_is_registered_from_register_until_release() -> None:
    registry = SharedStateRegistry()
    registry.register(checkpoint(1, shared("full-1")))
    registered = registry.is_registered(1)

    registry.release(1)

    assert registered and not registry.is_registered(1)
