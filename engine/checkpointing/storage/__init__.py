"""Checkpoint storage: the protocol, the memory and filesystem implementations, and URLs."""

from lockgate.engine.checkpointing.storage.checkpoint_storage import CheckpointStorage
from lockgate.engine.checkpointing.storage.filesystem import FileSystemCheckpointStorage
from lockgate.engine.checkpointing.storage.memory import MemoryCheckpointStorage
from lockgate.engine.checkpointing.storage.urls import (
    savepoint_folder_for,
    storage_for,
    storage_reading,
)

__all__ = [
    "CheckpointStorage",
    "FileSystemCheckpointStorage",
    "MemoryCheckpointStorage",
    "savepoint_folder_for",
    "storage_for",
    "storage_reading",
]
