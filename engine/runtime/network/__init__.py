"""The network of a job: channels between subtasks, gates, partitioners and barrier alignment."""
