"""Helpers of the connector savepoint tests: where a job stands when the test stops it.

A source reads batches ahead of its subtask, and records read but not yet emitted come
after a stop's barrier, so "the source read everything" is not "everything is before the
savepoint". ``Progress`` counts records past the source instead; ``Gate`` holds a sink at a
record while a stop is requested, so a bounded input is stopped part-way.
"""

from __future__ import annotations

from typing import Any

import anyio

from lockgate.engine import JobClient


class Progress:
    """An identity map counting the records that passed it; the test waits for a count.

    Not a stateful function, so every subtask and attempt shares this one object.
    """

    def __init__(self) -> None:
        self.passed = 0
        self._waiting: list[tuple[int, anyio.Event]] = []

    def __call__(self, record: Any) -> Any:
        self.passed += 1
        for count, event in self._waiting:
            if self.passed >= count:
                event.set()
        return record

    async def wait_passed(self, count: int) -> None:
        """Wait until ``count`` records in all passed, counted from this object's creation."""
        if self.passed < count:
            event = anyio.Event()
            self._waiting.append((count, event))
            await event.wait()


class Gate:
    """Where a sink's write of the batch holding ``at`` waits until the test lets it go."""

    def __init__(self, at: Any) -> None:
        self.at = at
        self.reached = anyio.Event()
        self.go = anyio.Event()

    async def pass_through(self, records: list[Any]) -> None:
        """Return at once, unless ``records`` hold ``at`` before the gate opened: then wait."""
        if self.at in records and not self.go.is_set():
            self.reached.set()
            await self.go.wait()


async def stop_at_the_gate(job: JobClient, gate: Gate, target: str) -> str:
    """Stop ``job`` with a savepoint under ``target`` right after the batch at the gate.

    The stop request is handed to the subtask while its sink waits at the gate (the subtask
    takes control messages before more input), so the stop falls part-way through the input.
    """
    folder: list[str] = []

    async def stop() -> None:
        folder.append(await job.stop_with_savepoint(target))

    await gate.reached.wait()
    async with anyio.create_task_group() as group:
        group.start_soon(stop)
        await anyio.wait_all_tasks_blocked()  # the stop request waits for the subtask
        gate.go.set()
    return folder[0]
