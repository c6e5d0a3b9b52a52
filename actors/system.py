"""ActorSystem: the lifetime of a group of actors, and their supervisor."""

from __future__ import annotations

from types import TracebackType
from typing import Any, TypeVar

import anyio
from anyio.abc import TaskGroup

from lockgate.actors.actor import Actor, ActorContext
from lockgate.actors.doorbell import Doorbell
from lockgate.actors.envelope import Envelope
from lockgate.actors.errors import (
    ActorCrashed,
    ActorError,
    ActorStopped,
    EndOfMailbox,
    MailboxEmpty,
)
from lockgate.actors.mailbox import Mailbox
from lockgate.actors.ref import ActorRef

__all__ = ["ActorSystem"]

M = TypeVar("M")

_ON_STOP_GRACE = 5.0  # seconds a cancelled actor's on_stop may take to release what it holds


class ActorSystem:
    """An ``async with`` lifetime for actors, over one anyio task group.

    Leaving the block waits until every actor has stopped. Supervision escalates: the first
    actor to crash cancels every other actor, and the block raises ``ActorCrashed`` with the
    original exception as ``__cause__``. Nothing spawned outlives the block.
    """

    def __init__(self, name: str = "actors") -> None:
        self.name = name
        self._group: TaskGroup | None = None
        self._refs: dict[str, ActorRef[Any]] = {}
        self._crash: tuple[str, BaseException] | None = None

    async def __aenter__(self) -> ActorSystem:
        self._group = anyio.create_task_group()
        await self._group.__aenter__()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> bool | None:
        assert self._group is not None
        try:
            return await self._group.__aexit__(exc_type, exc, traceback)
        finally:
            self._group = None
            self._raise_crash()

    def spawn(self, actor: Actor[M], *, name: str, doorbell: Doorbell | None = None) -> ActorRef[M]:
        """Start ``actor`` under ``name`` (unique in this system) and return its ref.

        ``doorbell`` is rung by the actor's inboxes; pass one to have other mailboxes, such
        as data channels the actor reads, wake it too.
        """
        if self._group is None:
            raise ActorError(f"actor system '{self.name}' is not running; use 'async with'")
        if name in self._refs:
            raise ActorError(f"actor system '{self.name}' already has an actor named '{name}'")
        doorbell = doorbell or Doorbell()
        inbox: Mailbox[Envelope[M]] = Mailbox(
            actor.inbox_capacity, doorbell=doorbell, name=f"{name}.inbox"
        )
        control: Mailbox[Envelope[Any]] = Mailbox(
            actor.control_capacity, doorbell=doorbell, name=f"{name}.control"
        )
        context = ActorContext(name, ActorRef(name, inbox, control), inbox, control, doorbell)
        actor.context = context
        self._refs[name] = context.ref
        self._group.start_soon(self._run, actor, name=name)
        return context.ref

    def refs(self) -> dict[str, ActorRef[Any]]:
        """Every actor spawned so far, by name."""
        return dict(self._refs)

    def cancel(self) -> None:
        """Cancel every actor now; the ``async with`` block then ends."""
        if self._group is not None:
            self._group.cancel_scope.cancel()

    async def _run(self, actor: Actor[Any]) -> None:
        try:
            await actor.on_start()
            await actor.run()
        except Exception as error:  # the supervisor is the one place that catches broadly
            self._fail(actor.name, error)
        finally:
            _close_inboxes(actor.context)
            with anyio.move_on_after(_ON_STOP_GRACE, shield=True):
                await self._stop(actor)

    async def _stop(self, actor: Actor[Any]) -> None:
        try:
            await actor.on_stop()
        except Exception as error:
            self._fail(actor.name, error)

    def _fail(self, name: str, error: BaseException) -> None:
        if self._crash is None:
            self._crash = (name, error)
        if self._group is not None:
            self._group.cancel_scope.cancel()

    def _raise_crash(self) -> None:
        if self._crash is not None:
            name, error = self._crash
            raise ActorCrashed(name, f"actor '{name}' crashed: {error!r}") from error

    def __repr__(self) -> str:
        state = "running" if self._group is not None else "stopped"
        return f"<ActorSystem {self.name!r} {state} actors={len(self._refs)}>"


def _close_inboxes(context: ActorContext[Any]) -> None:
    for mailbox in (context.inbox, context.control):
        mailbox.close()
        _fail_pending_asks(mailbox, context.name)


def _fail_pending_asks(mailbox: Mailbox[Envelope[Any]], name: str) -> None:
    while True:
        try:
            envelope = mailbox.receive_nowait()
        except (MailboxEmpty, EndOfMailbox):
            return
        if envelope.reply is not None:
            envelope.reply.fail(ActorStopped(f"actor '{name}' stopped before answering"))
