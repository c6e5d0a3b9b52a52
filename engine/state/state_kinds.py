"""StateKinds: the kind each keyed state was declared or restored with, kept by every store."""

from __future__ import annotations

from collections.abc import Mapping

from lockgate.engine.errors import IncompatibleState
from lockgate.engine.state.descriptors import StateDescriptor, kind_of

__all__ = ["StateKinds"]


class StateKinds:
    """Per state name, the kind (``kind_of``) it was declared with or restored as.

    Invariant: a name never has two kinds. Declaring a restored state as another kind, or
    restoring a declared state as another kind, raises ``IncompatibleState`` naming the
    state, both kinds and the ``owner`` (such as ``"operator 'sums'"``), and saying what to do.
    ``snapshot`` lists restored states too, declared or not, so they keep their kind.
    """

    __slots__ = ("_declared", "_restored", "owner")

    def __init__(self, owner: str | None = None) -> None:
        self.owner = owner
        self._declared: dict[str, str] = {}
        self._restored: dict[str, str] = {}

    def declare(self, descriptor: StateDescriptor) -> str:
        """Record the kind ``descriptor`` declares and return it.

        Raises:
            IncompatibleState: the state was restored as another kind.
        """
        kind = kind_of(descriptor)
        restored = self._restored.get(descriptor.name)
        if restored is not None and restored != kind:
            raise IncompatibleState(self._mismatch(descriptor.name, restored, kind))
        self._declared[descriptor.name] = kind
        return kind

    def restore(self, kinds: Mapping[str, str]) -> None:
        """Record the kinds restored states had when their snapshot was taken.

        Raises:
            IncompatibleState: a state was declared before as another kind.
        """
        for name, kind in kinds.items():
            declared = self._declared.get(name)
            if declared is not None and declared != kind:
                raise IncompatibleState(self._mismatch(name, kind, declared))
            self._restored[name] = kind

    def kind(self, name: str) -> str | None:
        """Return the kind of state ``name``, if it was declared or restored with one."""
        return self._declared.get(name) or self._restored.get(name)

    def snapshot(self) -> dict[str, str]:
        """Return state name -> kind of every declared or restored state."""
        return {**self._restored, **self._declared}

    def _mismatch(self, name: str, restored: str, declared: str) -> str:
        owner = f"{self.owner}: " if self.owner else ""
        return (
            f"{owner}state '{name}' was restored as {restored} state but is declared as "
            f"{declared} state; declare it as {restored} state as before, or give the new "
            f"{declared} state another name (the restored one is then kept, unused)"
        )

    def __repr__(self) -> str:
        return f"<StateKinds {self.snapshot()}>"
