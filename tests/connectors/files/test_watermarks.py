"""FileSource with a watermark strategy: each file a split with its own watermark."""

from __future__ import annotations

import math
from pathlib import Path

from lockgate.connectors import FileSource
from lockgate.engine import SourceContext, SplitRecords, StreamEnvironment, WatermarkStrategy
from lockgate.engine.time.clock import SystemClock
from tests.engine.jobs.event_time import WatermarkLog, below

BY_TIME = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(float)


def lines(path: Path, times: range) -> str:
    path.write_text("".join(f"{time}\n" for time in times))
    return str(path)


async def test_a_file_not_started_yet_does_not_hold_back_the_watermark_of_the_file_read(
    tmp_path: Path,
) -> None:
    first, second = lines(tmp_path / "a", range(100)), lines(tmp_path / "b", range(200, 210))
    env = StreamEnvironment(batch_size=10, auto_watermark_interval=0.0)
    log = WatermarkLog()
    env.from_source(FileSource([first, second]), uid="files", watermark_strategy=BY_TIME).sink_to(
        log, uid="log"
    )

    await env.execute("files")

    before_b = log.logs[0][: log.logs[0].index("200")]
    assert max(w.timestamp for w in before_b if not isinstance(w, str)) >= below(80)
    assert log.watermarks()[-1] == math.inf


async def test_a_file_read_to_its_end_is_finished_and_the_next_ones_idle(tmp_path: Path) -> None:
    paths = [lines(tmp_path / name, range(3)) for name in "abc"]
    reader = FileSource(paths).create_reader(
        FileSource(paths).create_splits(1), SourceContext("files", 0, 1, SystemClock())
    )

    assert await reader.read_splits(10) == [SplitRecords(paths[0], ["0", "1", "2"])]
    assert list(reader.idle_splits()) == paths[1:]
    assert await reader.read_splits(10) == [
        SplitRecords(paths[0], [], finished=True),
        SplitRecords(paths[1], ["0", "1", "2"]),
    ]
    assert list(reader.idle_splits()) == paths[2:]
    await reader.close()
