"""The runtime operators a subtask chains, one per kind of graph node (the table: ``kinds``)."""
