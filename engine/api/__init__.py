"""The public API: environment, streams, the job client, run and the CLI.

Re-exported by lockgate.engine; import the names from there.
"""
