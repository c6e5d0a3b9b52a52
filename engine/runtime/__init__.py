"""Runtime internals: deployment, subtask actors, gates, heads and tails (not public)."""
