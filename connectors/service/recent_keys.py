"""RecentKeys: the idempotency keys one ingress split has seen, each for a time to live."""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping

__all__ = ["RecentKeys"]


class RecentKeys:
    """The idempotency keys of the records read from one split, each kept ``ttl`` seconds.

    A key seen again within its time to live marks a duplicate (a retried send). Each key
    remembers the position of the record that first carried it, so a checkpoint stores only
    the keys of records before its position (the engine reads batches ahead of what a
    checkpoint covers). Keys expire in the order they were first seen, since each lives
    ``ttl`` seconds from then; a checkpoint stores the time each has left, so the clock of a
    restored job (monotonic, meaningful only within one process) need not be the same.
    """

    def __init__(self, ttl: float) -> None:
        self._ttl = ttl
        self._positions: dict[str, int] = {}
        self._expiries: deque[tuple[float, str]] = deque()

    @classmethod
    def restored(
        cls, ttl: float, remaining: Mapping[str, float], *, position: int, now: float
    ) -> RecentKeys:
        """Keys a checkpoint stored with the seconds each had left, all before ``position``."""
        keys = cls(ttl)
        for key, left in sorted(remaining.items(), key=lambda item: item[1]):
            keys._remember(key, position - 1, now + left)
        return keys

    def seen(self, key: str, position: int, now: float) -> bool:
        """Whether ``key`` is a duplicate; if it is new, remember it at ``position``."""
        self.expire(now)
        if key in self._positions:
            return True
        self._remember(key, position, now + self._ttl)
        return False

    def expire(self, now: float) -> None:
        """Forget the keys whose time to live is over at ``now``."""
        while self._expiries and self._expiries[0][0] <= now:
            _, key = self._expiries.popleft()
            del self._positions[key]

    def remaining_before(self, position: int, now: float) -> dict[str, float]:
        """The keys of records before ``position`` that are still live, with the time left."""
        return {
            key: expires - now
            for expires, key in self._expiries
            if expires > now and self._positions[key] < position
        }

    def __len__(self) -> int:
        return len(self._positions)

    def _remember(self, key: str, position: int, expires: float) -> None:
        self._positions[key] = position
        self._expiries.append((expires, key))

    def __repr__(self) -> str:
        return f"<RecentKeys {len(self._positions)} ttl={self._ttl}>"
