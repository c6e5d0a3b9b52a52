"""type_codec: how ``StreamEnvironment.register_type`` turns its arguments into a TypeCodec."""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable
from typing import Any

from lockgate.engine.savepoints.values import TypeCodec, type_name

__all__ = ["type_codec"]


def type_codec(
    cls: type[Any],
    name: str | None = None,
    to_plain: Callable[[Any], Any] | None = None,
    from_plain: Callable[[Any], Any] | None = None,
) -> TypeCodec:
    """Return the codec of ``cls``: the given functions, else a dataclass's or enum's own.

    Raises:
        TypeError: ``cls`` is neither a dataclass nor an enum and a function is missing, or
            only one of ``to_plain`` and ``from_plain`` is given.
    """
    if (to_plain is None) != (from_plain is None):
        raise TypeError(
            f"register_type({cls.__qualname__}) needs both to_plain and from_plain, or neither"
        )
    if to_plain is not None and from_plain is not None:
        return TypeCodec(cls, name or type_name(cls), to_plain, from_plain)
    if dataclasses.is_dataclass(cls):
        return TypeCodec.for_dataclass(cls, name)
    if issubclass(cls, enum.Enum):
        return TypeCodec.for_enum(cls, name)
    raise TypeError(
        f"register_type({cls.__qualname__}) cannot encode it by itself: it is neither a "
        "dataclass nor an enum; pass to_plain (value -> plain data) and from_plain (plain "
        "data -> value)"
    )
