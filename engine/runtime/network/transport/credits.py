"""Credits: how much a sending end may have in flight, and what the receiving end returns ☐.

The receiving end of a channel opens it by granting a window, in records and in bytes: the
room its local channel has. The sending end spends credits for every ``DATA`` and
``EVENT`` frame it sends (a batch's records, 1 for an event; the payload's bytes) and
sends only within them; the receiving end returns credits as its consumer takes items.
So records in flight (sent, and not yet taken downstream as far as the sender knows)
never exceed the window. One exception keeps a frame larger than the whole window from
waiting forever: it is admitted alone, when nothing is in flight. ``PRIORITY`` frames
spend nothing: an unaligned barrier must pass a channel whose credits are spent.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CreditStatistics", "ReceiveCredits", "SendCredits"]


@dataclass(frozen=True, slots=True)
class CreditStatistics:
    """A channel's credits as one end sees them; records and bytes alike.

    ``window_*`` is what the receiving end granted when it opened the channel, and
    ``granted_*`` every credit granted so far (the window, then each return). ``in_flight_*``
    is what the sending end has spent and not had back (on the receiving end: what arrived
    and was not returned), ``max_in_flight_*`` the most of it at any time. ``blocked``
    counts the sends refused for want of credits.
    """

    window_records: int
    window_bytes: int
    granted_records: int
    granted_bytes: int
    in_flight_records: int
    in_flight_bytes: int
    max_in_flight_records: int
    max_in_flight_bytes: int
    blocked: int = 0


class SendCredits:
    """The sending end's credits: the window granted, what is spent and what came back.

    ``admits`` says whether a frame of ``records`` and ``size`` bytes may be sent now;
    ``spend`` records that it was. Nothing is admitted before the window is granted.
    """

    __slots__ = (
        "_blocked",
        "_granted",
        "_granted_bytes",
        "_in_flight",
        "_in_flight_bytes",
        "_max",
        "_max_bytes",
        "_window",
        "_window_bytes",
    )

    def __init__(self) -> None:
        self._window = self._window_bytes = 0
        self._granted = self._granted_bytes = 0
        self._in_flight = self._in_flight_bytes = 0
        self._max = self._max_bytes = 0
        self._blocked = 0

    @property
    def opened(self) -> bool:
        """Whether the receiving end has granted its window."""
        return self._granted > 0

    def admits(self, records: int, size: int) -> bool:
        """Whether a frame of ``records`` and ``size`` bytes may be sent now."""
        if (
            self._in_flight + records <= self._window
            and self._in_flight_bytes + size <= self._window_bytes
        ):
            return True
        if self._in_flight == 0 and self._in_flight_bytes == 0 and self._granted > 0:
            return True
        self._blocked += 1
        return False

    def spend(self, records: int, size: int) -> None:
        """Count a frame sent: its records and bytes are in flight until returned."""
        self._in_flight += records
        self._in_flight_bytes += size
        self._max = max(self._max, self._in_flight)
        self._max_bytes = max(self._max_bytes, self._in_flight_bytes)

    def grant(self, records: int, size: int) -> None:
        """Take a credit: the window with the first, returned records and bytes after."""
        if not self.opened:
            self._window, self._window_bytes = records, size
        else:
            self._in_flight = max(0, self._in_flight - records)
            self._in_flight_bytes = max(0, self._in_flight_bytes - size)
        self._granted += records
        self._granted_bytes += size

    def statistics(self) -> CreditStatistics:
        """Return the credits now."""
        return CreditStatistics(
            self._window,
            self._window_bytes,
            self._granted,
            self._granted_bytes,
            self._in_flight,
            self._in_flight_bytes,
            self._max,
            self._max_bytes,
            self._blocked,
        )

    def __repr__(self) -> str:
        return (
            f"<SendCredits in_flight={self._in_flight}/{self._window} records "
            f"{self._in_flight_bytes}/{self._window_bytes} bytes>"
        )


class ReceiveCredits:
    """The receiving end's credits: its window, what arrived, what it owes back.

    ``arrives`` checks a frame against the window before it is accepted (a sender beyond
    its credits broke the protocol: it returns ``False``); ``consumed`` counts an item the
    consumer took, whose credits ``take_return`` then hands back, all at once.
    """

    __slots__ = (
        "_granted",
        "_granted_bytes",
        "_max",
        "_max_bytes",
        "_outstanding",
        "_outstanding_bytes",
        "_owed",
        "_owed_bytes",
        "window",
        "window_bytes",
    )

    def __init__(self, window: int, window_bytes: int) -> None:
        if window < 1 or window_bytes < 1:
            raise ValueError(
                f"a channel's credit window needs at least 1 record and 1 byte; got "
                f"{window} records and {window_bytes} bytes"
            )
        self.window, self.window_bytes = window, window_bytes
        self._granted, self._granted_bytes = window, window_bytes
        self._outstanding = self._outstanding_bytes = 0
        self._owed = self._owed_bytes = 0
        self._max = self._max_bytes = 0

    def arrives(self, records: int, size: int) -> bool:
        """Count a frame that arrived; ``False`` if the sender had no credits for it."""
        outstanding, outstanding_bytes = self._outstanding, self._outstanding_bytes
        within = outstanding + records <= self.window and (
            outstanding_bytes + size <= self.window_bytes
        )
        if not within and (outstanding or outstanding_bytes):
            return False
        self._outstanding = outstanding = outstanding + records
        self._outstanding_bytes = outstanding_bytes = outstanding_bytes + size
        self._max = max(self._max, outstanding)
        self._max_bytes = max(self._max_bytes, outstanding_bytes)
        return True

    def consumed(self, records: int, size: int) -> None:
        """Count an item the consumer took: its credits are owed to the sender."""
        self._owed += records
        self._owed_bytes += size

    def take_return(self) -> tuple[int, int]:
        """Return the records and bytes owed, now no longer outstanding."""
        owed, owed_bytes = self._owed, self._owed_bytes
        self._owed = self._owed_bytes = 0
        self._outstanding -= owed
        self._outstanding_bytes -= owed_bytes
        self._granted += owed
        self._granted_bytes += owed_bytes
        return owed, owed_bytes

    def statistics(self) -> CreditStatistics:
        """Return the credits now, as the receiving end sees them."""
        return CreditStatistics(
            self.window,
            self.window_bytes,
            self._granted,
            self._granted_bytes,
            self._outstanding,
            self._outstanding_bytes,
            self._max,
            self._max_bytes,
        )

    def __repr__(self) -> str:
        return (
            f"<ReceiveCredits outstanding={self._outstanding}/{self.window} records "
            f"{self._outstanding_bytes}/{self.window_bytes} bytes owed={self._owed}>"
        )
