"""The layers of docs/explanation/architecture.md held against the code: every module of the suite is parsed
with ``ast`` (none is imported), and an import the documented table forbids, or a circle of
imports between modules, fails. The checker is tried on small made-up graphs first, so that a
clean result means the code is clean, not that the checker sees nothing."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ARCHITECTURE = ROOT / "docs" / "explanation" / "architecture.md"
# Folders outside the layers: they may import any layer, and no layer may import them.
OUTSIDE = ("tests", "benchmarks", "tools")

Graph = Mapping[str, Iterable[str]]


class Layer:
    """What one layer may import: whole layers, and single modules (with their submodules) of others."""

    def __init__(self, layers: Iterable[str] = (), modules: Iterable[str] = ()) -> None:
        self.layers, self.modules = set(layers), tuple(modules)

    def allows(self, target: str) -> bool:
        return target.split(".")[0] in self.layers or any(
            target == module or target.startswith(module + ".") for module in self.modules)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Layer) and (self.layers, set(self.modules)) == (other.layers, set(other.modules))

    def __repr__(self) -> str:
        return f"Layer({sorted(self.layers)}, {sorted(self.modules)})"


def documented_layers(text: str, header: str = "| layer | imports from |") -> dict[str, Layer]:
    """The table under ``header``: per layer folder, the folders it may import (written `name/`)
    and single modules of other folders (written `package.module`). A row may be one module
    (written `name.py`): a room of its own, which other rows name the same way."""
    def layer(name: str) -> str:
        return name.strip("`/").removesuffix(".py")

    table = text.split(header, 1)[1].split("\n\n", 1)[0]
    layers = {}
    for row in table.splitlines()[2:]:
        folder, allowed = (cell.strip() for cell in row.strip("|").split("|"))
        names = re.findall(r"`([^`]+)`", allowed)
        whole = [n for n in names if n.endswith(("/", ".py"))]
        layers[layer(folder)] = Layer(map(layer, whole), [n for n in names if n not in whole])
    return layers


def module_files(root: Path, folders: Iterable[str]) -> dict[str, Path]:
    """Every module below ``folders``, by its dotted name (a package by its folder's)."""
    found = {}
    for folder in folders:
        for path in sorted((root / folder).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _import_nodes(nodes: Iterable[ast.AST]) -> Iterable[ast.Import | ast.ImportFrom]:
    """Every import statement among ``nodes`` and within them, in functions and under ``if
    TYPE_CHECKING:`` too: a type-only import is a dependency a reader follows like any other."""
    for node in nodes:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        else:
            yield from _import_nodes(ast.iter_child_nodes(node))


def imported(name: str, path: Path, known: Iterable[str], first_party: Iterable[str]) -> set[str]:
    """The first-party modules the module ``name`` (at ``path``) imports: each named by the
    longest of ``known`` it falls under, or as written where it falls under none."""
    known, first_party = set(known), set(first_party)
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    targets = set()
    for node in _import_nodes(ast.parse(path.read_text(encoding="utf-8")).body):
        if isinstance(node, ast.Import):
            written = [alias.name for alias in node.names]
        else:
            base = ".".join([*package[:len(package) - node.level + 1], *([node.module] if node.module else [])]) \
                if node.level else node.module or ""
            written = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
        for target in written:
            found = next((t for t in _prefixes(target) if t in known), target)
            if found.split(".")[0] in first_party and found != name:
                targets.add(found)
    return targets


def _prefixes(dotted: str) -> list[str]:
    parts = dotted.split(".")
    return [".".join(parts[:end]) for end in range(len(parts), 0, -1)]


def import_graph(root: Path, folders: Iterable[str]) -> dict[str, set[str]]:
    """Module -> the first-party modules it imports, for every module below ``folders``."""
    files = module_files(root, folders)
    first_party = {*folders, *OUTSIDE}
    return {name: imported(name, path, files, first_party) for name, path in files.items()}


def forbidden(graph: Graph, layers: Mapping[str, Layer]) -> list[str]:
    """Each import that crosses into a layer (or a folder outside the layers) its own layer may
    not import, as "importer -> imported"."""
    return [f"{name} -> {target}" for name, targets in sorted(graph.items()) for target in sorted(targets)
            if target.split(".")[0] != name.split(".")[0] and not layers[name.split(".")[0]].allows(target)]


def forbidden_within(graph: Graph, package: str, rooms: Mapping[str, Layer]) -> list[str]:
    """Each import between two rooms of ``package`` (its sub-packages) that the importer's row
    of ``rooms`` does not name, as "importer -> imported"; a module of ``package`` outside every
    room is one too ("... -> outside the rooms")."""
    def room(module: str) -> str | None:
        parts = module.split(".")
        return parts[1] if parts[0] == package and len(parts) > 1 else None

    found = []
    for name, targets in sorted(graph.items()):
        if room(name) is None:
            continue
        if room(name) not in rooms:
            found.append(f"{name} -> outside the rooms")
            continue
        found += [f"{name} -> {target}" for target in sorted(targets)
                  if room(target) not in (None, room(name)) and room(target) not in rooms[room(name)].layers]
    return found


def cycles(graph: Graph) -> list[list[str]]:
    """The circles of imports: each set of two or more modules that import one another, directly
    or through others (Tarjan's strongly connected components), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while not component or component[-1] != node:
                component.append(stack.pop())
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


LAYERS = documented_layers(ARCHITECTURE.read_text(encoding="utf-8"))
ROOMS = documented_layers(ARCHITECTURE.read_text(encoding="utf-8"), "| engine layer | imports from |")
REPORT_ROOMS = documented_layers(ARCHITECTURE.read_text(encoding="utf-8"), "| reports layer | imports from |")
GRAPH = import_graph(ROOT, LAYERS)


# --- the checker, on made-up graphs ----------------------------------------------------------

def test_the_checker_finds_an_import_against_the_layers() -> None:
    layers = {"low": Layer(), "high": Layer(["low"]), "side": Layer([], ["high.registry"])}
    graph = {"high.run": {"low.words", "high.judge"}, "low.words": {"high.run"},
             "side.page": {"high.registry.entry", "high.run"}, "high.judge": {"tests.helpers"}}
    assert forbidden(graph, layers) == ["high.judge -> tests.helpers", "low.words -> high.run",
                                        "side.page -> high.run"]


def test_the_checker_finds_every_circle_and_only_circles() -> None:
    graph = {"e.worker": {"e.loader"}, "e.loader": {"e.adapters"}, "e.adapters": {"e.worker", "e.forms"},
             "e.forms": set(), "e.options": {"e.plan"}, "e.plan": {"e.options"}, "e.run": {"e.plan", "e.forms"}}
    assert cycles(graph) == [["e.adapters", "e.loader", "e.worker"], ["e.options", "e.plan"]]
    assert cycles({"e.run": {"e.plan"}, "e.plan": {"e.forms"}, "e.forms": set()}) == []


def test_the_checker_finds_an_import_into_a_higher_room() -> None:
    """A planted upward import inside the engine: the worker (asking) reading the options (config)."""
    rooms = {"contract": Layer(), "asking": Layer(["contract"]), "config": Layer(["contract", "asking"])}
    graph = {"engine.asking.worker": {"engine.contract.forms", "engine.config.options", "results.outcomes"},
             "engine.config.options": {"engine.asking.worker"}, "engine.loose": set(), "engine": set()}
    assert forbidden_within(graph, "engine", rooms) == ["engine.asking.worker -> engine.config.options",
                                                         "engine.loose -> outside the rooms"]


def test_a_module_row_is_a_room_of_one_module() -> None:
    """The reports' front doors are single modules beside the rooms: `pytest_plugin.py` is the room
    ``pytest_plugin``, and a door that imports a room its row does not name is found."""
    text = ("| reports layer | imports from |\n|---|---|\n| `document/` | nothing of the reports |\n"
            "| `pages/` | `document/` |\n| `pytest_plugin.py` | `document/`, `pages/` |\n"
            "| `__main__.py` | `pages/`, `pytest_plugin.py` |\n\nAfter the table.")
    rooms = documented_layers(text, "| reports layer | imports from |")
    assert rooms["pytest_plugin"] == Layer(["document", "pages"])
    assert rooms["__main__"] == Layer(["pages", "pytest_plugin"])
    graph = {"reports.__main__": {"reports.pytest_plugin", "reports.document.parts"},
             "reports.pytest_plugin": {"reports.pages.render"}, "reports.pages.render": {"reports.pytest_plugin"}}
    assert forbidden_within(graph, "reports", rooms) == ["reports.__main__ -> reports.document.parts",
                                                         "reports.pages.render -> reports.pytest_plugin"]


def test_imports_are_read_from_the_source_as_python_resolves_them(tmp_path: Path) -> None:
    (tmp_path / "engine" / "adapters").mkdir(parents=True)
    (tmp_path / "results").mkdir()
    for name in ("__init__", "worker", "forms", "options"):
        (tmp_path / "engine" / f"{name}.py").write_text("")
    (tmp_path / "engine" / "adapters" / "__init__.py").write_text("from .compiled import Answer\n")
    (tmp_path / "engine" / "adapters" / "compiled.py").write_text(
        "from typing import TYPE_CHECKING\nimport numpy\nfrom engine import forms\nfrom .. import worker\n"
        "if TYPE_CHECKING:\n    from engine.options import Settings\nelse:\n    import results.outcomes\n"
        "def late():\n    from engine.worker import call\n")
    graph = import_graph(tmp_path, ["engine", "results"])
    assert graph["engine.adapters"] == {"engine.adapters.compiled"}
    assert graph["engine.adapters.compiled"] == {"engine.forms", "engine.worker", "engine.options", "results.outcomes"}


def test_the_table_of_layers_is_read_from_the_docs() -> None:
    text = ("| layer | imports from |\n|---|---|\n| `spec/` | nothing of the suite |\n"
            "| `reports/` | `spec/`, and of the engine only `engine.runtimes` |\n\nAfter the table.")
    assert documented_layers(text) == {"spec": Layer(), "reports": Layer(["spec"], ["engine.runtimes"])}


# --- the suite itself --------------------------------------------------------------------------

def test_the_docs_name_every_layer_once_and_in_one_direction() -> None:
    assert set(LAYERS) == {"spec", "generators", "results", "engine", "suites", "reports", "zoo"}
    drawn = {name: {target for target in layer.layers | {m.split(".")[0] for m in layer.modules}}
             for name, layer in LAYERS.items()}
    assert cycles(drawn) == []
    assert all(target in LAYERS for targets in drawn.values() for target in targets)


def test_every_module_imports_only_what_its_layer_may() -> None:
    assert len(GRAPH) > 100  # the whole suite was read
    assert forbidden(GRAPH, LAYERS) == []


def test_every_engine_module_lives_in_a_room_and_imports_only_what_its_room_may() -> None:
    assert set(ROOMS) == {"contract", "runtimes", "adapters", "asking", "config", "judging"}
    assert forbidden_within(GRAPH, "engine", ROOMS) == []
    drawn = {name: set(room.layers) for name, room in ROOMS.items()}
    assert cycles(drawn) == [] and all(t in ROOMS for targets in drawn.values() for t in targets)


def test_every_reports_module_lives_in_a_room_and_imports_only_what_its_room_may() -> None:
    """The document (raw records to report.json), the pages (report.json to HTML, JUnit and the
    pages across runs), the tools that read and write report folders, and the two front doors (the
    pytest plugin and ``python -m reports``) beside them; the package itself writes a report folder."""
    assert set(REPORT_ROOMS) == {"document", "pages", "folders", "pytest_plugin", "__main__"}
    assert {"reports.document.aggregate", "reports.pages.render", "reports.folders.verify"} <= set(GRAPH)
    assert forbidden_within(GRAPH, "reports", REPORT_ROOMS) == []
    drawn = {name: set(room.layers) for name, room in REPORT_ROOMS.items()}
    assert cycles(drawn) == [] and all(t in REPORT_ROOMS for targets in drawn.values() for t in targets)


def test_no_module_imports_itself_round_a_circle() -> None:
    assert {"engine.asking.worker", "engine.asking.loader", "engine.adapters.compiled"} <= set(GRAPH)
    assert cycles(GRAPH) == []


def test_a_worker_process_starts_without_loading_the_standard() -> None:
    """The worker reads the words of results.outcomes; the spec (with ml_dtypes, over a second to
    import) stays out of it."""
    command = "import sys; import engine.asking.worker; print(sorted(sys.modules))"
    loaded = subprocess.run([sys.executable, "-c", command],
                            cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert "'results.outcomes'" in loaded
    assert "'spec'" not in loaded and "'ml_dtypes'" not in loaded and "'engine.adapters'" not in loaded


def test_the_engine_finds_the_checkout_from_its_rooms() -> None:
    """A module one folder deeper than the engine's top: what it calls the checkout is the checkout."""
    from engine.asking import launch

    assert Path(launch.ROOT) == ROOT
