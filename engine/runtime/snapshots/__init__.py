"""A subtask's part in checkpoints: capturing state, incremental bases, writing snapshots."""
