"""Internal: starting a job from a checkpoint or savepoint.

Resolving what to restore from, checking it fits the job, redistributing key groups and
operator state over the new parallelism, applying incremental chains, and loading native
(RocksDB) files and channel state into the subtasks that start.
"""
