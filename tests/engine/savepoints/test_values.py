"""ValueCodec: plain values round-trip exactly, user types once registered, pickle on request."""

from __future__ import annotations

import enum
import pickle
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgpack
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lockgate.engine.errors import SavepointEncodingError, SavepointFormatError
from lockgate.engine.savepoints.values import MAX_NESTING, TypeCodec, TypedValue, ValueCodec


@dataclass(frozen=True)
class Point:
    x: int
    y: tuple[int, ...]


@dataclass(frozen=True)
class Labelled(Point):
    label: str = ""


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Level(enum.IntEnum):
    LOW = 1


class TouchesMarker:
    """Unpickling it creates the marker file: proof that a payload ran."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, ...]:
        return (Path.touch, (self.marker,))


def exact(value: Any) -> Any:
    """A hashable description of ``value`` that tells 1, 1.0 and True (and list, tuple) apart."""
    kind = type(value).__name__
    if isinstance(value, list | tuple):
        return (kind, tuple(exact(item) for item in value))
    if isinstance(value, set | frozenset):
        return (kind, frozenset(exact(item) for item in value))
    if isinstance(value, dict):
        return (kind, frozenset((exact(k), exact(v)) for k, v in value.items()))
    return (kind, repr(value))


def round_trip(value: Any, codec: ValueCodec | None = None) -> Any:
    codec = codec or ValueCodec()
    return codec.decode(codec.encode(value))


hashables = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text(max_size=5)
    | st.binary(max_size=5),
    lambda inner: st.lists(inner, max_size=3).map(tuple) | st.frozensets(inner, max_size=3),
    max_leaves=8,
)
plain_values = st.recursive(
    hashables,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.lists(inner, max_size=4).map(tuple)
        | st.dictionaries(hashables, inner, max_size=4)
        | st.sets(hashables, max_size=4)
    ),
    max_leaves=20,
)


@pytest.mark.parametrize(
    "value",
    [None, True, False, 0, -1, 2**63 - 1, 1.5, -0.0, "", "text", b"", b"\x00bytes", [], (), {}],
    ids=repr,
)
def test_a_plain_value_round_trips_with_its_exact_type(value: Any) -> None:
    assert exact(round_trip(value)) == exact(value)


@pytest.mark.parametrize("value", [2**64, 2**64 - 1, -(2**63) - 1, 10**100, -(10**100)])
def test_ints_beyond_64_bits_keep_every_digit(value: int) -> None:
    assert round_trip(value) == value


def test_tuples_stay_tuples_and_lists_stay_lists_when_nested() -> None:
    value = [(1, [2, (3,)]), ((),)]

    assert exact(round_trip(value)) == exact(value)


def test_dict_keys_may_be_ints_nested_tuples_frozensets_and_none() -> None:
    value = {1: "int", (1, ("a", b"b")): "tuple", frozenset({(1, 2)}): "frozenset", None: 0}

    assert exact(round_trip(value)) == exact(value)


def test_sets_and_frozensets_keep_their_types() -> None:
    value = [{1, (2, 3)}, frozenset({"a", frozenset({1})})]

    assert exact(round_trip(value)) == exact(value)


@given(plain_values)
def test_any_plain_value_round_trips_exactly(value: Any) -> None:
    assert exact(round_trip(value)) == exact(value)


def test_a_registered_dataclass_round_trips_with_its_fields_encoded_by_the_codec() -> None:
    codec = ValueCodec([TypeCodec.for_dataclass(Point)])
    value = {Point(1, (2, 3)): [Point(4, ())]}

    assert round_trip(value, codec) == value


def test_a_registered_enum_round_trips_by_its_value() -> None:
    codec = ValueCodec([TypeCodec.for_enum(Colour, "colour")])

    assert round_trip({Colour.RED: [Colour.BLUE]}, codec) == {Colour.RED: [Colour.BLUE]}


def test_a_type_is_written_under_its_module_and_qualified_name_by_default() -> None:
    assert TypeCodec.for_enum(Colour).name == f"{__name__}.Colour"


def test_a_subclass_of_a_registered_type_is_encoded_as_that_type() -> None:
    codec = ValueCodec([TypeCodec.for_dataclass(Point)])

    assert round_trip(Labelled(1, (), "a"), codec) == Point(1, ())


def test_a_value_of_an_unregistered_type_fails_to_encode_saying_how_to_register_it() -> None:
    expected = (
        rf"'{__name__}\.Point'.*env\.register_type\(Point\).*"
        r"env\.allow_pickle_in_savepoints\(\)"
    )
    with pytest.raises(SavepointEncodingError, match=expected):
        ValueCodec().encode([Point(1, ())])


def test_a_plain_class_is_told_to_give_its_to_plain_and_from_plain() -> None:
    with pytest.raises(SavepointEncodingError, match=r"register_type\(TouchesMarker, to_plain"):
        ValueCodec().encode(TouchesMarker(Path()))


def test_an_int_enum_is_not_silently_written_as_an_int() -> None:
    with pytest.raises(SavepointEncodingError, match=r"register_type\(Level\)"):
        ValueCodec().encode(Level.LOW)


def test_an_unregistered_type_name_fails_a_strict_decode_naming_it() -> None:
    data = ValueCodec([TypeCodec.for_enum(Colour, "colour")]).encode(Colour.RED)

    with pytest.raises(SavepointFormatError, match=r"type 'colour'.*register"):
        ValueCodec().decode(data)


def test_a_lenient_codec_decodes_an_unregistered_type_to_its_plain_form() -> None:
    data = ValueCodec([TypeCodec.for_dataclass(Point, "point")]).encode(Point(1, (2,)))

    decoded = ValueCodec(strict=False).decode(data)

    assert decoded == TypedValue("point", {"x": 1, "y": (2,)})


def test_a_typed_value_holding_a_dict_can_be_a_map_key() -> None:
    data = ValueCodec([TypeCodec.for_dataclass(Point, "point")]).encode({Point(1, ()): "a"})

    decoded = ValueCodec(strict=False).decode(data)

    assert decoded == {TypedValue("point", {"x": 1, "y": ()}): "a"}


def test_a_from_plain_that_fails_is_reported_naming_the_type() -> None:
    data = ValueCodec([TypeCodec(Point, "point", lambda p: p.x, lambda x: x)]).encode(Point(1, ()))

    with pytest.raises(SavepointFormatError, match="'point' cannot be rebuilt"):
        ValueCodec([TypeCodec.for_dataclass(Point, "point")]).decode(data)


def test_two_codecs_under_one_name_are_refused() -> None:
    with pytest.raises(ValueError, match="name 'same'"):
        ValueCodec([TypeCodec.for_enum(Colour, "same"), TypeCodec.for_enum(Level, "same")])


@pytest.mark.parametrize(
    "data",
    [b"", b"\xc1", msgpack.packb([1, 2])[:-1], msgpack.packb(msgpack.ExtType(99, b""))],
    ids=["empty", "reserved byte", "truncated", "unknown extension"],
)
def test_malformed_bytes_raise_a_savepoint_format_error(data: bytes) -> None:
    with pytest.raises(SavepointFormatError):
        ValueCodec().decode(data)


def nested(depth: int) -> Any:
    value: Any = "core"
    for level in range(depth):
        value = (value,) if level % 2 else frozenset({value})
    return value


def test_values_nested_as_deep_as_the_limit_round_trip() -> None:
    assert round_trip(nested(MAX_NESTING)) == nested(MAX_NESTING)


def test_values_nested_deeper_than_the_limit_are_refused_when_encoding() -> None:
    with pytest.raises(SavepointEncodingError, match=f"more than {MAX_NESTING} deep"):
        ValueCodec().encode(nested(MAX_NESTING + 1))


def test_crafted_deep_nesting_is_refused_without_overflowing_the_stack() -> None:
    data = msgpack.packb("core")
    for _ in range(2_000):  # unchecked, ~200 levels crash the interpreter
        data = msgpack.packb(msgpack.ExtType(2, b"\x91" + data))

    with pytest.raises(SavepointFormatError, match="damaged, and was not read further"):
        ValueCodec().decode(data)


def test_a_pickled_value_is_refused_and_never_unpickled(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    data = ValueCodec(allow_pickle=True).encode(["ok", TouchesMarker(marker)])

    with pytest.raises(SavepointFormatError, match=r"pickled value.*unpickling runs code"):
        ValueCodec().decode(data)

    assert not marker.exists()


def test_a_pickled_value_is_unpickled_with_allow_pickle(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    data = ValueCodec(allow_pickle=True).encode(TouchesMarker(marker))

    ValueCodec(allow_pickle=True).decode(data)

    assert marker.exists()


def test_allow_pickle_writes_unregistered_values_with_pickle() -> None:
    data = ValueCodec(allow_pickle=True).encode(Point(1, ()))

    assert pickle.dumps(Point(1, ()), protocol=5) in data


def test_decode_sequence_yields_values_written_back_to_back() -> None:
    codec = ValueCodec()
    data = codec.encode((1,)) + codec.encode({"a": {2}})

    assert list(codec.decode_sequence(data)) == [(1,), {"a": {2}}]


def test_decode_sequence_refuses_bytes_that_end_inside_a_value() -> None:
    codec = ValueCodec()
    data = codec.encode(1) + codec.encode([1, 2])[:-1]

    with pytest.raises(SavepointFormatError, match="truncated"):
        list(codec.decode_sequence(data))


def test_one_codec_encodes_and_decodes_from_many_threads_at_once() -> None:
    codec = ValueCodec([TypeCodec.for_dataclass(Point)])
    values = [{i: (Point(i, (i,)), {i, -i})} for i in range(200)]

    with ThreadPoolExecutor(max_workers=8) as pool:
        decoded = list(pool.map(lambda v: codec.decode(codec.encode(v)), values))

    assert decoded == values


class _Opaque:
    def __init__(self, size: int) -> None:
        self.size = size


def test_register_type_needs_both_functions_for_a_class_it_cannot_take_apart() -> None:
    with pytest.raises(TypeError, match="neither a dataclass nor an enum"):
        TypeCodec.for_type(_Opaque)
    with pytest.raises(TypeError, match="needs both to_plain and from_plain"):
        TypeCodec.for_type(_Opaque, to_plain=lambda value: value.size)

    codec = TypeCodec.for_type(
        _Opaque, "opaque", to_plain=lambda value: value.size, from_plain=_Opaque
    )
    decoded = ValueCodec([codec]).decode(ValueCodec([codec]).encode(_Opaque(7)))
    assert (type(decoded), decoded.size, codec.name) == (_Opaque, 7, "opaque")
