"""Shipping: how a job's objects travel to worker processes, and ``DriverSide`` ones back.

The driving process pickles with cloudpickle: what a worker can import travels by reference,
the rest (lambdas, ``__main__``'s and run-time modules' functions and classes) by value. A
``DriverSide`` object is shipped as a reference: its id in the run's ``DriverObjects`` and
its ``worker_state()``; a worker unpickles one copy per id, linked to the original through
the worker's ``DriverLink``.
"""

from __future__ import annotations

import io
import pickle
import sys
import types
from collections.abc import Callable
from typing import Any

import cloudpickle  # type: ignore[import-untyped]

from lockgate.engine.errors import JobError
from lockgate.engine.io.driver_side import DriverLink, DriverSide

__all__ = ["DriverObjects", "WorkerCopies", "dumps", "loads", "ship", "shippable"]

_REFERENCE = "lockgate.driver-side"


class DriverObjects:
    """The ``DriverSide`` objects of one run, by the id their workers' copies call them by."""

    def __init__(self) -> None:
        self._objects: dict[int, DriverSide] = {}

    def register(self, value: DriverSide) -> int:
        """Keep ``value`` (alive, for the run) and return its id."""
        key = id(value)
        self._objects[key] = value
        return key

    def values(self) -> list[DriverSide]:
        """Every object registered so far."""
        return list(self._objects.values())

    def get(self, key: int) -> DriverSide:
        """The object of id ``key``.

        Raises:
            KeyError: no object of this run has that id.
        """
        return self._objects[key]


class _ShippingPickler(cloudpickle.Pickler):  # type: ignore[misc]
    def __init__(self, file: io.BytesIO, objects: DriverObjects, top: Any) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self._objects = objects
        self._top = top

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, types.FunctionType | type):
            _by_value_if_dynamic(sys.modules.get(getattr(obj, "__module__", "") or ""))
        return super().reducer_override(obj)

    def persistent_id(self, value: Any) -> Any:
        if not isinstance(value, DriverSide) or value is self._top:
            return None
        key = self._objects.register(value)
        return (_REFERENCE, key, type(value), value.worker_state())


def _by_value_if_dynamic(module: types.ModuleType | None) -> None:
    # A module made at run time (a notebook cell's, a docs page's) has no spec: no worker can
    # import it, so what it defines travels by value, as __main__'s does.
    if module is not None and module.__name__ != "__main__" and module.__spec__ is None:
        cloudpickle.register_pickle_by_value(module)


def ship(value: Any, objects: DriverObjects) -> bytes:
    """Pickle ``value`` for a worker process, its ``DriverSide`` objects as references.

    Raises:
        pickle.PicklingError, TypeError, AttributeError: something in it cannot be pickled.
    """
    buffer = io.BytesIO()
    _ShippingPickler(buffer, objects, top=None).dump(value)
    return buffer.getvalue()


class WorkerCopies:
    """A worker's copies of ``DriverSide`` objects: one per id, linked to its original."""

    def __init__(self, link_for: Callable[[int], DriverLink]) -> None:
        self._link_for = link_for
        self._copies: dict[int, DriverSide] = {}

    def copy_of(self, key: int, cls: type[DriverSide], state: dict[str, Any]) -> DriverSide:
        """The copy of object ``key``: made on first use from ``state``, then the same."""
        existing = self._copies.get(key)
        if existing is not None:
            return existing
        value = cls.__new__(cls)
        vars(value).update(state)
        value._driver_link = self._link_for(key)
        self._copies[key] = value
        return value

    def loads(self, data: bytes) -> Any:
        """Unpickle what ``ship`` pickled, with copies of its ``DriverSide`` objects."""
        return _ShippedUnpickler(io.BytesIO(data), self).load()


class _ShippedUnpickler(pickle.Unpickler):
    def __init__(self, file: io.BytesIO, copies: WorkerCopies) -> None:
        super().__init__(file)
        self._copies = copies

    def persistent_load(self, pid: Any) -> Any:
        match pid:
            case (str() as tag, int() as key, type() as cls, dict() as state) if tag == _REFERENCE:
                return self._copies.copy_of(key, cls, state)
        raise pickle.UnpicklingError(f"unknown persistent id {pid!r}")


class _MessagePickler(pickle.Pickler):
    # Exceptions travel with their attributes and __cause__, whatever their __init__ takes.
    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, BaseException):
            return _exception, (type(obj), obj.args, vars(obj), obj.__cause__)
        return NotImplemented


def _exception(
    cls: type[BaseException], args: tuple[Any, ...], state: dict[str, Any], cause: Any
) -> BaseException:
    error = cls.__new__(cls)
    error.args = args
    vars(error).update(state)
    error.__cause__ = cause
    return error


def dumps(value: Any) -> bytes:
    """Pickle a protocol message: with pickle, or cloudpickle for what pickle refuses.

    An exception keeps its class, arguments, attributes and ``__cause__``.
    """
    buffer = io.BytesIO()
    try:
        _MessagePickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(value)
    except (pickle.PicklingError, TypeError, AttributeError):
        return bytes(cloudpickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
    return buffer.getvalue()


def loads(data: bytes) -> Any:
    """Unpickle a protocol message."""
    return pickle.loads(data)


def shippable(error: Exception) -> Exception:
    """``error`` if it survives pickling (``__cause__`` too), or a ``JobError`` saying it."""
    try:
        loads(dumps(error))
    except Exception:  # an attribute that cannot be pickled, or a class that cannot be found
        described = JobError(f"{type(error).__name__}: {error}")
        described.__notes__ = list(getattr(error, "__notes__", []))
        return described
    return error
