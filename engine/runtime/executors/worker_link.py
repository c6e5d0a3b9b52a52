"""WorkerLink and RemoteSubtask: a worker process as the driving process's actors see it.

A ``WorkerLink`` actor owns the driver's end of one worker's control connection: it hands
the coordinator what the worker's subtasks told it, answers their calls to ``DriverSide``
objects, keeps their latest metrics, and crashes (failing the attempt) when the worker
reports a failure, closes its connection or stays silent past the heartbeat timeout. A
``RemoteSubtask`` is the coordinator's ref to one subtask in a worker: the control
messages it gets go to that subtask, in order, and stopping it stops that subtask.
"""

from __future__ import annotations

import contextlib
import inspect
import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import anyio
from anyio.abc import TaskGroup

from lockgate.actors import Actor, ActorRef, ActorStopped, StopActor, run_with_group
from lockgate.engine.checkpointing.messages import SubtaskId
from lockgate.engine.errors import (
    ConnectionLost,
    EngineError,
    JobError,
    QueryStateError,
    WorkerLost,
)
from lockgate.engine.runtime.executors.control_messages import (
    AttemptFailed,
    Deployed,
    DriverCall,
    DriverReply,
    Heartbeat,
    Listening,
    ToCoordinator,
    ToSubtask,
    WorkerFinished,
)
from lockgate.engine.runtime.executors.frames import FrameStream
from lockgate.engine.runtime.executors.shipping import DriverObjects, shippable
from lockgate.engine.runtime.metrics.counters import SubtaskCounters
from lockgate.engine.runtime.subtask.state_query import QueryState

__all__ = ["RemoteSubtask", "WorkerEnd", "WorkerLink"]

_LOST = (anyio.EndOfStream, anyio.IncompleteRead, anyio.BrokenResourceError, OSError)
_GONE = (anyio.ClosedResourceError, anyio.BrokenResourceError)
_CALLS_END_GRACE = 5.0  # seconds a finished worker's blocking-call connection may take to end
_CAUSE_GRACE = 1.0  # seconds a worker's lost data connection waits for the failure behind it


@dataclass(frozen=True)
class WorkerEnd:
    """The driver's end of one worker: its number, process id, connection, and subtasks."""

    worker: int
    pid: int
    frames: FrameStream
    calls: FrameStream  # the worker's blocking calls to DriverSide objects
    subtasks: tuple[str, ...]
    wait_exit: Callable[[], Awaitable[int]]  # waits for the process to end: its exit code

    def describe(self) -> str:
        """``worker 1 (pid 4242, hosting 'map' 2/2, 'sink' 2/2)``."""
        hosting = ", ".join(self.subtasks) or "no subtask"
        return f"worker {self.worker} (pid {self.pid}, hosting {hosting})"


class WorkerLink(Actor[Any]):
    """The driver's side of one worker's attempt; ends when the worker finished.

    ``listening`` is set once its data plane listens, ``deployed`` once the worker built its
    subtasks (both also when it failed to: ``deploy_failure``); ``metrics`` are the
    subtasks' metrics of its last heartbeat.
    """

    def __init__(
        self,
        end: WorkerEnd,
        objects: DriverObjects,
        coordinator: ActorRef[Any],
        *,
        heartbeat_timeout: float,
    ) -> None:
        self.end = end
        self.listening = anyio.Event()
        self.deployed = anyio.Event()
        self.deploy_failure: BaseException | None = None
        self.metrics: tuple[SubtaskCounters, ...] = ()
        self._objects = objects
        self._coordinator = coordinator
        self._timeout = heartbeat_timeout
        self._heard = anyio.Event()
        self._calls_done = anyio.Event()
        self._stopped: set[SubtaskId] = set()
        self._outgoing, self._outbox = anyio.create_memory_object_stream[Any](math.inf)

    def stop(self, subtask: SubtaskId) -> None:
        """Stop ``subtask`` of this worker (the coordinator stopped its ``RemoteSubtask``)."""
        self._stopped.add(subtask)
        self.send(ToSubtask(subtask, StopActor()))

    @property
    def _all_stopped(self) -> bool:
        return len(self._stopped) >= len(self.end.subtasks)

    def send(self, message: Any) -> None:
        """Send ``message`` to the worker, after those sent before it."""
        with contextlib.suppress(*_GONE):  # the worker's attempt is over: nothing to tell
            self._outgoing.send_nowait(message)

    async def run(self) -> None:
        """Serve the connection until the worker finished; raise when it failed or was lost."""
        try:
            await run_with_group(self._serve)
        finally:
            self._outgoing.close()
            self._outbox.close()

    async def _serve(self, group: TaskGroup) -> None:
        group.start_soon(self._write)
        group.start_soon(self._watch_heartbeats)
        group.start_soon(self._answer_blocking_calls)
        await self._read(group)
        await self._calls_ended()

    async def _read(self, group: TaskGroup) -> None:
        while True:
            try:
                message = await self.end.frames.receive()
            except _LOST:
                await self._calls_ended()
                raise await self._lost("closed its control connection") from None
            self._heard.set()
            if self._on_message(message, group):
                return

    def _on_message(self, message: Any, group: TaskGroup) -> bool:
        # Returns whether the worker's attempt is over.
        match message:
            case ToCoordinator(message=inner):
                with contextlib.suppress(ActorStopped):  # the attempt is ending anyway
                    self._coordinator.tell_control(inner)
            case Heartbeat(metrics=metrics):
                self.metrics = metrics
            case DriverCall(call_id=None, target=target, method=method, args=args):
                getattr(self._objects.get(target), method)(*args)
            case DriverCall():
                group.start_soon(self._answer, message)
            case _:
                return self._on_progress(message, group)
        return False

    def _on_progress(self, message: Any, group: TaskGroup) -> bool:
        # How far the worker's attempt got; returns whether it is over.
        match message:
            case Listening():
                self.listening.set()
            case Deployed():
                self.deployed.set()
            case AttemptFailed(actor="", error=error) if not self.deployed.is_set():
                self.deploy_failure = error
                self.listening.set()
                self.deployed.set()
                return True
            case AttemptFailed(error=ConnectionLost()) if self._all_stopped:
                return True  # stopping: a peer that stopped first closed its connection
            case AttemptFailed(error=ConnectionLost()):
                group.start_soon(self._fail_after_the_cause, message)
            case AttemptFailed(actor=actor, error=error):
                raise self._failure(actor, error)
            case WorkerFinished():
                return True
            case other:
                raise TypeError(f"{self.end.describe()} sent an unknown message {other!r}")
        return False

    async def _answer(self, call: DriverCall) -> None:
        assert call.call_id is not None
        try:
            result = getattr(self._objects.get(call.target), call.method)(*call.args, **call.kwargs)
            if inspect.isawaitable(result):
                result = await result
        except Exception as error:  # the caller in the worker raises it
            self.send(DriverReply(call.call_id, error=shippable(error)))
        else:
            self.send(DriverReply(call.call_id, result))

    async def _calls_ended(self) -> None:
        # A receive cancelled on a Unix socket just as it becomes readable makes asyncio
        # call set_result on a cancelled future (anyio 4.16): once the worker's attempt is
        # over, let the connection of blocking calls see its end instead of cancelling it.
        with anyio.move_on_after(_CALLS_END_GRACE):
            await self._calls_done.wait()

    async def _answer_blocking_calls(self) -> None:
        try:
            await self._serve_blocking_calls()
        finally:
            self._calls_done.set()

    async def _serve_blocking_calls(self) -> None:
        # The worker waits, its loop blocked, for each answer: they are plain methods.
        while True:
            try:
                call: DriverCall = await self.end.calls.receive()
            except _LOST:
                return  # the control connection tells how the worker ended
            try:
                value = getattr(self._objects.get(call.target), call.method)(*call.args)
            except Exception as error:  # the caller in the worker raises it
                reply = DriverReply(0, error=shippable(error))
            else:
                reply = DriverReply(0, value)
            try:
                await self.end.calls.send(reply)
            except _LOST:
                return

    async def _fail_after_the_cause(self, failed: AttemptFailed) -> None:
        # A lost data connection follows the failure of the worker at its other end: give
        # that worker's own report (its error, or its death) a moment to fail the attempt.
        await anyio.sleep(_CAUSE_GRACE)
        raise self._failure(failed.actor, failed.error)

    def _failure(self, actor: str, error: BaseException) -> BaseException:
        if isinstance(error, EngineError):
            return error
        failure = JobError(
            f"subtask {actor} on {self.end.describe()} failed outside user code: {error!r}"
        )
        failure.__cause__ = error
        return failure

    async def _write(self) -> None:
        async with self._outbox:
            async for message in self._outbox:
                try:
                    await self.end.frames.send(message)
                except _LOST:
                    return  # the reader sees the connection end and says how the worker ended

    async def _watch_heartbeats(self) -> None:
        while True:
            self._heard = anyio.Event()
            with anyio.move_on_after(self._timeout) as silence:
                await self._heard.wait()
            if silence.cancelled_caught:
                break
        raise WorkerLost(
            f"{self.end.describe()} sent no heartbeat for {self._timeout} s "
            "(heartbeat_timeout): it hangs or is stopped; every worker of the attempt is torn "
            "down and the restart strategy decides"
        )

    async def _lost(self, what: str) -> WorkerLost:
        code: int | None = None
        with anyio.move_on_after(1.0):  # the process is gone or going: learn how it ended
            code = await self.end.wait_exit()
        ended = "is still running" if code is None else _exit(code)
        return WorkerLost(
            f"{self.end.describe()} {what}: it {ended}; every worker of the attempt is torn "
            "down and the restart strategy decides"
        )

    def __repr__(self) -> str:
        return f"<WorkerLink {self.end.describe()}>"


def _exit(code: int) -> str:
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"was killed by signal {-code} ({_signal_name(-code)})"
    return f"exited with code {code}"


def _signal_name(number: int) -> str:
    import signal

    return signal.Signals(number).name


class RemoteSubtask(Actor[Any]):
    """The coordinator's ref to a subtask in a worker: it forwards, in order; stop stops it."""

    control_capacity = 1 << 16

    def __init__(self, subtask: SubtaskId, link: WorkerLink) -> None:
        self._subtask = subtask
        self._link = link

    async def run(self) -> None:
        """Forward control messages until stopped; then stop the subtask."""
        await super().run()
        self._link.stop(self._subtask)

    async def on_control(self, message: Any) -> None:
        """Forward ``message`` to the subtask (state queries are not answered there yet)."""
        if isinstance(message, QueryState):
            message.answer.fail(
                QueryStateError(
                    f"subtask {message.subtask} of operator '{message.uid}' runs in a worker "
                    "process: query_state() "
                    "does not reach worker processes yet; run the job on the LocalExecutor "
                    "to query its state"
                )
            )
            return
        self._link.send(ToSubtask(self._subtask, message))
