"""The package's module structure: no import circles, whether the imports run when the module loads, inside a
function (a lazy import hides a circle from Python, not from a reader) or only for the type checker (``if
TYPE_CHECKING:``); ``from package import submodule`` counts as an import of the submodule."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

from tests.fixture_runner import ROOT

PACKAGES = ("scheduling_framework", "plugins_intree")


def _modules() -> dict[str, Path]:
    mods: dict[str, Path] = {}
    for root in PACKAGES:
        for p in (ROOT / root).rglob("*.py"):
            name = ".".join(p.relative_to(ROOT).with_suffix("").parts)
            mods[name.removesuffix(".__init__")] = p
    return mods


class _Imports(ast.NodeVisitor):
    """Every import of a module: at its top, inside functions and classes, and (``types_too``) under ``if
    TYPE_CHECKING:``."""

    def __init__(self, types_too: bool = False, load_time_only: bool = False) -> None:
        self.found: list[tuple[int, str, list[str]]] = []
        self.types_too = types_too
        self.load_time_only = load_time_only

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        if not self.load_time_only:
            self.generic_visit(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        if not self.load_time_only:
            self.generic_visit(node)

    def visit_If(self, node: ast.If) -> None:
        t = node.test
        if not self.types_too and ((isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
                isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING")):
            for n in node.orelse:
                self.visit(n)
            return
        self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        self.found += [(0, a.name, []) for a in node.names]

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        self.found.append((node.level, node.module or "", [a.name for a in node.names]))


def _graph(types_too: bool = False, load_time_only: bool = False) -> dict[str, set[str]]:
    """Module -> the modules it imports. ``load_time_only``: the imports that run when the module loads (not in
    functions, not for the type checker), each also importing the packages above its target that are not above
    the importer (Python runs a package's ``__init__`` before any of its modules): the graph of what loading
    one module first pulls in."""
    mods = _modules()

    def resolve(name: str) -> str:
        while name and name not in mods:
            name = name.rsplit(".", 1)[0] if "." in name else ""
        return name

    edges: dict[str, set[str]] = {m: set() for m in mods}
    for m, path in mods.items():
        visitor = _Imports(types_too, load_time_only)
        visitor.visit(ast.parse(path.read_text(encoding="utf-8")))
        pkg = m if path.name == "__init__.py" else m.rsplit(".", 1)[0]
        for level, module, names in visitor.found:
            if level:
                base = pkg
                for _ in range(level - 1):
                    base = base.rsplit(".", 1)[0]
                module = base + ("." + module if module else "")
            subs = [f"{module}.{n}" for n in names if f"{module}.{n}" in mods]
            for target in (subs if names and len(subs) == len(names) else [module, *subs]):
                r = resolve(target)
                if r and r != m:
                    edges[m].add(r)
                    if load_time_only:
                        parts = r.split(".")
                        for k in range(1, len(parts)):
                            parent = ".".join(parts[:k])
                            if parent in mods and parent != m and not m.startswith(parent + "."):
                                edges[m].add(parent)
    return edges


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 10_000))
    try:
        for v in edges:
            if v not in index:
                visit(v)
    finally:
        sys.setrecursionlimit(old)
    return out


def test_no_import_circles() -> None:
    assert _cycles(_graph()) == []


def test_no_import_circles_through_type_only_imports() -> None:
    """A module that names another's type while that one imports it back (hooks and registry, a sweep and its
    Ray backend, the Simulator and the services built on it) is a circle for a reader: the lower module takes
    what it needs by shape (a Protocol, a type variable) or the higher one holds the link (Simulator over
    SimulatorCore)."""
    assert _cycles(_graph(types_too=True)) == []


def test_loading_any_module_first_meets_no_circle() -> None:
    """What loading a module first pulls in, packages' ``__init__`` included, never comes back to it (it would
    find it half-initialized: the ImportError only one import order shows)."""
    assert _cycles(_graph(load_time_only=True)) == []


def test_function_level_imports_are_seen() -> None:
    """The graph holds an import made inside a function (the structure test would miss a lazy circle otherwise)."""
    assert "scheduling_framework.simulation.capacity" in _graph()["scheduling_framework.simulation.simulator"]
    assert "scheduling_framework.scheduler" in _graph()["scheduling_framework.simulation.core"]  # in _from_cluster


def test_the_ingest_pipeline_reads_in_order() -> None:
    """untrusted → source → notes → jsonstream / yamlstream → model → admission → workloads → overcommit → cluster:
    no stage imports a later one; the reader (cluster) is the one module that puts them together, and the
    package's ``__init__`` holds the read and parse stages only."""
    edges = _graph(types_too=True)
    order = [f"scheduling_framework.ingest.{m}" for m in ("untrusted", "source", "notes", "jsonstream", "yamlstream",
                                                          "model", "admission", "workloads", "overcommit", "cluster")]
    for i, stage in enumerate(order):
        # the package's own names are the read and parse stages': it comes after them
        later = set(order[i + 1:]) | ({"scheduling_framework.ingest"} if i < 5 else set())
        assert not edges[stage] & later, (stage, edges[stage] & later)
    assert not edges["scheduling_framework.ingest"] & set(order[5:])
    ingest = {m for m in edges if m.startswith("scheduling_framework.ingest.")}
    assert ingest == set(order), "a new ingest module: give it its place in the pipeline"
