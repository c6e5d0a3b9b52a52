"""JobMaster: runs one job attempt in an actor system and reports how it ended."""

from __future__ import annotations

from lockgate.actors import ActorCrashed, ActorSystem
from lockgate.engine.errors import JobError, OperatorError
from lockgate.engine.metrics import JobMetrics
from lockgate.engine.planning import ExecutionPlan
from lockgate.engine.runtime.deployment import Deployment, RuntimeOptions, deploy

__all__ = ["JobMaster"]


class JobMaster:
    """Deploys a plan's subtasks, waits for them all to finish, and turns crashes into errors.

    A subtask that fails cancels every other one (supervision escalates); ``run`` then raises
    the ``OperatorError`` naming the operator and subtask, or a ``JobError`` for a failure
    outside user code. ``cancel`` stops every subtask; ``run`` then returns ``False``.
    """

    def __init__(self, name: str, plan: ExecutionPlan, options: RuntimeOptions) -> None:
        self.name = name
        self.plan = plan
        self.options = options
        self._deployment: Deployment | None = None
        self._system: ActorSystem | None = None
        self._cancelled = False

    async def run(self) -> bool:
        """Run the job to its end; return ``True`` if it finished, ``False`` if cancelled."""
        self._deployment = deploy(self.plan, self.options)
        failure: BaseException | None = None
        try:
            async with ActorSystem(self.name) as system:
                self._system = system
                for subtask, doorbell in self._deployment.subtasks:
                    system.spawn(subtask, name=repr(subtask), doorbell=doorbell)
                if self._cancelled:
                    system.cancel()
        except ActorCrashed as crash:
            failure = _job_failure(crash)
        finally:
            self._system = None
        if failure is not None:
            raise failure
        return not self._cancelled

    def cancel(self) -> None:
        """Stop every subtask now, wherever it is."""
        self._cancelled = True
        if self._system is not None:
            self._system.cancel()

    def metrics(self) -> JobMetrics:
        """Return every subtask's counters now (empty before the job was deployed)."""
        subtasks = () if self._deployment is None else self._deployment.subtasks
        return JobMetrics(self.name, tuple(subtask.statistics() for subtask, _ in subtasks))


def _job_failure(crash: ActorCrashed) -> BaseException:
    cause = crash.__cause__
    if isinstance(cause, OperatorError):
        return cause
    error = JobError(f"subtask '{crash.actor}' failed outside user code: {cause!r}")
    error.__cause__ = cause
    return error
