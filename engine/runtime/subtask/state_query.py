"""QueryState: the control message that reads one key's keyed state on a subtask's own loop.

A ``SubtaskActor`` takes it from its control mailbox between batches, as it takes checkpoint
triggers, and answers it there and then: nothing else ever touches the subtask's state, and
the value read is the one the records before it have made.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import anyio

from lockgate.engine.errors import QueryStateError
from lockgate.engine.runtime.operators.base import Operator
from lockgate.engine.state.state_reader import read_state

__all__ = ["QueryAnswer", "QueryState", "answer_query"]


class QueryAnswer:
    """A one-shot slot for the answer to one query: set or failed once, then read.

    The first ``set`` or ``fail`` wins and calls ``on_done`` (once); later ones are ignored,
    so the subtask and the end of its attempt may both try.
    """

    __slots__ = ("_done", "_error", "_on_done", "_value")

    def __init__(self, on_done: Callable[[QueryAnswer], None]) -> None:
        self._done = anyio.Event()
        self._on_done = on_done
        self._value: Any = None
        self._error: BaseException | None = None

    @property
    def is_done(self) -> bool:
        """Whether the answer was given."""
        return self._done.is_set()

    def set(self, value: Any) -> None:
        """Answer with ``value``, unless answered already."""
        if not self.is_done:
            self._value = value
            self._finish()

    def fail(self, error: BaseException) -> None:
        """Answer with ``error``, raised by ``wait``, unless answered already."""
        if not self.is_done:
            self._error = error
            self._finish()

    async def wait(self) -> Any:
        """Return the value, or raise the error, once the answer is given."""
        await self._done.wait()
        if self._error is not None:
            raise self._error
        return self._value

    def _finish(self) -> None:
        self._done.set()
        self._on_done(self)


@dataclass(frozen=True, slots=True)
class QueryState:
    """Read ``key``'s value of the keyed state ``state_name`` of operator ``uid``; answer it."""

    uid: str
    state_name: str
    key: Any
    answer: QueryAnswer
    subtask: str  # which subtask answers, as errors name it: "2/3"


def answer_query(query: QueryState, operators: Sequence[Operator]) -> None:
    """Read what ``query`` asks of one of ``operators`` and answer it; never raise.

    A query is its caller's business, not the job's: whatever reading raises (an unknown
    state, an ``AggregateFunction.get_result`` that fails) goes back to the caller as a
    ``QueryStateError``, and the subtask goes on.
    """
    try:
        query.answer.set(_read(query, operators))
    except QueryStateError as error:
        query.answer.fail(error)
    except Exception as error:  # user code ran in the read: it must not fail the job
        failure = QueryStateError(
            f"reading state '{query.state_name}' of operator '{query.uid}' for key "
            f"{query.key!r} raised {error!r} in subtask {query.subtask}"
        )
        failure.__cause__ = error
        query.answer.fail(failure)


def _read(query: QueryState, operators: Sequence[Operator]) -> Any:
    operator = next((operator for operator in operators if operator.uid == query.uid), None)
    if operator is None:  # the router sends a query only to a chain that holds its uid
        raise QueryStateError(f"subtask {query.subtask} runs no operator '{query.uid}'")
    owner = f"operator '{query.uid}' (subtask {query.subtask})"
    return read_state(operator.keyed_state, query.state_name, query.key, owner=owner)
