"""SnapshotVersions: which snapshots of a store may still read the layers they froze."""

from __future__ import annotations

import weakref

__all__ = ["SnapshotVersion", "SnapshotVersions"]


class SnapshotVersion:
    """One snapshot's hold on the layers it froze: held until released, or until it is gone.

    A snapshot is released once nothing will read it again (its asynchronous part ended, or
    its checkpoint was dropped before that); a snapshot that is garbage collected unreleased
    holds nothing either, so a forgotten release costs memory for a while, never correctness.
    """

    __slots__ = ("__weakref__", "released")

    def __init__(self) -> None:
        self.released = False

    def release(self) -> None:
        """Give the layers up: from now on a fold may change them (idempotent)."""
        self.released = True

    def __repr__(self) -> str:
        return f"<SnapshotVersion released={self.released}>"


class SnapshotVersions:
    """The versions a store handed out that may still be read; used on the event loop only.

    Invariant: ``held`` counts every version neither released nor collected, so a fold that
    changes frozen layers only while ``held`` is 0 never changes what a reader reads.
    """

    __slots__ = ("_taken",)

    def __init__(self) -> None:
        self._taken: list[weakref.ref[SnapshotVersion]] = []

    def take(self) -> SnapshotVersion:
        """Return a new version, held until released."""
        version = SnapshotVersion()
        self._taken.append(weakref.ref(version))
        return version

    def held(self) -> int:
        """How many versions may still be read."""
        self._taken = [ref for ref in self._taken if _held(ref)]
        return len(self._taken)

    def __repr__(self) -> str:
        return f"<SnapshotVersions held={self.held()}>"


def _held(ref: weakref.ref[SnapshotVersion]) -> bool:
    version = ref()
    return version is not None and not version.released
