"""State TTL: how long keyed state lives after it was written (or read), as Flink's TTL.

``StateTtlConfig`` is what a user sets on a descriptor; ``TtlValue`` is how a state that has
a TTL stores a value with its deadline; ``TtlPolicy`` applies a config with the store's clock.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar, final

from lockgate.engine.time.clock import Clock

__all__ = ["EXPIRED", "StateTtlConfig", "TtlPolicy", "TtlValue"]

T = TypeVar("T")

UpdateType = Literal["on_create_and_write", "on_read_and_write"]
Visibility = Literal["never_return_expired"]

EXPIRED: Any = object()
"""What a TTL state's ``export`` returns for a value that has expired at the snapshot's time."""


@dataclass(frozen=True, slots=True)
class StateTtlConfig:
    """How long a keyed state's value lives: ``ttl`` seconds after its last refresh.

    A value is refreshed when it is created or written, and also when it is read if
    ``update_type`` is ``"on_read_and_write"``. Once ``ttl`` seconds have passed since the last
    refresh, the value is expired: it is never returned (reads behave as if it were absent),
    it is removed when next accessed, and snapshots omit it.
    """

    ttl: float
    update_type: UpdateType = "on_create_and_write"
    visibility: Visibility = "never_return_expired"

    def __post_init__(self) -> None:
        if not self.ttl > 0:
            raise ValueError(f"a state TTL must be a positive number of seconds; got {self.ttl}")
        if self.update_type not in ("on_create_and_write", "on_read_and_write"):
            raise ValueError(
                f"unknown TTL update_type {self.update_type!r}; use 'on_create_and_write' "
                "or 'on_read_and_write'"
            )
        if self.visibility != "never_return_expired":
            raise ValueError(
                f"unknown TTL visibility {self.visibility!r}; only 'never_return_expired' exists"
            )


@final
class TtlValue(Generic[T]):
    """A stored value and the clock time at which it expires.

    Invariant: never changed once stored, because a snapshot may hold it; a refresh stores a
    new ``TtlValue``.
    """

    __slots__ = ("expires_at", "value")

    def __init__(self, value: T, expires_at: float) -> None:
        self.value = value
        self.expires_at = expires_at

    def __repr__(self) -> str:
        return f"TtlValue({self.value!r}, expires_at={self.expires_at})"


class TtlPolicy:
    """A ``StateTtlConfig`` applied with a clock to the ``TtlValue`` entries of one table.

    A value whose ``expires_at`` is at or before ``now()`` has expired, as in Flink.
    """

    __slots__ = ("_clock", "_ttl", "refreshes_on_read")

    def __init__(self, config: StateTtlConfig, clock: Clock) -> None:
        self._clock = clock
        self._ttl = config.ttl
        self.refreshes_on_read = config.update_type == "on_read_and_write"

    def now(self) -> float:
        """Return the clock's current time."""
        return self._clock.now()

    def deadline(self) -> float:
        """Return when a value refreshed now expires."""
        return self._clock.now() + self._ttl

    def stamp(self, value: T) -> TtlValue[T]:
        """Return ``value`` stamped with a fresh deadline."""
        return TtlValue(value, self._clock.now() + self._ttl)

    def live(self, table: MutableMapping[Any, TtlValue[T]], key: Any) -> TtlValue[T] | None:
        """Return the entry under ``key`` unless absent or expired; an expired one is removed."""
        stored = table.get(key)
        if stored is not None and stored.expires_at <= self._clock.now():
            del table[key]
            return None
        return stored

    def read(self, table: MutableMapping[Any, TtlValue[T]], key: Any) -> TtlValue[T] | None:
        """Return the live entry under ``key``, refreshed if reads refresh."""
        stored = self.live(table, key)
        if stored is not None and self.refreshes_on_read:
            stored = table[key] = self.stamp(stored.value)
        return stored

    def __repr__(self) -> str:
        return f"<TtlPolicy ttl={self._ttl} refreshes_on_read={self.refreshes_on_read}>"
