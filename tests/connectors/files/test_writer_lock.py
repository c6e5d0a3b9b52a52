"""A WriterLock says a FileSink writer is running, until it is released or its process dies."""

import subprocess
import sys
from pathlib import Path

from lockgate.connectors.files.writer_lock import WriterLock, is_held

HOLD_UNTIL_KILLED = """
import sys
from pathlib import Path
from lockgate.connectors.files.writer_lock import WriterLock
lock = WriterLock.acquire(Path(sys.argv[1]))
print("held", flush=True)
sys.stdin.read()
"""


def lock_path(directory: Path) -> Path:
    return directory / ".part-out-0-0123456789ab.lock"


def test_a_lock_is_held_until_released_and_its_file_then_removed(tmp_path: Path) -> None:
    lock = WriterLock.acquire(lock_path(tmp_path))
    held = is_held(lock.path)

    lock.release()

    assert (held, is_held(lock.path), lock.path.exists()) == (True, False, False)


def test_a_missing_lock_file_is_no_running_writer(tmp_path: Path) -> None:
    assert not is_held(lock_path(tmp_path))


def test_a_lock_left_behind_is_free_once_its_process_is_killed(tmp_path: Path) -> None:
    path = lock_path(tmp_path)
    command = [sys.executable, "-c", HOLD_UNTIL_KILLED, str(path)]
    with subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE) as child:
        assert child.stdout is not None
        assert child.stdout.readline() == b"held\n"
        held = is_held(path)
        child.kill()
        child.wait()

    assert (held, path.exists(), is_held(path)) == (True, True, False)
