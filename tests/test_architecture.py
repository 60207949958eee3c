"""The house's floors (issue 22).

- Rooms by concern: `app.understanding` (reading a question against the data) imports nothing of
  the harness (`app.agent`), the built-in analyst (`app.analyst`) or the database; the harness
  does not import the analyst; the analyst imports only the understanding, the model interface
  and the analysis tools' registry; at most two harness modules touch the database (the recorder
  and the store); the app outside the harness imports it through its public face.
- No import circle in any package, counting imports deferred into functions (a deferred import
  hides a circle from Python, not from the reader) and imports under `if TYPE_CHECKING:` (a type
  knot is still a knot for whoever reads or moves the code).
- No function-level import of the project's own code in the three rooms unless hoisting it would
  make a circle.

Each rule is checked on the real tree, and each check is also run on a small tree that breaks it
(the tests named `..._fails_on_...`), so a check that can no longer fail is noticed.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
TOPS = ("app", "analysis_tools", "sandbox")
ROOMS = ("app.agent", "app.understanding", "app.analyst")


def _inside(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def module_files(root: Path = REPO) -> dict[str, Path]:
    return {
        ".".join(p.relative_to(root).with_suffix("").parts).removesuffix(".__init__"): p
        for top in TOPS
        if (root / top).is_dir()
        for p in (root / top).rglob("*.py")
    }


def _targets(name: str, inner: ast.AST, known: set[str]) -> set[str]:
    """The modules of the repository an import statement names (a name imported from a package
    that is itself a module counts as that module)."""
    if isinstance(inner, ast.ImportFrom) and inner.module is not None:
        base = inner.module if inner.level == 0 else ".".join(name.split(".")[: -inner.level] + [inner.module])
        return {f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in inner.names}
    if isinstance(inner, ast.Import):
        return {a.name for a in inner.names}
    return set()


def module_imports(
    package: str, type_checking: bool = True, root: Path = REPO, external: tuple[str, ...] = ()
) -> dict[str, set[str]]:
    """module of `package` -> the modules of the repository it imports (top level, in functions, and
    with `type_checking` under `if TYPE_CHECKING:` too). `external` names outside packages to keep
    as edges (e.g. "sqlalchemy")."""
    files = module_files(root)
    known = set(files)
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        if not _inside(name, package):
            continue
        edges: set[str] = set()
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if not type_checking and isinstance(node, ast.If) and "TYPE_CHECKING" in ast.dump(node.test):
                continue
            for inner in ast.walk(node):
                edges |= _targets(name, inner, known)
        graph[name] = {e for e in edges if (e in known and e != name) or any(_inside(e, x) for x in external)}
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


def package_circles(package: str, root: Path = REPO) -> list[list[str]]:
    graph = module_imports(package, root=root)
    return circles({m: {e for e in edges if e in graph} for m, edges in graph.items()})


def upward_imports(lower: str, higher: str, root: Path = REPO, external: tuple[str, ...] = ()) -> dict[str, list[str]]:
    """module of `lower` -> the modules of `higher` it imports (TYPE_CHECKING imports included)."""
    found = {
        module: sorted(e for e in edges if _inside(e, higher))
        for module, edges in module_imports(lower, root=root, external=external).items()
    }
    return {m: e for m, e in found.items() if e}


def imports_outside(package: str, allowed: tuple[str, ...], root: Path = REPO) -> dict[str, list[str]]:
    """module of `package` -> the app modules it imports that are neither in `package` nor allowed."""
    found = {
        module: sorted(
            e
            for e in edges
            if _inside(e, "app") and not _inside(e, package) and not any(_inside(e, a) for a in allowed)
        )
        for module, edges in module_imports(package, root=root).items()
    }
    return {m: e for m, e in found.items() if e}


def database_modules(package: str, root: Path = REPO) -> list[str]:
    """The modules of `package` that import the database layer (app.db or SQLAlchemy), types included."""
    graph = module_imports(package, root=root, external=("sqlalchemy",))
    return sorted(
        m for m, edges in graph.items() if any(_inside(e, "app.db") or _inside(e, "sqlalchemy") for e in edges)
    )


def deferred_imports_without_circle(package: str, root: Path = REPO) -> list[str]:
    """`module:line target` for each import of the project's own code inside a function of `package`
    that could stand at the top: the target does not (transitively) import the module back."""
    files = module_files(root)
    known = set(files)
    runtime = _all_runtime(root)

    def reaches(start: str, goal: str) -> bool:
        seen, todo = set(), [start]
        while todo:
            m = todo.pop()
            if m == goal:
                return True
            if m in seen:
                continue
            seen.add(m)
            todo.extend(runtime.get(m, ()))
            todo.extend(p for p in _parents(m) if p in runtime)  # importing a.b runs a/__init__ first
        return False

    found = []
    for name, path in files.items():
        if not _inside(name, package):
            continue
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            for inner in ast.walk(node):
                if isinstance(inner, (ast.Import, ast.ImportFrom)):
                    for target in _targets(name, inner, known):
                        if target in known and not reaches(target, name):
                            found.append(f"{name}:{inner.lineno} {target}")
    return found


def _parents(module: str) -> list[str]:
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def _all_runtime(root: Path) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for top in TOPS:
        graph |= module_imports(top, type_checking=False, root=root)
    return graph


# --- the floors, on the real tree --------------------------------------------------------------
@pytest.mark.parametrize(
    "package",
    [
        "app",
        "app.agent",
        "app.understanding",
        "app.analyst",
        "app.db",
        "app.ingest",
        "app.reports",
        "app.evaluation",
        "app.web",
        "analysis_tools",
        "sandbox",
    ],
)
def test_no_import_circle(package):
    assert package_circles(package) == []


@pytest.mark.parametrize(
    "lower, higher",
    [
        ("analysis_tools", "app.agent"),
        ("analysis_tools", "app.analyst"),
        ("analysis_tools", "app.understanding"),
        ("analysis_tools", "app.web"),
        ("sandbox", "app"),
        ("app.understanding", "app.agent"),
        ("app.understanding", "app.analyst"),
        ("app.understanding", "app.db"),
        ("app.agent", "app.analyst"),
        ("app.agent", "app.web"),
        ("app.analyst", "app.web"),
        ("app.ingest", "app.agent"),
        ("app.ingest", "app.analyst"),
    ],
)
def test_no_import_from_a_lower_floor_up(lower, higher):
    assert upward_imports(lower, higher) == {}


def test_the_understanding_touches_no_database():
    assert upward_imports("app.understanding", "sqlalchemy", external=("sqlalchemy",)) == {}


def test_the_analyst_imports_only_the_understanding_the_model_interface_and_the_tools():
    """analysis_tools is outside `app`, so allowed by construction; `app.agent.model.interface` is
    the model interface (the ChatModel protocol and its reply types); nothing else of the app."""
    assert imports_outside("app.analyst", ("app.understanding", "app.agent.model.interface")) == {}


def test_at_most_two_harness_modules_touch_the_database():
    assert database_modules("app.agent") in (
        ["app.agent.recorder", "app.agent.store"],
        ["app.agent.recorder"],
        ["app.agent.store"],
    )


def test_the_app_uses_the_harness_through_its_public_face():
    """Outside the rooms (app/runs.py, app/web, the CLI, the evaluation), the harness is imported from
    `app.agent` itself, the analyst from `app.analyst`, the reading from `app.understanding`."""
    outside = {m: edges for m, edges in module_imports("app").items() if not any(_inside(m, room) for room in ROOMS)}
    deep = {
        m: sorted(e for e in edges if any(_inside(e, room) and e != room for room in ROOMS))
        for m, edges in outside.items()
    }
    assert {m: e for m, e in deep.items() if e} == {}


@pytest.mark.parametrize("package", ROOMS)
def test_no_deferred_import_that_could_stand_at_the_top(package):
    assert deferred_imports_without_circle(package) == []


# --- each check fails on a tree that breaks it --------------------------------------------------
def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    for rel in list(files):
        for parent in Path(rel).parents:
            if str(parent) != "." and not (tmp_path / parent / "__init__.py").exists():
                (tmp_path / parent / "__init__.py").write_text("", encoding="utf-8")
    return tmp_path


def test_the_circle_check_fails_on_a_type_only_knot(tmp_path):
    root = _tree(
        tmp_path,
        {
            "app/agent/turn.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from app.agent.loop import X\n",
            "app/agent/loop.py": "from app.agent.turn import Turn\n",
        },
    )
    assert package_circles("app.agent", root=root) == [["app.agent.loop", "app.agent.turn"]]


def test_the_floor_check_fails_when_the_understanding_imports_the_harness(tmp_path):
    root = _tree(
        tmp_path,
        {
            "app/agent/loop.py": "",
            "app/understanding/words.py": "def f():\n    from app.agent.loop import run_turn\n",
        },
    )
    assert upward_imports("app.understanding", "app.agent", root=root) == {
        "app.understanding.words": ["app.agent.loop"]
    }


def test_the_analyst_check_fails_on_a_harness_import(tmp_path):
    root = _tree(
        tmp_path,
        {
            "app/agent/model/interface.py": "",
            "app/agent/policy/clarify.py": "",
            "app/understanding/words.py": "",
            "app/analyst/plan.py": "from app.agent.model.interface import ChatModel\nfrom app.understanding.words import stem\n"
            "from app.agent.policy.clarify import ASK\n",
        },
    )
    assert imports_outside("app.analyst", ("app.understanding", "app.agent.model.interface"), root=root) == {
        "app.analyst.plan": ["app.agent.policy.clarify"]
    }


def test_the_database_check_counts_type_only_imports(tmp_path):
    root = _tree(
        tmp_path,
        {
            "app/db/models.py": "",
            "app/agent/recorder.py": "from app.db.models import Event\n",
            "app/agent/store.py": "import sqlalchemy\n",
            "app/agent/tools/tasks.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from app.db.models import Task\n",
        },
    )
    assert database_modules("app.agent", root=root) == [
        "app.agent.recorder",
        "app.agent.store",
        "app.agent.tools.tasks",
    ]


def test_the_deferred_import_check_keeps_only_what_breaks_a_circle(tmp_path):
    root = _tree(
        tmp_path,
        {
            "app/agent/a.py": "import app.agent.b\ndef f():\n    from app.agent.c import x\n",
            "app/agent/b.py": "def g():\n    from app.agent.a import f\n",
            "app/agent/c.py": "x = 1\n",
        },
    )
    assert deferred_imports_without_circle("app.agent", root=root) == ["app.agent.a:3 app.agent.c"]
