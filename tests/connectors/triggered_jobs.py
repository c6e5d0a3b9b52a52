"""Jobs whose checkpoints the test triggers itself, for sources fed while the job runs."""

from __future__ import annotations

from lockgate.connectors import CollectSink
from lockgate.engine import JobClient, RestartStrategy, StreamEnvironment


def checkpointed_env(parallelism: int) -> StreamEnvironment:
    """No interval: checkpoints are taken when the test triggers them, so it knows where."""
    env = StreamEnvironment(parallelism=parallelism, batch_size=10, buffer_timeout=0.01)
    env.enable_checkpointing(None)
    env.set_restart_strategy(RestartStrategy.fixed_delay(attempts=3, delay=0.0))
    return env


async def commit_everything(job: JobClient, sink: CollectSink[int], count: int) -> None:
    """Trigger checkpoints until ``count`` records are committed (at most ten)."""
    # A checkpoint after the last record covers it; its commit may land with the next one.
    for _ in range(10):
        if len(sink.results) >= count:
            return
        await job.trigger_checkpoint()
