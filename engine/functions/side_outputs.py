"""Side outputs: ``OutputTag`` names one, ``SideOutputCollector`` holds what an operator sent to it.

An operator has one main output and any number of side outputs (Flink's ``OutputTag``).
``DataStream.side_output(tag)`` reads the records the producing operator sent to ``tag``:
a ``process`` function with ``ctx.output(tag, value)``, an ``async_map`` with its failed
records when given ``on_failure=tag``. A side output nobody reads is dropped silently.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

__all__ = ["OutputTag", "SideOutputCollector", "emit_to_side_output"]

T = TypeVar("T")


@dataclass(frozen=True)
class OutputTag(Generic[T]):
    """The name of a side output of an operator; ``OutputTag[T]`` types its records.

    Two tags are the same side output exactly when their names are equal, so a tag can be
    created again wherever it is needed. The name is a non-empty ``str``.

    Raises:
        TypeError: the name is not a ``str``.
        ValueError: the name is empty.
    """

    # Slots by hand: dataclass(slots=True) rebuilds the class, and its frozen __setattr__
    # then breaks ``OutputTag[int](...)``, which sets __orig_class__ (CPython 3.11).
    __slots__ = ("name",)

    name: str

    def __post_init__(self) -> None:
        if not isinstance(self.name, str):
            raise TypeError(f"an OutputTag's name must be a str; got {self.name!r}")
        if not self.name:
            raise ValueError("an OutputTag's name must not be empty; give it a name, e.g. 'late'")

    def __reduce__(self) -> tuple[type[OutputTag[Any]], tuple[str]]:
        # copy, deepcopy and pickle build a tag anew: frozen slots take no setattr
        return (OutputTag, (self.name,))

    def __repr__(self) -> str:
        return f"OutputTag({self.name!r})"


class SideOutputCollector:
    """Side records an operator emitted since the subtask last drained them, per tag, in order.

    It keeps only the ``tags`` some operator downstream reads: a record sent to any other
    tag is dropped, as Flink drops side outputs nobody reads. The subtask drains it after
    every batch, before anything else can pass the operator's output (such as a barrier).
    ``sent`` counts, per tag name, the records drained so far: those sent to side outputs.
    """

    __slots__ = ("_records", "sent")

    def __init__(self, tags: Iterable[OutputTag[Any]]) -> None:
        self._records: dict[OutputTag[Any], list[Any]] = {tag: [] for tag in tags}
        self.sent: dict[str, int] = {tag.name: 0 for tag in self._records}

    @property
    def tags(self) -> frozenset[OutputTag[Any]]:
        """The side outputs that have readers."""
        return frozenset(self._records)

    def collect(self, tag: OutputTag[Any], value: Any) -> None:
        """Hold ``value`` for side output ``tag`` (drop it if nobody reads ``tag``)."""
        records = self._records.get(tag)
        if records is not None:
            records.append(value)

    def drain(self) -> dict[OutputTag[Any], list[Any]]:
        """Remove and return the records held, per tag with any, in the order collected."""
        held = {tag: records for tag, records in self._records.items() if records}
        for tag, records in held.items():
            self._records[tag] = []
            self.sent[tag.name] += len(records)
        return held

    def __len__(self) -> int:
        """Records held, over every tag."""
        return sum(len(records) for records in self._records.values())

    def __repr__(self) -> str:
        held = ", ".join(f"{tag.name}={len(records)}" for tag, records in self._records.items())
        return f"<SideOutputCollector {held}>"


def emit_to_side_output(
    collector: SideOutputCollector | None, tag: OutputTag[Any], value: Any
) -> None:
    """What ``ctx.output(tag, value)`` does: check the tag, hand the value to ``collector``.

    Raises:
        TypeError: ``tag`` is not an ``OutputTag``.
    """
    if not isinstance(tag, OutputTag):
        raise TypeError(f"ctx.output() needs an OutputTag; got {tag!r}; use OutputTag('name')")
    if collector is not None:
        collector.collect(tag, value)
