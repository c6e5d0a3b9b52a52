"""Shared test settings: every async test runs on asyncio (pytest-asyncio, auto mode)."""
