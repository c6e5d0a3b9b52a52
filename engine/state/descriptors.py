"""State descriptors: how a function declares the state it keeps."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, TypeVar

__all__ = ["StateDescriptor", "ValueStateDescriptor"]

V = TypeVar("V")


@dataclass(frozen=True)
class StateDescriptor:
    """Names one piece of state of an operator; the name is unique within the operator."""

    name: str

    def __post_init__(self) -> None:
        if not self.name:
            raise ValueError("a state descriptor needs a non-empty name")


@dataclass(frozen=True)
class ValueStateDescriptor(StateDescriptor, Generic[V]):
    """Declares a ``ValueState``: one value per key, ``default`` until first updated."""

    default: Any = None
