"""The worker process: what it does with its subtasks of one attempt.

``python -c "from lockgate.engine.runtime.executors.worker import main; main()" <socket path>
<worker number>`` connects
to the driving process, says ``Hello``, and gets a ``Deploy``: it builds the subtasks the
placement gives it, says ``Deployed``, waits for ``Start``, runs them on its own event loop
(uvloop when installed), forwards what they tell the coordinator, sends a ``Heartbeat``
with their metrics every interval, and ends with ``WorkerFinished`` once every subtask
stopped, or ``AttemptFailed``. A ``Shutdown``, or the driving process going away (its end
of the connection closes; on Linux the kernel also kills a worker whose parent died),
cancels the subtasks and ends the process. How the process is started and watched is the
executor's (``processes.py``); this module is what any executor's worker runs.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import importlib.util
import itertools
import math
import os
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any

import anyio

from lockgate.actors import (
    Actor,
    ActorCrashed,
    ActorRef,
    ActorStopped,
    ActorSystem,
    StopActor,
    single_error,
)
from lockgate.engine.checkpointing.messages import SubtaskId
from lockgate.engine.errors import ConnectionLost
from lockgate.engine.io.driver_side import DriverLink
from lockgate.engine.runtime.executors.byte_links import connect_link
from lockgate.engine.runtime.executors.control_messages import (
    AttemptFailed,
    Connect,
    Deploy,
    Deployed,
    DriverCall,
    DriverReply,
    Heartbeat,
    Hello,
    Listening,
    Shutdown,
    Start,
    ToCoordinator,
    ToSubtask,
    WorkerFinished,
)
from lockgate.engine.runtime.executors.driver_calls import BlockingCalls, DriverAnswer
from lockgate.engine.runtime.executors.frames import FrameStream
from lockgate.engine.runtime.executors.peers import PeerEnds, connect_peers
from lockgate.engine.runtime.executors.shipping import WorkerCopies, shippable
from lockgate.engine.runtime.executors.worker_deployment import WorkerDeployment
from lockgate.engine.runtime.job.deployment import Deployment, deploy
from lockgate.engine.runtime.network.transport import Connection
from lockgate.engine.runtime.subtask.actor import SubtaskActor

__all__ = ["WorkerSession", "main"]

_PR_SET_PDEATHSIG = 1
_THREADS_GRACE = 1.0  # seconds a worker waits for its threads before it ends at once
_LOST = (anyio.EndOfStream, anyio.IncompleteRead, anyio.BrokenResourceError, OSError)


class _CoordinatorProxy(Actor[Any]):
    """The coordinator as the worker's subtasks see it: every message goes to the driver."""

    control_capacity = 1 << 16

    def __init__(self, post: Callable[[Any], None]) -> None:
        self._post = post

    async def on_control(self, message: Any) -> None:
        self._post(ToCoordinator(message))


class _Link(DriverLink):
    """How a ``DriverSide`` copy in this worker calls its original."""

    def __init__(self, session: WorkerSession, target: int) -> None:
        self._session = session
        self._target = target

    def call_blocking(self, method: str, args: tuple[Any, ...]) -> Any:
        return self._session.calls.call(self._target, method, args)

    async def call(self, method: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        return await self._session.call_driver(self._target, method, args, kwargs)

    def tell(self, method: str, args: tuple[Any, ...]) -> None:
        self._session.post(DriverCall(None, self._target, method, args))


class WorkerSession:
    """One worker's attempt, from ``Hello`` to ``WorkerFinished`` or ``AttemptFailed``.

    Messages to the driver leave in the order they were posted; a subtask's control
    messages are delivered to it in the order the driver sent them.
    """

    def __init__(self, frames: FrameStream, calls: BlockingCalls, worker: int) -> None:
        self.frames = frames
        self.calls = calls
        self.worker = worker
        self._outgoing, self._outbox = anyio.create_memory_object_stream[Any](math.inf)
        self._written = anyio.Event()
        self._refs: dict[SubtaskId, ActorRef[Any]] = {}
        self._actors: list[SubtaskActor] = []
        self._replies: dict[int, DriverAnswer] = {}
        self._call_ids = itertools.count()
        self._start = anyio.Event()
        self._connect = anyio.Event()
        self._reported = False
        self._held: list[ToSubtask] | None = []
        self._stopped: set[SubtaskId] = set()
        self._heartbeat = 0.5

    def post(self, message: Any) -> None:
        """Send ``message`` to the driver, after those posted before it.

        After the attempt's outcome nothing more is sent (a last heartbeat is dropped).
        """
        with contextlib.suppress(anyio.ClosedResourceError):
            self._outgoing.send_nowait(message)

    async def call_driver(
        self, target: int, method: str, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        """Run ``method`` on ``DriverSide`` object ``target`` in the driver; its answer."""
        call_id = next(self._call_ids)
        self._replies[call_id] = answer = DriverAnswer()
        self.post(DriverCall(call_id, target, method, args, kwargs))
        return await answer.wait()

    async def run(self) -> None:
        """Say hello, take the deployment, run it to its end, report how it ended."""
        await self.frames.send(Hello(self.worker, os.getpid()))
        deployment: Deploy = await self.frames.receive()
        async with anyio.create_task_group() as group:
            group.start_soon(self._write)
            group.start_soon(self._read, group.cancel_scope)
            group.start_soon(self._beat)
            if (outcome := await self._run_attempt(deployment)) is not None:
                self.post(outcome)
            self._outgoing.close()
            await self._written.wait()
            group.cancel_scope.cancel()

    async def _run_attempt(self, message: Deploy) -> WorkerFinished | AttemptFailed | None:
        sys.path[:0] = [path for path in message.sys_path if path not in sys.path]
        try:
            copies = WorkerCopies(lambda target: _Link(self, target))
            deployment: WorkerDeployment = copies.loads(message.payload)
            self._heartbeat = deployment.heartbeat_interval
            async with ActorSystem(f"worker {self.worker} links") as links:
                coordinator = links.spawn(_CoordinatorProxy(self.post), name="coordinator")
                try:
                    await self._host(deployment, coordinator, message)
                finally:
                    coordinator.stop()
        except Exception as error:  # the one place a worker catches broadly: it reports it
            if self._reported:
                return None
            return self._failed(error)
        self.post(self._heartbeat_now())  # the driver keeps the subtasks' final metrics
        return WorkerFinished()

    def _failed(self, error: Exception) -> AttemptFailed:
        # A subtask crashed (ActorCrashed, maybe in a group), or the deployment failed.
        failure = single_error(error) if isinstance(error, ExceptionGroup) else error
        if isinstance(failure, ActorCrashed):
            cause = failure.__cause__
            if isinstance(cause, ExceptionGroup):
                cause = single_error(cause)
            return AttemptFailed(
                failure.actor, self._shippable(cause if isinstance(cause, Exception) else failure)
            )
        failure = failure if isinstance(failure, Exception) else error
        return AttemptFailed("", self._shippable(failure))

    def _heartbeat_now(self) -> Heartbeat:
        return Heartbeat(tuple(actor.statistics() for actor in self._actors))

    async def _host(
        self, deployment: WorkerDeployment, coordinator: ActorRef[Any], message: Deploy
    ) -> None:
        connections = await connect_peers(
            self.worker,
            deployment.peers(self.worker),
            message.addresses,
            message.token,
            listening=lambda: self.post(Listening()),
            connect_now=self._connect.wait,
        )
        try:
            await self._run_connected(deployment, coordinator, connections)
        except ConnectionLost:
            if not self._stopping:
                raise
            # Stopped by the coordinator: a peer whose subtasks stopped first closed its
            # connection while channels were open (a stop ends no channel), as it may.

    async def _run_connected(
        self,
        deployment: WorkerDeployment,
        coordinator: ActorRef[Any],
        connections: dict[int, Connection],
    ) -> None:
        async with contextlib.AsyncExitStack() as stack:
            for connection in connections.values():  # closed, unless entered below
                stack.push_async_callback(connection.aclose)
            built = self._build(deployment, coordinator, connections)
            self.post(Deployed())
            await self._start.wait()
            for connection in connections.values():  # they carry records until the end
                await stack.enter_async_context(connection)
            try:
                async with ActorSystem(f"worker {self.worker}") as system:
                    for subtask, doorbell in built.subtasks:
                        ref = system.spawn(subtask, name=subtask.display_name, doorbell=doorbell)
                        self._refs[subtask.settings.subtask_id] = ref
                        self._actors.append(subtask)
                    self._deliver_held()
            except ActorCrashed as crash:  # reported before its connections close: the cause
                self.post(self._failed(crash))
                self._reported = True
                raise

    @property
    def _stopping(self) -> bool:
        # Whether the coordinator told every subtask of this worker to stop.
        return bool(self._refs) and self._stopped >= set(self._refs)

    def _build(
        self,
        deployment: WorkerDeployment,
        coordinator: ActorRef[Any],
        connections: dict[int, Connection],
    ) -> Deployment:
        hosts = deployment.hosts(self.worker)
        return deploy(
            deployment.plan,
            deployment.options,
            deployment.attempt_with(coordinator),
            hosts=lambda chain_id, index: (chain_id, index) in hosts,
            remote=PeerEnds(deployment.plan, deployment.worker_of, connections),
        )

    def _shippable(self, error: Exception) -> Exception:
        error.add_note(
            f"in worker {self.worker} (pid {os.getpid()}):\n"
            + "".join(traceback.format_exception(error))
        )
        return shippable(error)

    async def _write(self) -> None:
        async with self._outbox:
            async for message in self._outbox:
                await self.frames.send(message)
        self._written.set()

    async def _read(self, scope: anyio.CancelScope) -> None:
        while True:
            try:
                message = await self.frames.receive()
            except _LOST:  # the driving process is gone: nothing may run on
                scope.cancel()
                return
            if isinstance(message, Shutdown):
                scope.cancel()
                return
            self._on_message(message)

    def _deliver_held(self) -> None:
        # What came for the subtasks between Start and their spawning, in order.
        held, self._held = self._held, None
        for message in held or ():
            self._to_subtask(message)

    def _to_subtask(self, message: ToSubtask) -> None:
        if self._held is not None:  # not spawned yet: the coordinator knew them first
            self._held.append(message)
            return
        match message:
            case ToSubtask(subtask=subtask, message=StopActor()):
                self._stopped.add(subtask)
                self._refs[subtask].stop()
            case ToSubtask(subtask=subtask, message=inner):
                # A subtask that stopped since needs nothing more: the driver learns of its end.
                with contextlib.suppress(ActorStopped):
                    self._refs[subtask].tell_control(inner)

    def _on_message(self, message: Any) -> None:
        match message:
            case ToSubtask():
                self._to_subtask(message)
            case Connect():
                self._connect.set()
            case Start():
                self._start.set()
            case DriverReply(call_id=call_id, value=value, error=error):
                self._replies.pop(call_id).give(value, error)
            case other:
                raise TypeError(f"worker {self.worker} got unknown message {other!r}")

    async def _beat(self) -> None:
        while True:
            self.post(self._heartbeat_now())
            await anyio.sleep(self._heartbeat)


def _exit_with_parent() -> None:
    # Linux kills this process when the one that started it dies, however it died.
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


async def serve(path: str, worker: int) -> None:
    """Connect to the driver at Unix socket ``path`` and run worker ``worker``'s session."""
    frames = FrameStream(await connect_link(path))
    calls = BlockingCalls(path, worker)
    try:
        await WorkerSession(frames, calls, worker).run()
    finally:
        calls.close()
        with anyio.CancelScope(shield=True):
            await frames.aclose()


def _exit_now() -> None:
    # The session is over and reported. Tearing the interpreter down (every module, every
    # object) would take the process a tenth of a second or more, for nothing: run the exit
    # handlers (logging flushes its handlers there) and flush the standard streams, as
    # Python's own exit does, then end. Threads that are not daemons (AnyIO's, told to stop
    # as the loop ended) are waited for first, a moment; if one still runs, the process
    # ends as Python ends it, which waits for it.
    me = threading.current_thread()
    others = [t for t in threading.enumerate() if t is not me and not t.daemon]
    deadline = time.monotonic() + _THREADS_GRACE
    for thread in others:
        thread.join(max(0.0, deadline - time.monotonic()))
    if any(thread.is_alive() for thread in others):
        return
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(0)


def main(argv: list[str] | None = None) -> None:
    """Run a worker process: ``<socket path> <worker number>``; it ends the process."""
    path, worker = argv or sys.argv[1:]
    _exit_with_parent()
    uvloop = importlib.util.find_spec("uvloop") is not None
    anyio.run(serve, path, int(worker), backend="asyncio", backend_options={"use_uvloop": uvloop})
    _exit_now()
