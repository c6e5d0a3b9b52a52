"""StreamEnvironment: where a job is configured, built from sources, and run."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import anyio

from lockgate.engine.api.client import JobClient, JobResult
from lockgate.engine.api.options import check_options, check_watermark_interval
from lockgate.engine.api.stream import DataStream
from lockgate.engine.checkpointing.config import CheckpointConfig, CheckpointingMode
from lockgate.engine.checkpointing.storage import CheckpointStorage, storage_for
from lockgate.engine.graph.builder import GraphBuilder, Producer
from lockgate.engine.graph.job_graph import OperatorKind
from lockgate.engine.graph.planning import ExecutionPlan, plan_job
from lockgate.engine.io.sources import Source
from lockgate.engine.restore.resolve import (
    ClaimMode,
    IfMissing,
    RestoreFrom,
    RestoreOptions,
    resolve_restore,
    restore_options,
)
from lockgate.engine.runtime.executors.executor import Executor
from lockgate.engine.runtime.executors.local import LocalExecutor
from lockgate.engine.runtime.job.deployment import RuntimeOptions
from lockgate.engine.runtime.job.job_master import JobMaster, JobSettings
from lockgate.engine.runtime.job.restart import RestartStrategy
from lockgate.engine.runtime.snapshots.incremental import FULL_SNAPSHOT_EVERY
from lockgate.engine.savepoints.values import TypeCodec, ValueCodec
from lockgate.engine.state import MemoryStateBackend, StateBackend
from lockgate.engine.state.backends import state_backend_for
from lockgate.engine.state.rocksdb.options import CompactionStyle
from lockgate.engine.time.clock import Clock, SystemClock
from lockgate.engine.time.watermarks import WatermarkStrategy

__all__ = ["StreamEnvironment"]

T = TypeVar("T")


class StreamEnvironment:
    """Builds a job with the fluent API and runs it on this event loop.

    Options:
        parallelism: default number of subtasks per operator.
        max_parallelism: number of key groups; the upper bound of any operator's
            parallelism, fixed for the life of a job's state (Flink's default, 128).
        batch_size: records per batch on a channel.
        channel_capacity: records a channel holds before its sender waits (backpressure);
            at least ``batch_size``.
        buffer_timeout: seconds a partly filled batch may wait before it is sent anyway.
        auto_watermark_interval: seconds between two periodic emissions of a subtask's
            watermark generators (Flink's default, 0.2; 0: after every batch).
        clock: where time is read; a ``ManualClock`` or a simulator's clock in tests.

    The graph is validated when a job is planned, started or executed, before any record
    flows. The same environment can run its graph again, also from one of its checkpoints.

    Checkpointing is configured with ``enable_checkpointing``; a bounded job always ends with
    a final checkpoint, so that transactional sinks commit everything before it reports
    success. Without checkpointing a failed job is not restarted; with it, the default
    restart strategy is ``RestartStrategy.exponential_delay()`` (as in Flink 1.19+).
    """

    def __init__(
        self,
        *,
        parallelism: int = 1,
        max_parallelism: int = 128,
        batch_size: int = 512,
        channel_capacity: int = 2048,
        buffer_timeout: float = 0.1,
        auto_watermark_interval: float = 0.2,
        clock: Clock | None = None,
    ) -> None:
        check_options(parallelism, max_parallelism, batch_size, channel_capacity)
        check_watermark_interval(auto_watermark_interval)
        self._builder = GraphBuilder(parallelism=parallelism, max_parallelism=max_parallelism)
        self.max_parallelism = max_parallelism
        self.batch_size = batch_size
        self.channel_capacity = channel_capacity
        self.buffer_timeout = buffer_timeout
        self.auto_watermark_interval = auto_watermark_interval
        self.clock: Clock = clock or SystemClock()
        self.checkpoint_config = CheckpointConfig()
        self.checkpointing_enabled = False
        self.checkpoint_storage: CheckpointStorage = storage_for(None)
        self.restart_strategy: RestartStrategy | None = None
        self.state_backend: StateBackend = MemoryStateBackend()
        self.incremental_checkpoints = False
        self._savepoint_types: list[TypeCodec] = []
        self._savepoint_pickle = False

    @property
    def parallelism(self) -> int:
        """The default number of subtasks of operators added from now on."""
        return self._builder.parallelism

    @parallelism.setter
    def parallelism(self, parallelism: int) -> None:
        self._builder.parallelism = parallelism

    def enable_checkpointing(  # noqa: PLR0913 - CheckpointConfig's options, all keyword-only
        self,
        interval: float | None = None,
        *,
        mode: CheckpointingMode = CheckpointingMode.EXACTLY_ONCE,
        timeout: float = 600.0,
        min_pause: float = 0.0,
        max_concurrent: int = 1,
        tolerable_failures: int = 3,
        max_retained: int = 1,
        unaligned: bool = False,
        aligned_timeout: float | None = None,
    ) -> None:
        """Take a checkpoint every ``interval`` seconds; see ``CheckpointConfig`` for the rest.

        ``unaligned=True`` lets barriers overtake the records in full channels under
        backpressure (exactly-once only); ``aligned_timeout`` starts each checkpoint aligned
        and goes unaligned after that many seconds of alignment.

        Raises:
            ValueError: options that do not fit together (see ``CheckpointConfig``).
        """
        self.checkpoint_config = CheckpointConfig(
            interval=interval,
            mode=mode,
            timeout=timeout,
            min_pause=min_pause,
            max_concurrent=max_concurrent,
            tolerable_failures=tolerable_failures,
            max_retained=max_retained,
            unaligned=unaligned,
            aligned_timeout=aligned_timeout,
        )
        self.checkpointing_enabled = True

    def set_checkpoint_storage(self, storage: str | CheckpointStorage) -> None:
        """Keep checkpoints at ``storage``: a URL or a ``CheckpointStorage`` object.

        URLs: ``"memory://"`` (default), ``"file:///path"``, ``"s3://bucket/prefix"`` (extra
        ``s3``; the endpoint comes from ``LOCKGATE_S3_ENDPOINT`` or ``AWS_ENDPOINT_URL``).
        """
        self.checkpoint_storage = storage_for(storage) if isinstance(storage, str) else storage

    def set_restart_strategy(self, strategy: RestartStrategy) -> None:
        """Restart failed attempts as ``strategy`` says."""
        self.restart_strategy = strategy

    def set_state_backend(
        self,
        backend: str,
        *,
        path: str | os.PathLike[str] | None = None,
        incremental: bool = False,
        compaction_style: CompactionStyle | None = None,
        level0_compaction_trigger: int | None = None,
        cache_entries: int | None = None,
    ) -> None:
        """Choose where keyed state lives: ``"memory"`` (the default) or ``"rocksdb"``.

        ``"rocksdb"`` (extra ``rocksdb``) keeps each operator subtask's keyed state on disk,
        so it may be larger than memory: one database folder per operator subtask and
        attempt, under ``path`` (the system's temporary folder by default), deleted when the
        operator closes.

        ``incremental`` checkpoints write only what changed since the last completed
        checkpoint, into the storage's shared folder, and reference the earlier files they
        build on; a shared file is deleted once no retained checkpoint references it. The
        memory backend writes the keys changed since, and a full snapshot every
        ``FULL_SNAPSHOT_EVERY`` checkpoints. The RocksDB backend takes a RocksDB checkpoint
        (a memtable flush, then hard links of its SST files) and uploads only the SST files
        no completed checkpoint uploaded yet; a compaction rewrites SST files, so some
        checkpoints upload more. Either restores into any backend at any parallelism; a
        RocksDB incremental checkpoint restored into RocksDB has its files downloaded and
        opened as each subtask's database, as Flink does, rather than read and written
        again key by key (at another parallelism, the key groups a subtask does not own are
        deleted, and those it owns inserted from the other old subtasks' files). The first
        checkpoint after a restore is full. Savepoints are always full.

        RocksDB's options (``None`` keeps the default), as ``RocksDBOptions`` describes them:
        ``compaction_style`` (``"level"``, the default, or ``"universal"``, as Flink's
        ``state.backend.rocksdb.compaction.style``; ``"fifo"`` is refused: it deletes keyed
        state), ``level0_compaction_trigger`` (level-0 files that start a compaction,
        default 4; an incremental checkpoint flushes one) and ``cache_entries`` (the bound of
        each keyed operator subtask's write-back cache of hot keys, default
        ``CACHE_ENTRIES``: their values stay Python objects, written to RocksDB in batches
        on eviction and before every snapshot). ``bench/incremental.py`` and
        ``bench/state_backends.py`` measure them (the benchmarks page of the docs).

        Raises:
            ValueError: an unknown backend, an invalid or ``"fifo"`` compaction style, a
                trigger or a cache below 1, or a ``path`` or RocksDB option for ``"memory"``.
            ImportError: ``"rocksdb"`` without its extra (``pip install 'lockgate[rocksdb]'``).
        """
        self.state_backend = state_backend_for(
            backend,
            path=path,
            compaction_style=compaction_style,
            level0_compaction_trigger=level0_compaction_trigger,
            cache_entries=cache_entries,
        )
        self.incremental_checkpoints = incremental

    def register_type(
        self,
        cls: type[Any],
        *,
        name: str | None = None,
        to_plain: Callable[[Any], Any] | None = None,
        from_plain: Callable[[Any], Any] | None = None,
    ) -> None:
        """Let savepoints hold values of ``cls``, encoded as plain data under ``name``.

        Savepoints encode None, bool, int, float, str, bytes, lists, tuples, dicts, sets and
        frozensets natively, and nothing else unless registered: a dataclass is stored as its
        fields, an enum as its value; other classes need ``to_plain`` and ``from_plain``.
        ``name`` (default ``module.QualName``) is what the savepoint records, so keep it
        stable when the class moves. Reading a savepoint never imports or runs anything.
        """
        self._savepoint_types.append(TypeCodec.for_type(cls, name, to_plain, from_plain))

    def allow_pickle_in_savepoints(self) -> None:
        """Opt in to pickling values savepoints cannot encode otherwise, and to reading them.

        Unpickling runs code: only restore savepoints you trust with this on.
        """
        self._savepoint_pickle = True

    def from_source(
        self,
        source: Source[T],
        *,
        uid: str | None = None,
        name: str | None = None,
        parallelism: int | None = None,
        watermark_strategy: WatermarkStrategy | None = None,
    ) -> DataStream[T]:
        """Start a stream that reads ``source``; with a strategy, also in event time.

        ``watermark_strategy`` reads each record's event time and generates watermarks in
        the source's subtasks (``assign_timestamps_and_watermarks`` chained to the source).
        """
        node = self._builder.add_operator(
            OperatorKind.SOURCE, source, uid=uid, name=name, parallelism=parallelism
        )
        stream: DataStream[T] = DataStream(self._builder, (Producer(node),))
        if watermark_strategy is None:
            return stream
        return stream.assign_timestamps_and_watermarks(
            watermark_strategy,
            uid=f"{node.uid}-watermarks",
            name=f"{node.name} watermarks",
            parallelism=node.parallelism,
        )

    def plan(self, *, executor: Executor | None = None) -> ExecutionPlan:
        """Validate the graph and return its plan: chains, edges and channels.

        With an ``executor``, the plan is checked and placed as it would run there: a
        ``ProcessExecutor``'s plan says which worker hosts which subtasks (``placement``).
        """
        graph = self._builder.graph
        graph.max_parallelism = self.max_parallelism
        graph.requires_uids = self.checkpointing_enabled
        plan = plan_job(graph)
        if executor is None:
            return plan
        return executor.prepare(plan, self.checkpoint_storage, self._runtime_options())

    async def execute(
        self,
        name: str = "job",
        *,
        restore_from: RestoreFrom = None,
        allow_non_restored_state: bool = False,
        claim_mode: ClaimMode = "no_claim",
        if_missing: IfMissing = "fail",
        executor: Executor | None = None,
    ) -> JobResult:
        """Run the job to its end and return its result; raise its error if it fails.

        ``restore_from`` starts the job from a savepoint or checkpoint: its location (the
        folder ``stop_with_savepoint`` returned, a ``_metadata`` file, or
        ``CompletedCheckpoint.location``; a path, ``file://`` or ``s3://`` URL),
        ``"latest"`` for the newest completed checkpoint of a job with this name in the
        checkpoint storage, or its ``CheckpointMetadata``. State maps to operators by uid;
        state of a uid the job no longer has fails the restore, unless
        ``allow_non_restored_state`` drops it. ``claim_mode="no_claim"`` (the default) never
        deletes the snapshot; ``"claim"`` hands it to the job, which deletes it once subsumed
        (``"latest"``, the job's own checkpoints, is always claimed). If there is nothing to
        restore (no checkpoint for ``"latest"``, nothing at the location),
        ``if_missing="fail"`` (the default) raises, ``"start"`` starts without state.
        ``executor`` runs the subtasks: on this event loop (``LocalExecutor``, the default)
        or in worker processes (``ProcessExecutor``).
        """
        async with self.start(
            name,
            restore_from=restore_from,
            allow_non_restored_state=allow_non_restored_state,
            claim_mode=claim_mode,
            if_missing=if_missing,
            executor=executor,
        ) as job:
            return await job.wait()

    @asynccontextmanager
    async def start(
        self,
        name: str = "job",
        *,
        restore_from: RestoreFrom = None,
        allow_non_restored_state: bool = False,
        claim_mode: ClaimMode = "no_claim",
        if_missing: IfMissing = "fail",
        executor: Executor | None = None,
    ) -> AsyncIterator[JobClient]:
        """Start the job and yield its ``JobClient`` at once.

        Leaving the block cancels the job if it is still running, and raises the job's
        error if it failed and ``wait`` did not already raise it. The ``executor`` checks
        the job before it starts (``ProcessExecutor``: every function picklable, checkpoint
        storage every worker reaches).
        """
        executor = executor or LocalExecutor()
        plan = self.plan(executor=executor)
        keep = allow_non_restored_state
        options = restore_options(claim_mode, if_missing, allow_non_restored_state=keep)
        settings = await self._settings(name, restore_from, options)
        master = JobMaster(name, plan, self._runtime_options(), settings, executor)
        client = JobClient(master, self.clock)
        body_error: Exception | None = None
        async with anyio.create_task_group() as group:
            group.start_soon(client.run)
            try:
                yield client
            except Exception as error:  # raised again below, outside the task group
                body_error = error
            finally:
                client.cancel()
        if body_error is not None:
            raise body_error
        if (failure := client.unobserved_failure) is not None:
            raise failure

    def _runtime_options(self) -> RuntimeOptions:
        return RuntimeOptions(
            self.batch_size,
            self.channel_capacity,
            self.buffer_timeout,
            self.max_parallelism,
            self.clock,
            self.checkpoint_config.mode,
            self.state_backend,
            FULL_SNAPSHOT_EVERY if self.incremental_checkpoints else None,
            unaligned=self.checkpoint_config.unaligned,
            watermark_interval=self.auto_watermark_interval,
            checkpointing=self.checkpointing_enabled,
        )

    async def _settings(
        self, name: str, restore_from: RestoreFrom, options: RestoreOptions
    ) -> JobSettings:
        strategy = self.restart_strategy or (
            RestartStrategy.exponential_delay()
            if self.checkpoint_config.interval is not None
            else RestartStrategy.none()
        )
        return JobSettings(
            self.checkpoint_config,
            self.checkpoint_storage,
            strategy,
            await resolve_restore(self.checkpoint_storage, name, restore_from, options),
            savepoint_codec=self._savepoint_codec(),
        )

    def _savepoint_codec(self) -> ValueCodec:
        # The user's types first; then those the job's sources and sinks declare.
        types = {codec.cls: codec for codec in self._savepoint_types}
        for node in self._builder.graph.nodes:
            if node.kind in (OperatorKind.SOURCE, OperatorKind.SINK):
                for codec in node.function.state_types():
                    types.setdefault(codec.cls, codec)
        return ValueCodec(types.values(), allow_pickle=self._savepoint_pickle)

    def __repr__(self) -> str:
        return (
            f"<StreamEnvironment parallelism={self.parallelism} "
            f"operators={len(self._builder.graph.nodes)}>"
        )
