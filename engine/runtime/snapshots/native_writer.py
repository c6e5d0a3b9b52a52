"""NativeSnapshotWriter: writes native keyed snapshots (RocksDB's files), uploading new files."""

from __future__ import annotations

from dataclasses import replace

import anyio
import anyio.to_thread

from lockgate.engine.checkpointing.messages import StateHandle
from lockgate.engine.checkpointing.native_state import NativeKeyedState
from lockgate.engine.checkpointing.snapshots import OperatorSnapshot, encode_snapshot
from lockgate.engine.checkpointing.storage import CheckpointStorage
from lockgate.engine.runtime.snapshots.capture import StateCapture
from lockgate.engine.runtime.snapshots.incremental import FileKey, UploadedFiles
from lockgate.engine.state.native_snapshot import NativeFile, NativeKeyedSnapshot, is_native

__all__ = ["NativeSnapshotWriter"]


class NativeSnapshotWriter:
    """Writes one subtask's native keyed snapshots into checkpoints of ``job_name``.

    Per operator, the shareable files (SSTs) that the last completed checkpoint did not
    reference are uploaded to the job's shared folder, as ``<file>-<run>-<checkpoint>-<name>``
    (unique across attempts and runs, whose databases reuse SST names); the others reuse
    the handles of their uploaded copies. One main file goes to the checkpoint's own folder:
    an ``OperatorSnapshot`` with the operator's other state and ``native`` (the small files
    whole, the file name -> handle map, the backend's description). The handle returned lists
    in ``shared`` every shared file the snapshot uses, so the coordinator's registry keeps
    each while a retained checkpoint uses it. If writing fails, the files it uploaded are
    deleted again; the local folder is deleted in any case.
    """

    def __init__(
        self, storage: CheckpointStorage, job_name: str, run_id: str, max_parallelism: int
    ) -> None:
        self.storage = storage
        self.job_name = job_name
        self.run_id = run_id
        self.max_parallelism = max_parallelism
        self.uploaded = UploadedFiles()

    async def write(self, checkpoint_id: int, capture: StateCapture, file_name: str) -> StateHandle:
        """Write ``capture`` (its keyed snapshot is native) as ``file_name``; return the handle."""
        keyed = capture.keyed
        assert is_native(keyed), "a native capture needs a native snapshot"
        new: list[StateHandle] = []
        try:
            handle, shared = await self._write(checkpoint_id, capture, keyed, file_name, new)
        except BaseException:
            with anyio.CancelScope(shield=True):
                await self.storage.discard_shared(new)
            raise
        finally:
            await anyio.to_thread.run_sync(keyed.discard)
        self.uploaded.written(checkpoint_id, capture.uid, shared)
        return handle

    async def _write(
        self,
        checkpoint_id: int,
        capture: StateCapture,
        keyed: NativeKeyedSnapshot,
        file_name: str,
        new: list[StateHandle],
    ) -> tuple[StateHandle, dict[FileKey, StateHandle]]:
        files = await anyio.to_thread.run_sync(keyed.files)
        shared = await self._upload(checkpoint_id, capture.uid, files, file_name, new)
        inline = await anyio.to_thread.run_sync(_inline, files)
        native = NativeKeyedState(keyed.backend, keyed.description(), _by_name(shared), inline)
        handle = await self._write_main(checkpoint_id, capture, file_name, native)
        return replace(handle, shared=tuple(shared.values())), shared

    async def _upload(
        self,
        checkpoint_id: int,
        uid: str,
        files: list[NativeFile],
        file_name: str,
        new: list[StateHandle],
    ) -> dict[FileKey, StateHandle]:
        # ``new`` collects what was uploaded, so that a failure can delete it again.
        reusable = self.uploaded.reusable(uid)
        shared: dict[FileKey, StateHandle] = {}
        for file in (file for file in files if file.shareable):
            key = (file.name, file.size)
            if key in reusable:
                shared[key] = reusable[key]
            else:
                name = f"{file_name}-{self.run_id}-{checkpoint_id}-{file.name}"
                shared[key] = await self._upload_file(file, name)
                new.append(shared[key])
        return shared

    async def _upload_file(self, file: NativeFile, name: str) -> StateHandle:
        data = await anyio.to_thread.run_sync(file.path.read_bytes)
        with anyio.CancelScope(shield=True):  # a cancel waits for the handle, to delete it
            handle = await self.storage.write_shared(self.job_name, name, data)
        return handle

    async def _write_main(
        self, checkpoint_id: int, capture: StateCapture, file_name: str, native: NativeKeyedState
    ) -> StateHandle:
        kinds = {} if capture.keyed is None else dict(capture.keyed.kinds)
        snapshot = replace(self._operator_part(capture), kinds=kinds, native=native)
        data = encode_snapshot(snapshot)
        return await self.storage.write_state(self.job_name, checkpoint_id, file_name, data)

    def _operator_part(self, capture: StateCapture) -> OperatorSnapshot:
        """The capture's lists, unions and broadcast state, without keyed state."""
        operator = StateCapture(
            capture.uid,
            None,
            capture.operator,
            capture.lists,
            input_channels=capture.input_channels,
            output_channels=capture.output_channels,
        )
        return operator.materialize(self.max_parallelism)

    def notify_complete(self, checkpoint_id: int) -> None:
        """Later snapshots may reuse the files ``checkpoint_id`` used."""
        self.uploaded.completed(checkpoint_id)

    def notify_aborted(self, checkpoint_id: int) -> None:
        """The files ``checkpoint_id`` uploaded are deleted: nothing may reuse them."""
        self.uploaded.aborted(checkpoint_id)

    def __repr__(self) -> str:
        return f"<NativeSnapshotWriter job={self.job_name!r} {self.uploaded!r}>"


def _inline(files: list[NativeFile]) -> dict[str, bytes]:
    return {file.name: file.path.read_bytes() for file in files if not file.shareable}


def _by_name(shared: dict[FileKey, StateHandle]) -> dict[str, StateHandle]:
    return {name: handle for (name, _), handle in shared.items()}
