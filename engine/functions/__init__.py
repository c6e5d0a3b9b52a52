"""What user functions implement and receive: contexts, timers, side outputs, async I/O options.

Internal; the public names are re-exported by lockgate.engine.
"""
