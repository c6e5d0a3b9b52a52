"""Time: the clock every engine part reads, and watermarks.

Internal; the public names are re-exported by lockgate.engine.
"""
