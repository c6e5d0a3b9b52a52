"""Executors: where the subtasks of a job's attempts run (internal; the face exports them).

``LocalExecutor`` runs every subtask on the event loop of the driving process (the default);
``ProcessExecutor`` runs them in worker processes on one machine. The job master and the
checkpoint coordinator always stay in the driving process. How a worker process is started
and watched (``processes.py``) is kept apart from what a worker does (``worker.py``), so that
other executors start the same worker code elsewhere.
"""
