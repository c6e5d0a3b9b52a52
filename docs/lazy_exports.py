"""A griffe extension: names a package imports on first use are documented as its own.

``lockgate.connectors`` imports the connectors backed by an extra (Kafka, PostgreSQL, Redis,
S3) in a module ``__getattr__``, from the table ``_EXTRAS`` (public name -> module). Static
analysis sees no such names, so this extension reads that table from the source and adds
each name as an alias of the class in its module: the reference follows the table wherever
the modules move.
"""

from __future__ import annotations

import ast
from typing import Any

import griffe

TABLE = "_EXTRAS"


class LazyExports(griffe.Extension):
    """Adds an alias for every entry of a module's ``_EXTRAS`` table."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        """Visit the loaded package and every module inside it."""
        for module in _modules(pkg):
            self._add_aliases(module)

    def _add_aliases(self, module: griffe.Module) -> None:
        table = module.members.get(TABLE)
        if not isinstance(table, griffe.Attribute) or table.value is None:
            return
        for name, target in ast.literal_eval(str(table.value)).items():
            if name not in module.members:
                module.set_member(name, griffe.Alias(name, f"{target}.{name}", parent=module))


def _modules(module: griffe.Module) -> list[griffe.Module]:
    found = [module]
    for member in module.modules.values():
        if isinstance(member, griffe.Module):
            found.extend(_modules(member))
    return found
