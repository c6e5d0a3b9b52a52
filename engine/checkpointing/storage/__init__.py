"""Checkpoint storage: the protocol, the memory and filesystem implementations, and URLs."""

from lockgate.engine.checkpointing.storage.checkpoint_storage import CheckpointStorage
from lockgate.engine.checkpointing.storage.filesystem import FileSystemCheckpointStorage
from lockgate.engine.checkpointing.storage.memory import MemoryCheckpointStorage
from lockgate.engine.checkpointing.storage.urls import storage_for

__all__ = [
    "CheckpointStorage",
    "FileSystemCheckpointStorage",
    "MemoryCheckpointStorage",
    "storage_for",
]
