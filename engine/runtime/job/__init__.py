"""A job's run: the job master's attempts, their deployment, and the restart strategy."""
