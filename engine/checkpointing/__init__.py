"""Checkpointing internals: messages, pending and completed checkpoints, storage, restore."""
