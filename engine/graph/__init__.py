"""The job graph: operators and edges as the API builds them, checks, and planning into chains.

Internal; the public names are re-exported by lockgate.engine.
"""
