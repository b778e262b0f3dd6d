"""The import contract: arrows go one way, core <- store <- tui <- cli, and core has no circle.

Every module under src/rankgate is parsed (not imported) and each `import rankgate...` and
`from rankgate... import ...` makes an arrow, at module level or inside a function alike.
`from package import name` points at the submodule when `name` is one, else at the package.
"""

from __future__ import annotations

import pytest

import ast
import functools
from pathlib import Path

import rankgate

SRC = Path(rankgate.__file__).parent

# Layers, lowest first: a module may import its own layer and those below it, never one above.
# Matched by package prefix; every top-level module that is none of core/store/tui is the CLI's.
CORE, STORE, TUI = "rankgate.core", "rankgate.store", "rankgate.tui"

def module_names() -> dict[str, Path]:
    out = {}
    for path in sorted(SRC.rglob("*.py")):
        parts = ["rankgate", *path.relative_to(SRC).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _resolve(node: ast.ImportFrom, module: str, is_package: bool) -> str | None:
    if not node.level:
        return node.module
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[:len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """Every name one module imports (module level and inside functions), submodules resolved."""
    targets: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            targets.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(node, name, path.name == "__init__.py")
            if base is None:
                continue
            for a in node.names:
                sub = f"{base}.{a.name}"
                targets.add(sub if sub in modules else base)
    return targets


@functools.cache
def _all_imports() -> dict[str, frozenset[str]]:
    """module -> every name it imports; src is parsed once per test session (the tests only read it)."""
    modules = module_names()
    return {name: frozenset(_imports(name, path, modules)) for name, path in modules.items()}


def import_graph() -> dict[str, set[str]]:
    """module -> the rankgate modules it imports."""
    modules = _all_imports()
    return {name: {t for t in targets if t in modules and t != name} for name, targets in modules.items()}


def outside_imports() -> dict[str, set[str]]:
    """module -> the top-level packages it imports from outside rankgate."""
    return {name: {t.split(".")[0] for t in targets if not t.startswith("rankgate")}
            for name, targets in _all_imports().items()}


def layer(module: str) -> int:
    for i, prefix in enumerate((CORE, STORE, TUI)):
        if module == prefix or module.startswith(prefix + "."):
            return i
    return 0 if module == "rankgate" else 3  # the package's own API (lazy names from core); else the CLI


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


@pytest.mark.slow
def test_the_graph_sees_imports_at_every_level():
    graph = import_graph()
    assert "rankgate.core.engine" in graph["rankgate.core.gate"]  # module level
    assert "rankgate.core.binding" in graph["rankgate.core.gate"]  # inside a function
    assert "rankgate.core.formats.trec" in graph["rankgate.core.formats"]  # a package's own module


@pytest.mark.slow
def test_core_has_no_import_circle():
    graph = import_graph()
    core = {m: {t for t in ts if layer(t) == 0} for m, ts in graph.items() if layer(m) == 0}
    assert cycles(core) == []


@pytest.mark.slow
def test_no_arrow_points_up():
    """core imports nothing of store/tui/cli; store nothing of tui/cli; tui nothing of the cli."""
    graph = import_graph()
    up = sorted((m, t) for m, ts in graph.items() for t in ts if layer(t) > layer(m))
    assert up == []


@pytest.mark.slow
def test_core_is_headless_and_the_store_draws_nothing():
    """core never imports the app's or the store's libraries; the store never imports the app's."""
    found = outside_imports()
    assert "numpy" in found["rankgate.core.engine"]  # the check sees third-party imports
    for module, names in found.items():
        if layer(module) == 0:
            assert not names & {"textual", "rich", "tinydb", "platformdirs"}, module
        elif layer(module) == 1:
            assert not names & {"textual", "rich"}, module


def with_packages(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The graph as Python runs it: importing `a.b.c` runs `a/b/__init__.py` first, so an import of a
    submodule is an arrow to its packages too, except from inside that package (already being imported)."""
    modules = set(graph)
    out = {m: set(ts) for m, ts in graph.items()}
    for m, ts in graph.items():
        for t in ts:
            parts = t.split(".")
            for i in range(2, len(parts)):
                package = ".".join(parts[:i])
                if package in modules and package != m and not m.startswith(package + "."):
                    out[m].add(package)
    return out


def test_no_import_circle_anywhere():
    """Not in the core, the store, the app or the CLI: every circle was cut along a seam (cli/labels_open.py,
    tui/web_rules.py, store/sync_record.py)."""
    assert cycles(with_packages(import_graph())) == []


def test_the_check_finds_a_circle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles(with_packages({"p": {"p.x"}, "p.x": {"q.y"}, "q": set(), "q.y": {"p"}})) == [["p", "p.x", "q.y"]]


def test_no_module_below_the_cli_imports_the_package_root():
    """The version comes from core/version.py: core, store and app never import `rankgate` itself."""
    graph = import_graph()
    assert sorted(m for m, ts in graph.items() if layer(m) < 3 and m != "rankgate" and "rankgate" in ts) == []
