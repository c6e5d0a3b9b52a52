"""The contracts connectors implement: sources and their splits, sinks, two-phase commit.

Public to connectors: ``lockgate.connectors`` imports these modules, the face, the errors
and the testing doubles, and nothing else of the engine.
"""
