"""FileSource to FileSink across a stop with a savepoint and a restore from it: the committed
lines are every input line once, the first run's a strict prefix of the input."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio

from lockgate.connectors import FileSink, FileSource
from lockgate.connectors.files import FileTransaction
from lockgate.engine import StreamEnvironment
from tests.connectors.savepoint_jobs import Gate, stop_at_the_gate

LINES_PER_FILE = 1_000


class GatedFileSink(FileSink):
    """A FileSink whose writes wait at a ``Gate``."""

    def __init__(self, directory: Path, gate: Gate) -> None:
        super().__init__(directory)
        self.gate = gate

    async def write(self, txn: FileTransaction, records: list[Any]) -> None:
        await self.gate.pass_through(records)
        await super().write(txn, records)


def input_files(folder: Path) -> list[Path]:
    paths = [folder / "a.txt", folder / "b.txt"]
    for path in paths:
        path.write_text("".join(f"{path.stem}-{n}\n" for n in range(LINES_PER_FILE)))
    return paths


def files_job(paths: list[Path], sink: FileSink) -> StreamEnvironment:
    env = StreamEnvironment(parallelism=1, batch_size=50)
    env.enable_checkpointing(None)
    env.from_source(FileSource(paths), uid="lines").sink_to(sink, uid="out")
    return env


async def test_a_file_job_stopped_with_a_savepoint_and_restored_writes_every_line_once(
    tmp_path: Path,
) -> None:
    paths, out = input_files(tmp_path), tmp_path / "out"
    expected = [line for path in paths for line in path.read_text().splitlines()]
    gate = Gate("b-500")  # part-way through the second file
    first_sink = GatedFileSink(out, gate)

    with anyio.fail_after(20):
        async with files_job(paths, first_sink).start("files") as job:
            savepoint = await stop_at_the_gate(job, gate, tmp_path.as_uri())
    first = first_sink.read_lines()
    sink = FileSink(out)
    with anyio.fail_after(20):
        await files_job(paths, sink).execute("files", restore_from=savepoint)

    assert "b-500" in first and len(first) < len(expected), "the stop did not fall part-way"
    assert first == expected[: len(first)]
    assert sorted(sink.read_lines()) == sorted(expected)
    assert [path.name for path in out.iterdir() if path.name.startswith(".")] == []
