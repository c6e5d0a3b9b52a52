"""Savepoints: the canonical snapshot format, and reading savepoints as plain data."""
