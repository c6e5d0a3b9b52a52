"""ValueCodec: state values to canonical bytes and back, without running code when reading.

Savepoints store values in MessagePack. Plain values map to MessagePack's own types; those
MessagePack cannot tell apart travel as extension types, so every value comes back with the
type it had::

    code  value                      payload (MessagePack unless said otherwise)
    1     int beyond 64 bits         two's complement, big-endian bytes
    2     tuple                      array of the items
    3     set                        array of the items
    4     frozenset                  array of the items
    5     value of a registered type [type name, plain form]
    6     pickled value (opt-in)     [type name, pickle protocol 5 bytes]

Maps may have keys of any plain hashable type (ints, tuples, frozensets...). Reading never
unpickles unless ``allow_pickle`` is set: a pickled value otherwise raises
``SavepointFormatError`` and its bytes are never handed to pickle.
"""

from __future__ import annotations

import dataclasses
import enum
import pickle
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import msgpack  # type: ignore[import-untyped]

from lockgate.engine.errors import SavepointEncodingError, SavepointFormatError
from lockgate.engine.savepoints.type_codec import TypeCodec, TypedValue, type_name

__all__ = ["MAX_NESTING", "TypeCodec", "TypedValue", "ValueCodec", "type_name"]

MAX_NESTING = 32
"""How deeply tuples, sets and values of registered types may nest inside one another."""

_BIG_INT = 1
_TUPLE = 2
_SET = 3
_FROZENSET = 4
_TYPED = 5
_PICKLED = 6

_COLLECTIONS: dict[type, int] = {tuple: _TUPLE, set: _SET, frozenset: _FROZENSET}
_DECODE_ERRORS = (ValueError, TypeError, msgpack.UnpackException)
_PLAIN = "None, bool, int, float, str, bytes, list, tuple, dict, set and frozenset"


class ValueCodec:
    """Encodes values to MessagePack bytes and decodes them exactly, running no code to read.

    A decoded plain value equals the encoded one and has its exact type, recursively: tuples
    stay tuples, sets stay sets, ints keep every digit. A registered type matches a value of
    exactly its class first, then by ``isinstance`` in registration order. Decoding calls no
    code but the registered ``from_plain`` functions, and ``pickle.loads`` only when
    ``allow_pickle`` is set. The codec holds no mutable state, so threads may share it.

    Options:
        allow_pickle: pickle values that are neither plain nor registered, and unpickle them
            when reading; only for savepoints you trust.
        strict: decode a type name that is not registered to ``TypedValue`` when ``False``,
            instead of raising ``SavepointFormatError``.
    """

    def __init__(
        self,
        types: Iterable[TypeCodec] = (),
        *,
        allow_pickle: bool = False,
        strict: bool = True,
    ) -> None:
        self.types = tuple(types)
        self.allow_pickle = allow_pickle
        self.strict = strict
        self._by_class = _unique(self.types, "class", lambda codec: codec.cls)
        self._by_name = _unique(self.types, "name", lambda codec: codec.name)

    def encode(self, value: Any) -> bytes:
        """Return ``value`` as MessagePack bytes.

        Raises:
            SavepointEncodingError: ``value`` holds a value that is neither plain nor of a
                registered type while pickle is not allowed, a container that holds itself,
                or extension values nested deeper than ``MAX_NESTING``.
        """
        return _Encoding(self).encode(value)

    def decode(self, data: bytes) -> Any:
        """Return the value ``data`` (written by ``encode``) holds.

        Raises:
            SavepointFormatError: the bytes are malformed, carry a pickled value while pickle
                is not allowed, or (when strict) a type that is not registered.
        """
        try:
            return _Decoding(self).unpack(data)
        except _DECODE_ERRORS as error:
            raise _malformed(error) from error

    def decode_sequence(self, data: bytes | memoryview) -> Iterator[Any]:
        """Yield, one by one, the values of bytes that hold encoded values back to back.

        Each value is decoded by its own short call, so a large sequence decoded in a worker
        thread lets other threads run in between.

        Raises:
            SavepointFormatError: as ``decode``, and when the bytes end inside a value.
        """
        unpacker = msgpack.Unpacker(
            ext_hook=_Decoding(self).ext_hook,
            strict_map_key=False,
            raw=False,
            max_buffer_size=max(len(data), 1),
        )
        unpacker.feed(data)
        decoded_up_to = 0  # tell() after the end counts the bytes of a truncated value too
        while (value := _next_value(unpacker)) is not _END:
            decoded_up_to = unpacker.tell()
            yield value
        if decoded_up_to != len(data):
            raise SavepointFormatError("the bytes end inside a value: the data is truncated")

    def codec_for(self, cls: type) -> TypeCodec | None:
        """Return the codec values of ``cls`` are encoded with, or ``None``."""
        exact = self._by_class.get(cls)
        if exact is not None:
            return exact
        return next((codec for codec in self.types if issubclass(cls, codec.cls)), None)

    def codec_named(self, name: str) -> TypeCodec | None:
        """Return the codec registered under ``name``, or ``None``."""
        return self._by_name.get(name)

    def __repr__(self) -> str:
        names = [codec.name for codec in self.types]
        return f"ValueCodec({names!r}, allow_pickle={self.allow_pickle}, strict={self.strict})"


class _Encoding:
    """One ``encode`` call; it counts how deeply extension values nest, so it is never shared."""

    __slots__ = ("codec", "depth")

    def __init__(self, codec: ValueCodec) -> None:
        self.codec = codec
        self.depth = 0

    def encode(self, value: Any) -> bytes:
        try:
            return self._pack(value)
        except SavepointEncodingError:
            raise
        except (ValueError, OverflowError, RecursionError) as error:
            raise SavepointEncodingError(f"cannot encode the value ({error})") from error

    def _pack(self, value: Any) -> bytes:
        data: bytes = msgpack.packb(
            value, default=self._default, strict_types=True, use_bin_type=True
        )
        return data

    def _default(self, value: Any) -> msgpack.ExtType:
        kind = type(value)
        if kind is int:  # msgpack hands over the ints beyond 64 bits only
            return msgpack.ExtType(_BIG_INT, _int_bytes(value))
        code, content = self._content(kind, value)
        if self.depth == MAX_NESTING:
            raise SavepointEncodingError(
                f"the value nests tuples, sets or registered types more than {MAX_NESTING} "
                "deep; savepoints refuse deeper nesting, so that reading one can never "
                "overflow the stack; flatten the value, or register a TypeCodec that does"
            )
        self.depth += 1
        try:
            return msgpack.ExtType(code, self._pack(content))
        finally:
            self.depth -= 1

    def _content(self, kind: type, value: Any) -> tuple[int, Any]:
        collection = _COLLECTIONS.get(kind)
        if collection is not None:
            return collection, list(value)
        codec = self.codec.codec_for(kind)
        if codec is not None:
            return _TYPED, [codec.name, _plain(codec, value)]
        if self.codec.allow_pickle:
            return _PICKLED, [type_name(kind), _pickled(value)]
        raise SavepointEncodingError(_unencodable(kind))


class _Decoding:
    """One ``decode`` call; it counts how deeply extension values nest, so it is never shared.

    Each level is unpacked by a call of its own with a large C stack frame: the limit keeps
    crafted data from overflowing the stack of the thread that reads it.
    """

    __slots__ = ("codec", "depth")

    def __init__(self, codec: ValueCodec) -> None:
        self.codec = codec
        self.depth = 0

    def unpack(self, data: bytes) -> Any:
        return msgpack.unpackb(data, ext_hook=self.ext_hook, strict_map_key=False, raw=False)

    def ext_hook(self, code: int, payload: bytes) -> Any:
        if code == _BIG_INT:
            return int.from_bytes(payload, "big", signed=True)
        if self.depth == MAX_NESTING:
            raise SavepointFormatError(
                f"the data nests tuples, sets or registered types more than {MAX_NESTING} "
                "deep, which no lockgate writes; it is damaged, and was not read further"
            )
        self.depth += 1
        try:
            return self._extension(code, payload)
        finally:
            self.depth -= 1

    def _extension(self, code: int, payload: bytes) -> Any:
        match code:
            case 2:  # _TUPLE
                return tuple(self._items(payload))
            case 3:  # _SET
                return set(self._items(payload))
            case 4:  # _FROZENSET
                return frozenset(self._items(payload))
            case 5:  # _TYPED
                return self._typed(*self._named(payload))
            case 6:  # _PICKLED
                return self._unpickled(*self._named(payload))
        raise SavepointFormatError(
            f"the data holds a value of unknown extension type {code}; it was written by a "
            "newer lockgate, or it is damaged"
        )

    def _items(self, payload: bytes) -> list[Any]:
        items = self.unpack(payload)
        if not isinstance(items, list):
            raise SavepointFormatError(f"a collection holds {type(items).__name__}, not a list")
        return items

    def _named(self, payload: bytes) -> tuple[str, Any]:
        match self.unpack(payload):
            case [str() as name, plain]:
                return name, plain
        raise SavepointFormatError("a typed value lacks its type name")

    def _typed(self, name: str, plain: Any) -> Any:
        codec = self.codec.codec_named(name)
        if codec is not None:
            return _rebuilt(codec, plain)
        if not self.codec.strict:
            return TypedValue(name, plain)
        raise SavepointFormatError(
            f"the data holds values of type '{name}', which is not registered; register its "
            f"class with env.register_type(cls, name='{name}'), or pass a TypeCodec named "
            f"'{name}' in types=[...] when reading"
        )

    def _unpickled(self, name: str, payload: Any) -> Any:
        if not self.codec.allow_pickle:
            raise SavepointFormatError(
                f"the data carries a pickled value of type '{name}'; it was not read, because "
                "unpickling runs code; if you trust this savepoint, opt in with "
                "env.allow_pickle_in_savepoints() (allow_pickle=True; --allow-pickle to "
                "inspect it), or register the type with env.register_type and take the "
                "savepoint again"
            )
        if not isinstance(payload, bytes):
            raise SavepointFormatError(f"the pickled value of type '{name}' holds no bytes")
        return pickle.loads(payload)


_END = object()


def _next_value(unpacker: Any) -> Any:
    try:
        return unpacker.unpack()
    except msgpack.OutOfData:
        return _END
    except _DECODE_ERRORS as error:
        raise _malformed(error) from error


def _malformed(error: Exception) -> SavepointFormatError:
    return SavepointFormatError(f"the data is not encoded savepoint values ({error!r})")


def _unique(
    codecs: tuple[TypeCodec, ...], what: str, key: Callable[[TypeCodec], Any]
) -> dict[Any, TypeCodec]:
    index: dict[Any, TypeCodec] = {}
    for codec in codecs:
        if key(codec) in index:
            raise ValueError(
                f"two TypeCodecs share the {what} {key(codec)!r}; register each type once, "
                "under a name of its own"
            )
        index[key(codec)] = codec
    return index


def _int_bytes(value: int) -> bytes:
    return value.to_bytes(value.bit_length() // 8 + 1, "big", signed=True)


def _plain(codec: TypeCodec, value: Any) -> Any:
    try:
        return codec.to_plain(value)
    except Exception as error:  # the user's function: say whose it is
        raise SavepointEncodingError(
            f"the TypeCodec '{codec.name}' failed to encode {value!r:.200} ({error!r})"
        ) from error


def _rebuilt(codec: TypeCodec, plain: Any) -> Any:
    try:
        return codec.from_plain(plain)
    except Exception as error:  # the user's function, meeting data an older version wrote
        raise SavepointFormatError(
            f"a value of type '{codec.name}' cannot be rebuilt from {plain!r:.200} ({error!r}); "
            "make its TypeCodec's from_plain accept the form the savepoint holds"
        ) from error


def _pickled(value: Any) -> bytes:
    try:
        return pickle.dumps(value, protocol=5)
    except Exception as error:  # pickle raises many kinds for an unpicklable value
        raise SavepointEncodingError(
            f"cannot pickle a value of type '{type_name(type(value))}' ({error!r}); register "
            "its class with env.register_type(...)"
        ) from error


def _unencodable(kind: type) -> str:
    return (
        f"cannot encode a value of type '{type_name(kind)}': savepoints hold plain values "
        f"({_PLAIN}) and registered types; register it with {_registration(kind)}, or opt "
        "into pickle with env.allow_pickle_in_savepoints() (allow_pickle=True), after which "
        "reading the savepoint runs code"
    )


def _registration(kind: type) -> str:
    if dataclasses.is_dataclass(kind) or issubclass(kind, enum.Enum):
        return f"env.register_type({kind.__qualname__})"
    return f"env.register_type({kind.__qualname__}, to_plain=..., from_plain=...)"
