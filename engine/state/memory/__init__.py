"""The memory state backend: keyed state in dicts on the heap, snapshots by copy-on-write."""
