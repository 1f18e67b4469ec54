"""The package's module structure: no import circles (imports under ``if TYPE_CHECKING:`` are types only and do
not count; ``from package import submodule`` counts as an import of the submodule)."""

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
    def __init__(self) -> None:
        self.found: list[tuple[int, str, list[str]]] = []

    def visit_If(self, node: ast.If) -> None:
        t = node.test
        if (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
                isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING"):
            for n in node.orelse:
                self.visit(n)
            return
        self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        self.found += [(0, a.name, []) for a in node.names]

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        self.found.append((node.level, node.module or "", [a.name for a in node.names]))


def _graph() -> dict[str, set[str]]:
    mods = _modules()

    def resolve(name: str) -> str:
        while name and name not in mods:
            name = name.rsplit(".", 1)[0] if "." in name else ""
        return name

    edges: dict[str, set[str]] = {m: set() for m in mods}
    for m, path in mods.items():
        visitor = _Imports()
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


def test_the_ingest_pipeline_reads_in_order() -> None:
    """source → jsonstream / yamlstream → model: no stage imports a later one, and the reader (cluster) is the
    only module that puts them together."""
    edges = _graph()
    order = ["scheduling_framework.ingest.source", "scheduling_framework.ingest.jsonstream",
             "scheduling_framework.ingest.yamlstream", "scheduling_framework.ingest.model"]
    for i, stage in enumerate(order):
        later = set(order[i + 1:]) | {"scheduling_framework.cluster", "scheduling_framework.workloads"}
        assert not edges[stage] & later, (stage, edges[stage] & later)
    assert "scheduling_framework.cluster" not in edges["scheduling_framework.workloads"]
