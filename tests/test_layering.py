"""The layout of MODULES.md, held: layers, the connectors' surface, actors' exports, sizes.

Every check reads source with ``ast`` (nothing is imported) and takes the tree's root, so the
same functions run over the repository and over small fake trees in ``tmp_path``; each rule has
a test that feeds it a bad edge, so each can be seen to fail.
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
PACKAGES = {
    "actors": "lockgate.actors",
    "engine": "lockgate.engine",
    "connectors": "lockgate.connectors",
}
ACTORS, ENGINE, CONNECTORS = "lockgate.actors", "lockgate.engine", "lockgate.connectors"
FACE = ENGINE  # engine/__init__.py alone: the face is one file, not the engine's folders

# MODULES.md's ladder: a module imports its own layer or lower ones. Connectors are outside it:
# nothing on it imports them, and they import only CONNECTORS_MAY_IMPORT.
LAYERS: dict[int, tuple[str, ...]] = {
    0: (ACTORS,),
    1: ("lockgate.engine.time", "lockgate.engine.events", "lockgate.engine.errors"),
    2: ("lockgate.engine.state",),
    3: ("lockgate.engine.functions",),
    4: ("lockgate.engine.windows",),
    5: ("lockgate.engine.graph", "lockgate.engine.io"),
    6: ("lockgate.engine.checkpointing",),
    7: ("lockgate.engine.savepoints",),
    8: ("lockgate.engine.restore",),
    9: ("lockgate.engine.runtime",),
    # testing.py (public test doubles) needs only time/ and io/ today, but it is user-facing like
    # api/ and may grow harnesses that build and run jobs, so it sits beside api/; the face does
    # not import it, and connectors may (memory.py takes its failure sentinels).
    10: (
        "lockgate.engine.api",
        "lockgate.engine.web",
        "lockgate.engine.simulation",
        "lockgate.engine.testing",
    ),
    11: (FACE,),
}

# Upward references MODULES.md allows, typing only: (importer's folder, module, name). api/
# naming its own fluent family needs no entry: it never leaves layer 10.
TYPING_REFERENCES_UP = {
    ("lockgate.engine.io", "lockgate.engine.savepoints.type_codec", "TypeCodec")
}

CONNECTORS_MAY_IMPORT = (
    FACE,
    "lockgate.engine.io",
    "lockgate.engine.errors",
    "lockgate.engine.testing",
)

MAX_ENGINE_ROOT_FILES, MAX_MODULES_PER_FOLDER, MAX_MODULE_LINES = 6, 20, 400


@dataclass(frozen=True)
class Module:
    name: str
    path: Path  # relative to the tree's root

    @property
    def package(self) -> str:
        return self.name if self.path.name == "__init__.py" else self.name.rpartition(".")[0]


@dataclass(frozen=True)
class Place:
    typing_only: bool  # under `if TYPE_CHECKING:`
    in_function: bool  # runs when the function does, not when the module loads


TOP = Place(typing_only=False, in_function=False)
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
TYPE_CHECKING_TESTS = {"TYPE_CHECKING", "typing.TYPE_CHECKING"}


@dataclass(frozen=True)
class Edge:
    source: Module
    target: str  # a module
    name: str | None  # what `from target import name` takes; None when a module is imported
    line: int
    place: Place

    def __str__(self) -> str:
        what = f"{self.name} from {self.target}" if self.name else self.target
        return f"{self.source.path.as_posix()}:{self.line} imports {what}"

    @property
    def statement(self) -> str:
        """The import statement, for rules that read the module only, not the names taken."""
        return f"{self.source.path.as_posix()}:{self.line} imports {self.target}"


def within(module: str, package: str) -> bool:
    return module == package or module.startswith(f"{package}.")


def matches(module: str, entry: str) -> bool:
    """Whether module is a table's entry or lies inside it (the face holds only itself)."""
    return module == entry or (entry != FACE and within(module, entry))


def module_name(path: Path) -> str:
    parts = [PACKAGES[path.parts[0]], *path.parts[1:-1]]
    return ".".join(parts if path.stem == "__init__" else [*parts, path.stem])


def modules(root: Path) -> dict[str, Module]:
    paths = sorted(
        path.relative_to(root) for folder in PACKAGES for path in (root / folder).rglob("*.py")
    )
    return {module_name(path): Module(module_name(path), path) for path in paths}


def is_type_checking_block(node: ast.If) -> bool:
    return ast.unparse(node.test) in TYPE_CHECKING_TESTS


def import_statements(
    nodes: Iterable[ast.AST], place: Place
) -> Iterator[tuple[ast.Import | ast.ImportFrom, Place]]:
    for node in nodes:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node, place
        elif isinstance(node, ast.If) and is_type_checking_block(node):
            yield from import_statements(node.body, replace(place, typing_only=True))
            yield from import_statements(node.orelse, place)
        else:
            inner = replace(place, in_function=True) if isinstance(node, FUNCTIONS) else place
            yield from import_statements(ast.iter_child_nodes(node), inner)


def absolute(node: ast.ImportFrom, module: Module) -> str:
    if node.level == 0:
        return node.module or ""
    parts = module.package.split(".")
    anchor = parts[: len(parts) - node.level + 1]
    return ".".join([*anchor, node.module] if node.module else anchor)


def targets(
    node: ast.Import | ast.ImportFrom, module: Module, known: Collection[str]
) -> Iterator[tuple[str, str | None]]:
    """`from pkg import name` reaches pkg.name when that is a module, else pkg (its __init__)."""
    if isinstance(node, ast.Import):
        yield from ((alias.name, None) for alias in node.names)
        return
    base = absolute(node, module)
    for alias in node.names:
        submodule = f"{base}.{alias.name}"
        yield (submodule, None) if submodule in known else (base, alias.name)


def edges_of(module: Module, root: Path, known: Collection[str]) -> Iterator[Edge]:
    tree = ast.parse((root / module.path).read_text(), filename=str(module.path))
    for node, place in import_statements(tree.body, TOP):
        for target, name in targets(node, module, known):
            yield Edge(module, target, name, node.lineno, place)


def import_edges(root: Path) -> list[Edge]:
    known = modules(root)
    return [edge for module in known.values() for edge in edges_of(module, root, known)]


# Rule A: the ladder.


def layer_of(module: str) -> int | None:
    on = (layer for layer, entries in LAYERS.items() if any(matches(module, e) for e in entries))
    return next(on, None)


def allowed_upward(edge: Edge) -> bool:
    return edge.place.typing_only and any(
        within(edge.source.name, folder) and (edge.target, edge.name) == (module, name)
        for folder, module, name in TYPING_REFERENCES_UP
    )


def points_up(edge: Edge) -> bool:
    if within(edge.target, CONNECTORS):
        return True
    source, target = layer_of(edge.source.name), layer_of(edge.target)
    if source is None or target is None:
        return False  # off the ladder: modules_off_the_ladder() names it
    return target > source and not allowed_upward(edge)


def layer_label(module: str) -> str:
    return "connectors" if within(module, CONNECTORS) else f"layer {layer_of(module)}"


def describe_upward(edge: Edge) -> str:
    return f"{edge.statement} ({layer_label(edge.source.name)} -> {layer_label(edge.target)})"


def once(findings: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(findings))


def upward_imports(root: Path) -> list[str]:
    return once(
        describe_upward(edge)
        for edge in import_edges(root)
        if not within(edge.source.name, CONNECTORS) and points_up(edge)
    )


def modules_off_the_ladder(root: Path) -> list[str]:
    return [
        module.path.as_posix()
        for module in modules(root).values()
        if not within(module.name, CONNECTORS) and layer_of(module.name) is None
    ]


# Rule B: connectors see the engine's surface only.


def connector_imports_off_the_surface(root: Path) -> list[str]:
    return once(
        edge.statement
        for edge in import_edges(root)
        if within(edge.source.name, CONNECTORS)
        and within(edge.target, ENGINE)
        and not any(matches(edge.target, entry) for entry in CONNECTORS_MAY_IMPORT)
    )


# Rule C: outside actors/, only what actors/__init__.py exports.


def actors_exports(root: Path) -> set[str]:
    init = root / "actors" / "__init__.py"
    tree = ast.parse(init.read_text() if init.exists() else "")
    for node in tree.body:
        if isinstance(node, ast.Assign) and "__all__" in {ast.unparse(t) for t in node.targets}:
            return set(ast.literal_eval(node.value))
    return set()


def takes_an_export(edge: Edge, exports: Collection[str]) -> bool:
    if edge.name is None:
        return edge.target == ACTORS  # a submodule itself is not an export
    private = any(part.startswith("_") for part in edge.target.split("."))
    return not private and edge.name in exports


def unexported_actors_imports(root: Path) -> list[str]:
    exports = actors_exports(root)
    return [
        str(edge)
        for edge in import_edges(root)
        if within(edge.target, ACTORS)
        and not within(edge.source.name, ACTORS)
        and not takes_an_export(edge, exports)
    ]


# Sizes.


def crowded_engine_root(root: Path) -> list[str]:
    names = sorted(path.name for path in (root / "engine").glob("*.py"))
    return names if len(names) > MAX_ENGINE_ROOT_FILES else []


def crowded_folders(root: Path) -> list[str]:
    counts = Counter(module.path.parent.as_posix() for module in modules(root).values())
    return [
        f"{folder}/ holds {n} modules"
        for folder, n in sorted(counts.items())
        if n > MAX_MODULES_PER_FOLDER
    ]


def long_modules(root: Path) -> list[str]:
    lengths = {
        module.path: len((root / module.path).read_text().splitlines())
        for module in modules(root).values()
    }
    return [
        f"{path.as_posix()} has {n} lines" for path, n in lengths.items() if n > MAX_MODULE_LINES
    ]


# Routing never uses Python's hash(): it is salted per process.


def calls_hash(path: Path) -> bool:
    return any(
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "hash"
        for node in ast.walk(ast.parse(path.read_text()))
    )


def modules_calling_hash(root: Path) -> list[str]:
    return [
        module.path.as_posix()
        for module in modules(root).values()
        if calls_hash(root / module.path)
    ]


# Fake trees.


def write_tree(root: Path, files: dict[str, str]) -> Path:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


ACTORS_INIT = '__all__ = ["Actor", "Mailbox"]\n'


# The repository.


def test_every_engine_and_actors_module_sits_on_a_layer() -> None:
    found = modules_off_the_ladder(ROOT)

    assert found == [], "\n".join(found)


def test_no_import_points_to_a_higher_layer() -> None:
    found = upward_imports(ROOT)

    assert found == [], "\n".join(found)


def test_connectors_import_only_the_face_io_errors_and_testing() -> None:
    found = connector_imports_off_the_surface(ROOT)

    assert found == [], "\n".join(found)


def test_outside_actors_only_the_names_actors_exports_are_imported() -> None:
    found = unexported_actors_imports(ROOT)

    assert found == [], "\n".join(found)


def test_the_engine_root_holds_at_most_six_modules() -> None:
    found = crowded_engine_root(ROOT)

    assert found == [], "\n".join(found)


def test_no_folder_holds_more_than_twenty_modules() -> None:
    found = crowded_folders(ROOT)

    assert found == [], "\n".join(found)


def test_no_module_is_over_four_hundred_lines() -> None:
    found = long_modules(ROOT)

    assert found == [], "\n".join(found)


def test_no_module_uses_python_hash_for_routing() -> None:
    found = modules_calling_hash(ROOT)

    assert found == [], "\n".join(found)


# Rule A on fake trees.


def test_a_tree_that_keeps_to_the_layers_passes(tmp_path: Path) -> None:
    root = write_tree(
        tmp_path,
        {
            "actors/mailbox.py": "import anyio\n",
            "engine/__init__.py": "from lockgate.engine.api.run import run\n",
            "engine/errors.py": "class EngineError(Exception): ...\n",
            "engine/state/x.py": "from lockgate.engine.errors import EngineError\n",
            "engine/runtime/y.py": "from lockgate.engine.state import x\n",
            "engine/runtime/z.py": "from lockgate.actors import Mailbox\n",
            "engine/api/run.py": "from lockgate.engine.runtime.y import Y\n",
        },
    )

    assert upward_imports(root) == []
    assert modules_off_the_ladder(root) == []


def test_a_state_module_importing_the_runtime_is_reported(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {"engine/state/x.py": "from lockgate.engine.runtime.y import Y\n"})

    assert upward_imports(root) == [
        "engine/state/x.py:1 imports lockgate.engine.runtime.y (layer 2 -> layer 9)"
    ]


def test_an_import_inside_a_function_body_is_an_edge(tmp_path: Path) -> None:
    code = "def f():\n    import lockgate.engine.runtime.y\n"
    root = write_tree(tmp_path, {"engine/state/x.py": code})

    assert upward_imports(root) == [
        "engine/state/x.py:2 imports lockgate.engine.runtime.y (layer 2 -> layer 9)"
    ]


def test_a_third_party_import_inside_a_function_body_is_no_edge(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {"engine/state/x.py": "def f():\n    import rocksdict\n"})

    assert upward_imports(root) == []


def test_an_upward_import_under_type_checking_is_reported(tmp_path: Path) -> None:
    code = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from lockgate.engine.api.stream import DataStream\n"
    )
    root = write_tree(tmp_path, {"engine/windows/x.py": code})

    assert upward_imports(root) == [
        "engine/windows/x.py:3 imports lockgate.engine.api.stream (layer 4 -> layer 10)"
    ]


def test_io_may_name_type_codec_under_type_checking(tmp_path: Path) -> None:
    code = "if TYPE_CHECKING:\n    from lockgate.engine.savepoints.type_codec import TypeCodec\n"
    root = write_tree(tmp_path, {"engine/io/sources.py": code})

    assert upward_imports(root) == []


def test_io_importing_type_codec_at_runtime_is_reported(tmp_path: Path) -> None:
    code = "from lockgate.engine.savepoints.type_codec import TypeCodec\n"
    root = write_tree(tmp_path, {"engine/io/sources.py": code})

    assert upward_imports(root) == [
        "engine/io/sources.py:1 imports lockgate.engine.savepoints.type_codec (layer 5 -> layer 7)"
    ]


def test_the_else_branch_of_type_checking_is_a_runtime_import(tmp_path: Path) -> None:
    code = (
        "if TYPE_CHECKING:\n"
        "    pass\n"
        "else:\n"
        "    from lockgate.engine.savepoints.type_codec import TypeCodec\n"
    )
    root = write_tree(tmp_path, {"engine/io/sources.py": code})

    assert len(upward_imports(root)) == 1


def test_an_engine_module_importing_the_face_is_reported(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {"engine/api/run.py": "from lockgate.engine import TypeCodec\n"})

    assert upward_imports(root) == [
        "engine/api/run.py:1 imports lockgate.engine (layer 10 -> layer 11)"
    ]


def test_from_a_package_import_a_module_is_an_edge_to_that_module(tmp_path: Path) -> None:
    root = write_tree(
        tmp_path,
        {"engine/state/x.py": "from lockgate.engine.runtime import y\n", "engine/runtime/y.py": ""},
    )

    assert upward_imports(root) == [
        "engine/state/x.py:1 imports lockgate.engine.runtime.y (layer 2 -> layer 9)"
    ]


def test_a_relative_import_is_resolved_against_its_package(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {"engine/state/x.py": "from ..runtime.y import Y\n"})

    assert upward_imports(root) == [
        "engine/state/x.py:1 imports lockgate.engine.runtime.y (layer 2 -> layer 9)"
    ]


def test_actors_importing_the_engine_is_reported(tmp_path: Path) -> None:
    root = write_tree(
        tmp_path, {"actors/actor.py": "from lockgate.engine.errors import EngineError\n"}
    )

    assert upward_imports(root) == [
        "actors/actor.py:1 imports lockgate.engine.errors (layer 0 -> layer 1)"
    ]


def test_an_engine_module_importing_a_connector_is_reported(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {"engine/api/run.py": "import lockgate.connectors.memory\n"})

    assert upward_imports(root) == [
        "engine/api/run.py:1 imports lockgate.connectors.memory (layer 10 -> connectors)"
    ]


def test_a_module_outside_the_layer_map_is_reported(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {"engine/partitioning.py": "", "connectors/memory.py": ""})

    assert modules_off_the_ladder(root) == ["engine/partitioning.py"]


# Rule B on fake trees.


def test_a_connector_may_import_the_face_io_errors_and_testing(tmp_path: Path) -> None:
    code = (
        "from lockgate.engine import TypeCodec\n"
        "from lockgate.engine.io.sinks import Sink\n"
        "from lockgate.engine.errors import SourceError\n"
        "from lockgate.engine.testing import FailOnce\n"
        "from lockgate.connectors.errors import ConnectorError\n"
    )
    root = write_tree(tmp_path, {"connectors/memory.py": code})

    assert connector_imports_off_the_surface(root) == []


def test_a_connector_importing_the_runtime_is_reported(tmp_path: Path) -> None:
    code = "from lockgate.engine.runtime.subtask import SubtaskActor\n"
    root = write_tree(tmp_path, {"connectors/memory.py": code})

    assert connector_imports_off_the_surface(root) == [
        "connectors/memory.py:1 imports lockgate.engine.runtime.subtask"
    ]


def test_a_connector_reaching_a_module_through_the_engine_package_is_reported(
    tmp_path: Path,
) -> None:
    root = write_tree(
        tmp_path,
        {
            "connectors/memory.py": "from lockgate.engine import state\n",
            "engine/state/__init__.py": "",
        },
    )

    assert connector_imports_off_the_surface(root) == [
        "connectors/memory.py:1 imports lockgate.engine.state"
    ]


# Rule C on fake trees.


def test_exported_actors_names_may_be_imported_from_the_package_or_their_module(
    tmp_path: Path,
) -> None:
    code = (
        "from lockgate.actors import Actor\n"
        "from lockgate.actors.mailbox import Mailbox\n"
        "import lockgate.actors\n"
    )
    root = write_tree(tmp_path, {"actors/__init__.py": ACTORS_INIT, "engine/runtime/y.py": code})

    assert unexported_actors_imports(root) == []


def test_an_unexported_actors_name_is_reported(tmp_path: Path) -> None:
    code = "from lockgate.actors.mailbox import Private\n"
    root = write_tree(tmp_path, {"actors/__init__.py": ACTORS_INIT, "engine/runtime/y.py": code})

    assert unexported_actors_imports(root) == [
        "engine/runtime/y.py:1 imports Private from lockgate.actors.mailbox"
    ]


def test_an_unexported_name_from_the_actors_package_is_reported(tmp_path: Path) -> None:
    code = "from lockgate.actors import Envelope\n"
    root = write_tree(tmp_path, {"actors/__init__.py": ACTORS_INIT, "connectors/x.py": code})

    assert unexported_actors_imports(root) == [
        "connectors/x.py:1 imports Envelope from lockgate.actors"
    ]


def test_a_private_actors_module_is_reported_even_for_an_exported_name(tmp_path: Path) -> None:
    code = "from lockgate.actors._loop import Actor\n"
    root = write_tree(tmp_path, {"actors/__init__.py": ACTORS_INIT, "engine/runtime/y.py": code})

    assert unexported_actors_imports(root) == [
        "engine/runtime/y.py:1 imports Actor from lockgate.actors._loop"
    ]


def test_importing_an_actors_module_itself_is_reported(tmp_path: Path) -> None:
    code = "import lockgate.actors.mailbox\n"
    root = write_tree(tmp_path, {"actors/__init__.py": ACTORS_INIT, "engine/runtime/y.py": code})

    assert unexported_actors_imports(root) == [
        "engine/runtime/y.py:1 imports lockgate.actors.mailbox"
    ]


def test_actors_modules_import_each_other_freely(tmp_path: Path) -> None:
    code = "from lockgate.actors._loop import run_loop\n"
    root = write_tree(tmp_path, {"actors/__init__.py": ACTORS_INIT, "actors/actor.py": code})

    assert unexported_actors_imports(root) == []


# Sizes on fake trees.


def fake_modules(count: int) -> dict[str, str]:
    return {f"m{n}.py": "" for n in range(count)}


@pytest.mark.parametrize(("count", "crowded"), [(6, False), (7, True)])
def test_an_engine_root_over_six_modules_is_reported(
    tmp_path: Path, count: int, crowded: bool
) -> None:
    root = write_tree(tmp_path, {f"engine/{name}": "" for name in fake_modules(count)})

    assert bool(crowded_engine_root(root)) is crowded


@pytest.mark.parametrize(("count", "crowded"), [(20, False), (21, True)])
def test_a_folder_over_twenty_modules_is_reported(
    tmp_path: Path, count: int, crowded: bool
) -> None:
    root = write_tree(tmp_path, {f"engine/state/{name}": "" for name in fake_modules(count)})

    assert crowded_folders(root) == (["engine/state/ holds 21 modules"] if crowded else [])


@pytest.mark.parametrize(("lines", "long"), [(400, False), (401, True)])
def test_a_module_over_four_hundred_lines_is_reported(
    tmp_path: Path, lines: int, long: bool
) -> None:
    root = write_tree(tmp_path, {"engine/state/x.py": "pass\n" * lines})

    assert long_modules(root) == ([f"engine/state/x.py has {lines} lines"] if long else [])


# hash() on fake trees.


def test_a_module_calling_hash_is_reported(tmp_path: Path) -> None:
    root = write_tree(
        tmp_path, {"engine/state/x.py": "def route(key, n):\n    return hash(key) % n\n"}
    )

    assert modules_calling_hash(root) == ["engine/state/x.py"]


def test_a_module_calling_stable_hash_passes(tmp_path: Path) -> None:
    root = write_tree(
        tmp_path, {"engine/state/x.py": "def route(key, n):\n    return stable_hash(key) % n\n"}
    )

    assert modules_calling_hash(root) == []
