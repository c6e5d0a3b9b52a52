"""StateQueries: where ``job.query_state()`` goes and when it may go there.

A query goes to the subtask that owns the key's key group (``key_groups.py``, the formula
records are routed with) in the attempt that runs now, as a ``QueryState`` control message
that the subtask answers on its own loop, between batches.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import anyio

from lockgate.actors import ActorRef, ActorStopped
from lockgate.engine.checkpointing.messages import SubtaskId
from lockgate.engine.errors import QueryStateError
from lockgate.engine.graph.job_graph import OperatorNode
from lockgate.engine.graph.planning import ExecutionPlan
from lockgate.engine.runtime.job.job_events import JobEvents
from lockgate.engine.runtime.job.lifecycle import (
    JobCanceled,
    JobEvent,
    JobFailed,
    JobFinished,
    JobRestarting,
    JobStarted,
)
from lockgate.engine.runtime.subtask.state_query import QueryAnswer, QueryState
from lockgate.engine.state.key_groups import key_group_for, subtask_for_key_group

__all__ = ["QUERIES_PER_SUBTASK", "StateQueries"]

QUERIES_PER_SUBTASK = 16
"""Queries one subtask holds at most: sent to it and not answered yet, also those whose
callers gave up. They share its control mailbox (256) with the checkpoint messages, which
must always find room."""

_READ_SAVEPOINT = "read its state from a savepoint or checkpoint with read_snapshot()"


@dataclass(frozen=True, slots=True)
class _Target:
    """The subtask a query goes to, and how errors name it."""

    subtask: SubtaskId
    name: str  # "2/3"


class _Attempt:
    """One attempt's subtasks, and the queries sent to them and not answered yet."""

    def __init__(self, subtasks: Mapping[SubtaskId, ActorRef[Any]]) -> None:
        self.subtasks = dict(subtasks)
        self.over = False
        self._room: dict[SubtaskId, anyio.Semaphore] = {}
        self._pending: dict[QueryAnswer, str] = {}  # answer -> what the query asked

    async def ask(self, target: _Target, uid: str, state_name: str, key: Any) -> Any:
        """Send the query once the subtask holds fewer than ``QUERIES_PER_SUBTASK``; answer."""
        room = self._room.setdefault(target.subtask, anyio.Semaphore(QUERIES_PER_SUBTASK))
        await room.acquire()  # released when the query is answered, not when its caller left
        answer = QueryAnswer(lambda done: self._answered(done, room))
        self._pending[answer] = f"state '{state_name}' of operator '{uid}' (subtask {target.name})"
        if self.over:
            answer.fail(self._ended_error(answer))
        else:
            self._send(target, QueryState(uid, state_name, key, answer, target.name))
        return await answer.wait()

    def end(self) -> None:
        """Fail every query not answered yet: the subtasks that were to answer are gone."""
        self.over = True
        for answer in list(self._pending):
            answer.fail(self._ended_error(answer))

    def _send(self, target: _Target, query: QueryState) -> None:
        try:
            self.subtasks[target.subtask].tell_control(query)
        except ActorStopped:  # the attempt is ending: its actors stopped before it said so
            query.answer.fail(self._ended_error(query.answer))

    def _answered(self, answer: QueryAnswer, room: anyio.Semaphore) -> None:
        del self._pending[answer]
        room.release()

    def _ended_error(self, answer: QueryAnswer) -> QueryStateError:
        return QueryStateError(
            f"the query for {self._pending[answer]} got no answer: the attempt that was to "
            "answer it ended first (it failed, or the job is stopping); query again once "
            "job.status is RUNNING"
        )


class StateQueries:
    """Routes state queries to the subtask that owns the key, while an attempt runs.

    Invariants: a query is answered on its subtask's own loop, between batches (never from
    another task), by the subtask that owns the key's key group at the attempt's
    parallelism. While an attempt starts (the job is created, or restores its state), a
    query waits for its subtasks to be deployed; while the job restarts, or once it ended,
    a query raises ``QueryStateError`` at once, saying why and what to do. A query that its
    attempt's end leaves unanswered raises too. At most ``QUERIES_PER_SUBTASK`` queries are
    held by one subtask: the others wait for room, so queries never crowd out the
    checkpoint messages of its control mailbox. The job master reports its attempts
    (``deployed``, ``ended``) and its own end (``close``); lifecycle events do the rest.
    """

    def __init__(
        self, job: str, plan: ExecutionPlan, max_parallelism: int, events: JobEvents
    ) -> None:
        self._job = job
        self._plan = plan
        self._max_parallelism = max_parallelism
        self._nodes = {node.uid: node for node in plan.graph}
        self._attempt: _Attempt | None = None
        self._refusal: str | None = None  # why no query is answered now, once none will be
        self._changed = anyio.Event()
        events.listen(self._on_event)

    async def query(self, uid: str, state_name: str, key: Any) -> Any:
        """Return ``key``'s value of the keyed state ``state_name`` of operator ``uid``.

        Raises:
            QueryStateError: see the class docstring and ``read_state``.
        """
        target = self._route(uid, key)
        attempt = await self._running_attempt()
        return await attempt.ask(target, uid, state_name, key)

    def deployed(self, subtasks: Mapping[SubtaskId, ActorRef[Any]]) -> None:
        """An attempt's subtask actors were spawned: queries may go to them."""
        self._attempt = _Attempt(subtasks)
        self._signal()

    def ended(self) -> None:
        """The attempt's actors stopped: queries not answered yet fail."""
        if self._attempt is not None:
            self._attempt.end()
            self._attempt = None
            self._signal()

    def close(self) -> None:
        """The job master stopped (also when its host cancelled it): no query is answered."""
        self.ended()
        if self._refusal is None:
            self._refusal = f"job '{self._job}' has ended; {_READ_SAVEPOINT}"
            self._signal()

    async def _running_attempt(self) -> _Attempt:
        while True:
            if self._refusal is not None:
                raise QueryStateError(self._refusal)
            if self._attempt is not None:
                return self._attempt
            changed = self._changed
            await changed.wait()

    def _route(self, uid: str, key: Any) -> _Target:
        node = self._keyed_node(uid)
        try:
            key_group = key_group_for(key, self._max_parallelism)
        except TypeError as error:
            raise QueryStateError(
                f"cannot route key {key!r} of operator '{uid}': {error}"
            ) from error
        chain = self._plan.chain_of(node.uid)
        index = subtask_for_key_group(key_group, self._max_parallelism, chain.parallelism)
        return _Target(SubtaskId(chain.chain_id, index), f"{index + 1}/{chain.parallelism}")

    def _keyed_node(self, uid: str) -> OperatorNode:
        node = self._nodes.get(uid)
        if node is not None and node.kind.needs_keyed_input:
            return node
        keyed = [f"'{n.uid}'" for n in self._nodes.values() if n.kind.needs_keyed_input]
        queryable = (
            f"its operators with keyed state are {', '.join(keyed)}"
            if keyed
            else ("it has no operator with keyed state")
        )
        if node is None:
            raise QueryStateError(f"job '{self._job}' has no operator '{uid}'; {queryable}")
        raise QueryStateError(
            f"operator '{uid}' of job '{self._job}' is a {node.kind.value} operator, which "
            f"keeps no keyed state; query_state reads the keyed state of operators after "
            f"key_by(): {queryable}"
        )

    def _on_event(self, event: JobEvent) -> None:
        if isinstance(event, JobStarted):
            self._refusal = None
        elif (refusal := _refusal_after(event)) is not None:
            self._refusal = refusal
        else:
            return
        self._signal()

    def _signal(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    def __repr__(self) -> str:
        state = "deployed" if self._attempt is not None else (self._refusal or "starting")
        return f"<StateQueries {self._job!r} {state}>"


def _refusal_after(event: JobEvent) -> str | None:
    """Why no query is answered after ``event``; ``None`` if the event changes nothing."""
    job = event.job
    match event:
        case JobRestarting(attempt=attempt, cause=cause, delay=delay):
            return (
                f"job '{job}' is restarting: attempt {attempt} failed ({cause!r}) and the next "
                f"starts in {delay:g} s; query again once job.status is RUNNING"
            )
        case JobFinished():
            return f"job '{job}' has finished and its subtasks with it; {_READ_SAVEPOINT}"
        case JobFailed():
            return f"job '{job}' has failed (see job.failures); {_READ_SAVEPOINT}"
        case JobCanceled():
            return f"job '{job}' was cancelled; {_READ_SAVEPOINT}"
    return None
