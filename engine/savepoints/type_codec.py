"""TypeCodec: how a value of one of the user's types becomes plain data in a savepoint, and back.

``TypedValue`` is what a lenient reader returns for a type it has no ``TypeCodec`` for.
"""

from __future__ import annotations

import dataclasses
import enum
import operator
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

__all__ = ["TypeCodec", "TypedValue", "type_name"]


def type_name(cls: type) -> str:
    """Return the name a type is written under by default: ``module.QualifiedName``."""
    return f"{cls.__module__}.{cls.__qualname__}"


@dataclass(frozen=True, slots=True)
class TypeCodec:
    """How values of one of the user's types travel in a savepoint: a name and a plain form.

    ``to_plain(value)`` returns a plain value (it may hold registered types in turn, encoded
    the same way) and ``from_plain`` rebuilds the value from it: ``from_plain(to_plain(v))``
    must equal ``v``. The name is written into the savepoint, so keep it when the class is
    moved or renamed, or old savepoints will not find their type.
    """

    cls: type
    name: str
    to_plain: Callable[[Any], Any]
    from_plain: Callable[[Any], Any]

    @classmethod
    def for_dataclass(cls, dataclass_type: type, name: str | None = None) -> TypeCodec:
        """Encode a dataclass as a map of its ``__init__`` field names to their values.

        Raises:
            TypeError: ``dataclass_type`` is not a dataclass.
        """
        if not (isinstance(dataclass_type, type) and dataclasses.is_dataclass(dataclass_type)):
            raise TypeError(f"TypeCodec.for_dataclass needs a dataclass; got {dataclass_type!r}")
        names = tuple(f.name for f in dataclasses.fields(dataclass_type) if f.init)
        return cls(
            dataclass_type,
            name or type_name(dataclass_type),
            partial(_fields_of, names),
            partial(_from_fields, dataclass_type),
        )

    @classmethod
    def for_enum(cls, enum_type: type[enum.Enum], name: str | None = None) -> TypeCodec:
        """Encode an enum member as its value; decoding looks the member up by that value.

        Raises:
            TypeError: ``enum_type`` is not an ``Enum`` class.
        """
        if not (isinstance(enum_type, type) and issubclass(enum_type, enum.Enum)):
            raise TypeError(f"TypeCodec.for_enum needs an Enum class; got {enum_type!r}")
        return cls(enum_type, name or type_name(enum_type), operator.attrgetter("value"), enum_type)

    @classmethod
    def for_type(
        cls,
        value_type: type[Any],
        name: str | None = None,
        to_plain: Callable[[Any], Any] | None = None,
        from_plain: Callable[[Any], Any] | None = None,
    ) -> TypeCodec:
        """Return the codec of ``value_type``: the given functions, else a dataclass's or enum's.

        What ``StreamEnvironment.register_type`` builds.

        Raises:
            TypeError: ``value_type`` is neither a dataclass nor an enum and a function is
                missing, or only one of ``to_plain`` and ``from_plain`` is given.
        """
        what = f"register_type({value_type.__qualname__})"
        if (to_plain is None) != (from_plain is None):
            raise TypeError(f"{what} needs both to_plain and from_plain, or neither")
        if to_plain is not None and from_plain is not None:
            return cls(value_type, name or type_name(value_type), to_plain, from_plain)
        if dataclasses.is_dataclass(value_type):
            return cls.for_dataclass(value_type, name)
        if issubclass(value_type, enum.Enum):
            return cls.for_enum(value_type, name)
        raise TypeError(
            f"{what} cannot encode it by itself: it is neither a dataclass nor an enum; pass "
            "to_plain (value -> plain data) and from_plain (plain data -> value)"
        )


@dataclass(frozen=True, slots=True)
class TypedValue:
    """A value of a type the reader has no ``TypeCodec`` for: its type name and plain form.

    Only a non-strict ``ValueCodec`` (the one that reads savepoints for inspection) returns
    it, so that a savepoint can be read without the code that wrote it. Its hash depends on
    the name only, so it can stand as a map key even when its plain form is a dict.
    """

    name: str
    value: Any

    def __hash__(self) -> int:
        return zlib.crc32(self.name.encode())


def _fields_of(names: tuple[str, ...], value: Any) -> dict[str, Any]:
    return {name: getattr(value, name) for name in names}


def _from_fields(cls: type, plain: Any) -> Any:
    return cls(**plain)
