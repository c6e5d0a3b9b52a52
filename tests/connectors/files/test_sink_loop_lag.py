"""A job writing files never stalls the event loop: the file work of FileSink (writes, the
part files' flush, commit and rename) runs in worker threads."""

from __future__ import annotations

from pathlib import Path

from lockgate.connectors import CollectionSource, FileSink
from lockgate.engine import StreamEnvironment
from lockgate.engine.testing import LoopLagMonitor
from tests.engine.jobs.million_keys import STALL

LINES = 200_000


async def test_a_job_writing_200_000_lines_to_files_never_stalls_the_loop(tmp_path: Path) -> None:
    env = StreamEnvironment(parallelism=2)
    env.enable_checkpointing(0.05)
    env.from_source(CollectionSource(range(LINES)), uid="numbers").map(
        lambda number: f"line {number:>12} " + "x" * 64, uid="lines"
    ).sink_to(FileSink(tmp_path / "out"), uid="files")

    async with LoopLagMonitor() as lag:
        await lag.wait_measured(1)
        await env.execute("files")

    written = [p for p in (tmp_path / "out").rglob("*") if p.is_file() and "part" in p.name]
    assert sum(len(p.read_text().splitlines()) for p in written) == LINES
    assert lag.statistics().samples >= 10
    assert lag.statistics().busy_max < STALL, lag.statistics()
