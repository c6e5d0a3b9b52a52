"""No circle of imports among engine, actors and connectors, as MODULES.md asks of every layer.

The first graph holds the imports that run when a module loads: top-level statements (in
``try`` blocks and class bodies too), not those under ``if TYPE_CHECKING:`` or inside
functions. The second adds those deferred imports back: a circle that only a deferred import
breaks is still a circle of concepts (today's five are all of that kind); only ``api/``'s
fluent family may name itself under ``TYPE_CHECKING``. In both, ``from pkg import name`` is an
edge to ``pkg.name`` when that is a module, else to ``pkg`` (its ``__init__``); a module gets
no implicit edge to its parent packages.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping, Set
from pathlib import Path

from tests.test_layering import ROOT, Edge, import_edges, modules, within, write_tree

API = "lockgate.engine.api"

Graph = Mapping[str, Set[str]]


def runs_at_load(edge: Edge) -> bool:
    return not edge.place.typing_only and not edge.place.in_function


def any_but_api_naming_itself(edge: Edge) -> bool:
    api_names_itself = within(edge.source.name, API) and within(edge.target, API)
    return not (edge.place.typing_only and api_names_itself)


def import_graph(root: Path, counts: Callable[[Edge], bool]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {name: set() for name in modules(root)}
    for edge in import_edges(root):
        if counts(edge) and edge.target in graph:
            graph[edge.source.name].add(edge.target)
    return graph


class Tarjan:
    """Tarjan's strongly connected components, found in one depth-first walk of the graph."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.index: dict[str, int] = {}
        self.low: dict[str, int] = {}
        self.stack: list[str] = []
        self.components: list[list[str]] = []

    def run(self) -> list[list[str]]:
        for node in sorted(self.graph):
            if node not in self.index:
                self.visit(node)
        return self.components

    def visit(self, node: str) -> None:
        self.index[node] = self.low[node] = len(self.index)
        self.stack.append(node)
        for successor in sorted(self.graph[node]):
            if successor not in self.index:
                self.visit(successor)
                self.low[node] = min(self.low[node], self.low[successor])
            elif successor in self.stack:
                self.low[node] = min(self.low[node], self.index[successor])
        if self.low[node] == self.index[node]:
            self.components.append(self.pop_component(node))

    def pop_component(self, root: str) -> list[str]:
        component = [self.stack.pop()]
        while component[-1] != root:
            component.append(self.stack.pop())
        return sorted(component)


def is_circle(component: list[str], graph: Graph) -> bool:
    return len(component) > 1 or component[0] in graph[component[0]]


def shortest_cycle(component: list[str], graph: Graph) -> list[str]:
    """The shortest import path from the component's first module back to it (breadth first)."""
    start, members = component[0], set(component)
    paths = {start: [start]}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for successor in sorted(graph[node] & members):
            if successor == start:
                return [*paths[node], start]
            if successor not in paths:
                paths[successor] = [*paths[node], successor]
                queue.append(successor)
    return [start]


def describe(component: list[str], graph: Graph) -> str:
    cycle = shortest_cycle(component, graph)
    others = sorted(set(component) - set(cycle))
    also = f"; also in this circle: {', '.join(others)}" if others else ""
    return " -> ".join(cycle) + also


def cycles(root: Path, counts: Callable[[Edge], bool] = runs_at_load) -> list[str]:
    graph = import_graph(root, counts)
    return [describe(c, graph) for c in Tarjan(graph).run() if is_circle(c, graph)]


# The repository.


def test_engine_actors_and_connectors_load_without_circles() -> None:
    found = cycles(ROOT)

    assert found == [], "\n".join(found)


def test_no_circle_hides_behind_a_deferred_import() -> None:
    found = cycles(ROOT, any_but_api_naming_itself)

    assert found == [], "\n".join(found)


# Fake trees.


def test_two_modules_importing_each_other_are_a_cycle(tmp_path: Path) -> None:
    root = write_tree(
        tmp_path,
        {
            "engine/state/a.py": "from lockgate.engine.state.b import B\n",
            "engine/state/b.py": "from lockgate.engine.state.a import A\n",
        },
    )

    assert cycles(root) == [
        "lockgate.engine.state.a -> lockgate.engine.state.b -> lockgate.engine.state.a"
    ]


def test_a_cycle_is_named_in_import_order(tmp_path: Path) -> None:
    root = write_tree(
        tmp_path,
        {
            "actors/a.py": "import lockgate.actors.c\n",
            "actors/b.py": "import lockgate.actors.a\n",
            "actors/c.py": "import lockgate.actors.b\n",
        },
    )

    assert cycles(root) == [
        "lockgate.actors.a -> lockgate.actors.c -> lockgate.actors.b -> lockgate.actors.a"
    ]


def test_each_circle_is_named_once(tmp_path: Path) -> None:
    root = write_tree(
        tmp_path,
        {
            "actors/a.py": "import lockgate.actors.b\n",
            "actors/b.py": "import lockgate.actors.a\n",
            "connectors/c.py": "import lockgate.connectors.d\n",
            "connectors/d.py": "import lockgate.connectors.c\n",
        },
    )

    assert len(cycles(root)) == 2


def test_modules_in_a_circle_beside_the_shortest_cycle_are_named(tmp_path: Path) -> None:
    root = write_tree(
        tmp_path,
        {
            "actors/a.py": "import lockgate.actors.b\n",
            "actors/b.py": "import lockgate.actors.a\nimport lockgate.actors.c\n",
            "actors/c.py": "import lockgate.actors.b\n",
        },
    )

    assert cycles(root) == [
        "lockgate.actors.a -> lockgate.actors.b -> lockgate.actors.a;"
        " also in this circle: lockgate.actors.c"
    ]


def test_a_module_importing_itself_is_a_cycle(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {"actors/a.py": "import lockgate.actors.a\n"})

    assert cycles(root) == ["lockgate.actors.a -> lockgate.actors.a"]


def test_from_a_package_import_a_module_is_an_edge_to_that_module(tmp_path: Path) -> None:
    root = write_tree(
        tmp_path,
        {
            "engine/state/__init__.py": "",
            "engine/state/a.py": "from lockgate.engine.state import b\n",
            "engine/state/b.py": "from lockgate.engine.state import a\n",
        },
    )

    assert cycles(root) == [
        "lockgate.engine.state.a -> lockgate.engine.state.b -> lockgate.engine.state.a"
    ]


def test_from_a_package_import_a_name_is_an_edge_to_its_init(tmp_path: Path) -> None:
    root = write_tree(
        tmp_path,
        {
            "engine/state/__init__.py": "from lockgate.engine.state.a import A\n",
            "engine/state/a.py": "from lockgate.engine.state import ValueState\n",
        },
    )

    assert cycles(root) == [
        "lockgate.engine.state -> lockgate.engine.state.a -> lockgate.engine.state"
    ]


def test_a_module_gets_no_implicit_edge_to_its_parent_package(tmp_path: Path) -> None:
    root = write_tree(
        tmp_path,
        {
            "engine/state/__init__.py": "from lockgate.engine.state.a import A\n",
            "engine/state/a.py": "from lockgate.engine.state.b import B\n",
            "engine/state/b.py": "",
        },
    )

    assert cycles(root) == []


def test_an_import_under_type_checking_makes_no_cycle(tmp_path: Path) -> None:
    root = write_tree(
        tmp_path,
        {
            "engine/api/stream.py": "from lockgate.engine.api.connected import Connected\n",
            "engine/api/connected.py": (
                "if TYPE_CHECKING:\n    from lockgate.engine.api.stream import DataStream\n"
            ),
        },
    )

    assert cycles(root) == []


def test_an_import_inside_a_function_makes_no_cycle(tmp_path: Path) -> None:
    root = write_tree(
        tmp_path,
        {
            "engine/api/stream.py": "from lockgate.engine.api.connected import Connected\n",
            "engine/api/connected.py": (
                "def f():\n    from lockgate.engine.api.stream import DataStream\n"
            ),
        },
    )

    assert cycles(root) == []


def test_an_import_in_a_top_level_try_block_is_an_edge(tmp_path: Path) -> None:
    root = write_tree(
        tmp_path,
        {
            "actors/a.py": "try:\n    import lockgate.actors.b\nexcept ImportError:\n    pass\n",
            "actors/b.py": "import lockgate.actors.a\n",
        },
    )

    assert cycles(root) == ["lockgate.actors.a -> lockgate.actors.b -> lockgate.actors.a"]


def test_a_tree_without_circles_passes(tmp_path: Path) -> None:
    root = write_tree(
        tmp_path,
        {
            "actors/__init__.py": "from lockgate.actors.actor import Actor\n",
            "actors/actor.py": "import anyio\n",
            "engine/__init__.py": "from lockgate.engine.state import ValueState\n",
            "engine/state/__init__.py": "from lockgate.engine.state.value import ValueState\n",
            "engine/state/value.py": "from lockgate.actors import Actor\n",
            "connectors/memory.py": "from lockgate.engine import ValueState\n",
        },
    )

    assert cycles(root) == []


def test_a_circle_through_a_function_body_import_is_found_when_deferred_imports_count(
    tmp_path: Path,
) -> None:
    root = write_tree(
        tmp_path,
        {
            "engine/state/a.py": "import lockgate.engine.state.b\n",
            "engine/state/b.py": "def f():\n    import lockgate.engine.state.a\n",
        },
    )

    assert cycles(root, any_but_api_naming_itself) == [
        "lockgate.engine.state.a -> lockgate.engine.state.b -> lockgate.engine.state.a"
    ]


def test_a_circle_through_type_checking_is_found_when_deferred_imports_count(
    tmp_path: Path,
) -> None:
    root = write_tree(
        tmp_path,
        {
            "actors/actor.py": "if TYPE_CHECKING:\n    from lockgate.actors.ref import ActorRef\n",
            "actors/ref.py": "from lockgate.actors.actor import StopActor\n",
        },
    )

    assert cycles(root, any_but_api_naming_itself) == [
        "lockgate.actors.actor -> lockgate.actors.ref -> lockgate.actors.actor"
    ]


def test_the_api_family_may_name_itself_under_type_checking(tmp_path: Path) -> None:
    root = write_tree(
        tmp_path,
        {
            "engine/api/stream.py": "from lockgate.engine.api.connected import Connected\n",
            "engine/api/connected.py": (
                "if TYPE_CHECKING:\n    from lockgate.engine.api.stream import DataStream\n"
            ),
        },
    )

    assert cycles(root, any_but_api_naming_itself) == []
