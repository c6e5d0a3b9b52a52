"""Faults a simulation injects at given virtual times, and how the job recovered from them.

``KillAttempt`` kills the running attempt, ``FailCheckpoint`` makes the storage refuse a
checkpoint, ``SlowStorage`` models the time each checkpoint write takes. Import them from
``lockgate.engine.simulation``.
"""
