"""The subtask actor: its loop, its chain of operators, its head (input) and tails (outputs)."""
