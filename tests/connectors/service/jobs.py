"""Jobs and doubles of the service connector tests: a job the test checkpoints, a held sink."""

from __future__ import annotations

from functools import partial
from typing import Any, TypeVar

import anyio

from lockgate.connectors import CollectSink, IngressNotCommitted, IngressSource
from lockgate.connectors.memory import CollectTransaction
from lockgate.connectors.service import Subscription
from lockgate.engine import (
    CheckpointCompleted,
    EventSubscription,
    JobClient,
    RestartStrategy,
    StreamEnvironment,
)

T = TypeVar("T")


def service_env(parallelism: int = 1, *, batch_size: int = 10) -> StreamEnvironment:
    """Checkpoints only when the test triggers them, so it knows what each one covers."""
    env = StreamEnvironment(parallelism=parallelism, batch_size=batch_size, buffer_timeout=0.01)
    env.enable_checkpointing(None)
    env.set_restart_strategy(RestartStrategy.fixed_delay(attempts=3, delay=0.0))
    return env


class HeldSink(CollectSink[T]):
    """A ``CollectSink`` whose writes wait while the test holds it: a slow job."""

    def __init__(self) -> None:
        super().__init__()
        self.released = anyio.Event()

    async def write(self, txn: CollectTransaction[T], records: list[T]) -> None:
        await self.released.wait()
        await super().write(txn, records)


async def take(subscription: Subscription[T], count: int) -> list[T]:
    """The next ``count`` records of ``subscription``."""
    return [await anext(subscription) for _ in range(count)]


async def completed_now(events: EventSubscription) -> list[int]:
    """The ids of the checkpoints completed among the events ``events`` holds now.

    Takes only what the subscription already buffers: a wait for more is cancelled at once.
    """
    taken = []
    with anyio.move_on_after(0):
        while True:
            taken.append(await anext(events))
    return [event.checkpoint_id for event in taken if isinstance(event, CheckpointCompleted)]


async def wait_until_read(ingress: IngressSource[Any], accepted: int) -> None:
    """Wait until a running job has read ``accepted`` records, and every task is idle.

    Idle alone is not enough: a task waiting for a worker thread (a restore loading its
    state) counts as blocked, on trio as on asyncio, before the job reads anything.
    """
    while (now := ingress.statistics()).accepted < accepted or now.unread or not now.reading:
        await anyio.wait_all_tasks_blocked()
    await anyio.wait_all_tasks_blocked()


async def send_and_commit(
    job: JobClient, ingress: IngressSource[Any], record: Any, idempotency_key: str | None = None
) -> None:
    """Send ``record`` with ``wait_for_commit``, and take a checkpoint once the job read it."""
    send = partial(ingress.send, wait_for_commit=True, idempotency_key=idempotency_key)
    accepted = ingress.statistics().accepted + 1
    async with anyio.create_task_group() as group:
        group.start_soon(send, record)
        await wait_until_read(ingress, accepted)
        await job.trigger_checkpoint()


async def send_until_committed(ingress: IngressSource[Any], record: Any, key: str) -> int:
    """Send ``record`` until a completed checkpoint covers it; return how many sends failed."""
    failures = 0
    while True:
        try:
            await ingress.send(record, wait_for_commit=True, idempotency_key=key)
        except IngressNotCommitted:
            failures += 1
        else:
            return failures
