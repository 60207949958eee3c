"""The house's floors: no import circle inside a package, counting imports deferred into functions
(a deferred import hides a circle from Python, not from the reader), and no import from a lower
floor up to a higher one. Imports under `if TYPE_CHECKING:` are types only and do not count."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def module_imports(package: str) -> dict[str, set[str]]:
    """module of `package` -> the modules of the repository it imports at run time (top level or
    in functions)."""
    files = {
        ".".join(p.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__"): p
        for top in ("app", "analysis_tools", "sandbox")
        for p in (REPO / top).rglob("*.py")
    }
    files = {name: path for name, path in files.items() if name == package or name.startswith(package + ".")} | {
        name: None for name in files if not (name == package or name.startswith(package + "."))
    }
    known = set(files)
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        if path is None:  # another package: a possible target, not scanned
            continue
        edges: set[str] = set()
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.dump(node.test):
                continue
            for inner in ast.walk(node):
                if isinstance(inner, ast.ImportFrom) and inner.module is not None:
                    base = (
                        inner.module if inner.level == 0 else ".".join(name.split(".")[: -inner.level] + [inner.module])
                    )
                    edges |= {f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in inner.names}
                elif isinstance(inner, ast.Import):
                    edges |= {a.name for a in inner.names}
        graph[name] = {e for e in edges if e in known and e != name}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    return found


@pytest.mark.parametrize(
    "package",
    ["app.agent", "app.db", "app.ingest", "app.reports", "app.evaluation", "app.web", "analysis_tools", "sandbox"],
)
def test_no_import_circle(package):
    graph = module_imports(package)
    inside = {m: {e for e in edges if e in graph} for m, edges in graph.items()}
    assert circles(inside) == []


@pytest.mark.parametrize(
    "lower, higher",
    [
        ("analysis_tools", "app.agent"),
        ("analysis_tools", "app.web"),
        ("sandbox", "app"),
        ("app.agent", "app.web"),
        ("app.ingest", "app.agent"),
    ],
)
def test_no_import_from_a_lower_floor_up(lower, higher):
    upward = {
        module: sorted(e for e in edges if e == higher or e.startswith(higher + "."))
        for module, edges in module_imports(lower).items()
    }
    assert {m: e for m, e in upward.items() if e} == {}
