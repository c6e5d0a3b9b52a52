"""DriverSide: one copy of record in the driving process; a worker's copy calls it there."""

from __future__ import annotations

import copy
from typing import Any, TypeVar

import pytest

from lockgate.engine.io.driver_side import DriverSide, on_driver
from lockgate.engine.runtime.executors.shipping import DriverObjects, WorkerCopies, ship
from lockgate.engine.testing import FailOnce, InjectedFailure

D = TypeVar("D", bound=DriverSide)


class Tally(DriverSide):
    driver_only = ("seen",)

    def __init__(self) -> None:
        self.seen: list[int] = []
        self.label = "tally"

    @on_driver
    async def add(self, value: int) -> int:
        self.seen.append(value)
        return len(self.seen)

    def note(self, value: int) -> None:
        self.seen.append(-value)


class LinkToOriginal:
    """A DriverLink that runs the call on the original at once, as a driver would."""

    def __init__(self, original: DriverSide) -> None:
        self.original = original
        self.calls: list[str] = []

    async def call(self, method: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        self.calls.append(method)
        return await getattr(self.original, method)(*args, **kwargs)

    def tell(self, method: str, args: tuple[Any, ...]) -> None:
        self.calls.append(method)
        getattr(self.original, method)(*args)

    def call_blocking(self, method: str, args: tuple[Any, ...]) -> Any:
        self.calls.append(method)
        return getattr(self.original, method)(*args)


def worker_copy_of(original: D) -> tuple[D, LinkToOriginal]:
    link = LinkToOriginal(original)
    shipped = ship({"copy": original}, DriverObjects())
    copied: D = WorkerCopies(lambda _: link).loads(shipped)["copy"]
    return copied, link


async def test_the_original_runs_its_driver_methods_itself() -> None:
    tally = Tally()

    assert await tally.add(3) == 1
    assert tally.seen == [3]
    assert tally.is_driver_copy


async def test_a_worker_copy_runs_driver_methods_on_the_original() -> None:
    original = Tally()
    copied, link = worker_copy_of(original)

    assert await copied.add(5) == 1

    assert original.seen == [5]
    assert link.calls == ["add"]
    assert not copied.is_driver_copy


def test_a_worker_copy_lacks_the_driver_only_attributes() -> None:
    copied, _ = worker_copy_of(Tally())

    assert copied.label == "tally"
    assert not hasattr(copied, "seen")


def test_a_told_method_runs_on_the_original_and_not_on_the_original_twice() -> None:
    original = Tally()
    copied, _ = worker_copy_of(original)

    copied.tell_driver("note", 2)
    original.tell_driver("note", 9)  # the original has no driver to tell

    assert original.seen == [-2]


def test_copies_of_a_driver_side_object_are_the_object() -> None:
    tally = Tally()

    assert copy.copy(tally) is tally
    assert copy.deepcopy([tally])[0] is tally


def test_one_worker_gets_one_copy_of_an_object_shipped_twice() -> None:
    original = Tally()
    shipped = ship([original, original], DriverObjects())

    first, second = WorkerCopies(lambda _: LinkToOriginal(original)).loads(shipped)

    assert first is second


def test_a_worker_copy_answers_with_the_originals_plain_method() -> None:
    original = Tally()
    copied, link = worker_copy_of(original)

    copied.call_on_driver("note", 4)

    assert original.seen == [-4]
    assert link.calls == ["note"]


def test_a_fail_once_copy_shipped_before_the_original_fired_does_not_fire() -> None:
    fail = FailOnce()
    first, _ = worker_copy_of(fail)
    second, _ = worker_copy_of(fail)

    with pytest.raises(InjectedFailure):
        first.maybe_fire()
    second.maybe_fire()  # another worker's copy: the original fired already

    assert fail.fired
    assert second.fired
