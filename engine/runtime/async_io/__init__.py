"""Async I/O: the ``async_map`` operator, its result queue, deadlines, rate limit and latencies."""
