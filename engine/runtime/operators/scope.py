"""OperatorScope: which operator instance is running, for error messages."""

from __future__ import annotations

from dataclasses import dataclass
from types import TracebackType

from lockgate.engine.errors import AsyncioRequired, OperatorError, RestoreError

__all__ = ["OperatorScope"]


@dataclass(frozen=True, slots=True)
class OperatorScope:
    """One operator's uid in one subtask; turns a user exception into an ``OperatorError``.

    Used as ``with scope: <call user code>``: an exception leaving the block is raised again
    as an ``OperatorError`` naming this operator and subtask, with the original as cause. A
    ``RestoreError`` (restored state that does not fit) and ``AsyncioRequired`` (a connector
    that cannot run on this loop) leave as themselves: no restart helps.
    """

    uid: str
    subtask_index: int
    parallelism: int

    @property
    def name(self) -> str:
        """The operator instance as ``uid[subtask_index]``."""
        return f"{self.uid}[{self.subtask_index}]"

    def failure(self, error: BaseException) -> OperatorError:
        """Return the ``OperatorError`` to raise ``from error``."""
        return OperatorError(self.uid, self.subtask_index, self.parallelism, error)

    def __enter__(self) -> OperatorScope:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        # These already name the operator, and restarting cannot cure them.
        passes = isinstance(error, OperatorError | RestoreError | AsyncioRequired)
        if isinstance(error, Exception) and not passes:
            raise self.failure(error) from error
