"""TokenBucket: when the next call may start under a rate limit."""

from __future__ import annotations

__all__ = ["TokenBucket"]


class TokenBucket:
    """A token bucket that hands out reservations: ``rate`` tokens a second, ``burst`` at most.

    ``reserve(now)`` takes one token and returns how long the caller must wait before using
    it: 0 while tokens are left, then the time until its token has been refilled. Tokens go
    negative to record reservations already handed out, so waiters are served in the order
    they reserved and, over any long enough time, no more than ``burst + rate * time`` calls
    start. Pure: time is passed in.
    """

    def __init__(self, rate: float, *, burst: float, now: float) -> None:
        if rate <= 0 or burst < 1:
            raise ValueError(f"a token bucket needs rate > 0 and burst >= 1; got {rate}, {burst}")
        self.rate = rate
        self.burst = burst
        self._tokens = burst
        self._updated = now

    def reserve(self, now: float) -> float:
        """Take a token; return the seconds to wait until it may be used (0 for at once)."""
        elapsed = max(0.0, now - self._updated)
        self._tokens = min(self.burst, self._tokens + elapsed * self.rate) - 1.0
        self._updated = max(now, self._updated)
        return 0.0 if self._tokens >= 0 else -self._tokens / self.rate

    def __repr__(self) -> str:
        return f"<TokenBucket rate={self.rate}/s burst={self.burst} tokens={self._tokens:.2f}>"
