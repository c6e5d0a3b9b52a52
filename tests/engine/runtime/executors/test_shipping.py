"""Protocol messages and frames: exceptions travel whole, frames say their length."""

from __future__ import annotations

import subprocess
import sys
import threading
import types

import pytest

from lockgate.engine import JobError, OperatorError
from lockgate.engine.runtime.executors.frames import decode_length, encode_frame
from lockgate.engine.runtime.executors.shipping import (
    DriverObjects,
    dumps,
    loads,
    ship,
    shippable,
)


def test_an_operator_error_travels_with_its_attributes_and_its_cause() -> None:
    error = OperatorError("sums", 1, 2, ValueError("bad record"))
    error.__cause__ = ValueError("bad record")

    copied = loads(dumps(error))

    assert isinstance(copied, OperatorError)
    assert (copied.uid, copied.subtask_index, copied.parallelism) == ("sums", 1, 2)
    assert str(copied) == str(error)
    assert repr(copied.__cause__) == "ValueError('bad record')"


def test_an_exception_that_cannot_be_pickled_travels_as_a_job_error_saying_what_it_was() -> None:
    error = RuntimeError("lost the lock")
    error.lock = threading.Lock()  # type: ignore[attr-defined]
    error.add_note("in worker 1")

    shipped = shippable(error)

    assert type(shipped) is JobError
    assert str(shipped) == "RuntimeError: lost the lock"
    assert shipped.__notes__ == ["in worker 1"]


def test_a_frame_is_its_length_then_its_payload() -> None:
    frame = encode_frame(b"abc")

    assert frame == b"\x00\x00\x00\x03abc"
    assert decode_length(frame[:4]) == 3


def test_a_payload_longer_than_a_frame_can_say_is_refused() -> None:
    class Huge(bytes):
        def __len__(self) -> int:
            return 1 << 32

    with pytest.raises(ValueError, match="a frame holds at most"):
        encode_frame(Huge())


def test_a_function_of_a_module_made_at_run_time_travels_by_value() -> None:
    module = types.ModuleType("made_at_run_time")
    sys.modules[module.__name__] = module
    try:
        exec("def plus_one(n):\n    return n + 1\n", module.__dict__)
        shipped = ship(module.plus_one, DriverObjects())
    finally:
        del sys.modules[module.__name__]
    code = "import pickle, sys; print(pickle.loads(sys.stdin.buffer.read())(41))"

    answer = subprocess.run(
        [sys.executable, "-c", code], input=shipped, capture_output=True, check=True
    )

    assert answer.stdout == b"42\n"
