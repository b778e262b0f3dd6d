"""No class over 600 lines and no function over 80 in src (#37, item 1).

Sizes are measured with an ast walk: from a definition's first line (its `def`/`class`, decorators not
counted) to its last line. GRANDFATHERED holds the offenders not split yet, with their size today; it may only
shrink: an entry is removed when its class or function is split, and a listed one may not grow.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "rankgate"
MAX_CLASS = 600
MAX_FUNCTION = 80

# "path:Qualified.name": lines today. Remove an entry when you split what it names.
GRANDFATHERED: dict[str, int] = {}  # every one split (#37): keep it empty


def sizes(path: Path) -> dict[str, tuple[str, int]]:
    """Every class and function in one file: qualified name -> (kind, lines)."""
    found: dict[str, tuple[str, int]] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{prefix}{child.name}"
                kind = "class" if isinstance(child, ast.ClassDef) else "function"
                found[name] = (kind, child.end_lineno - child.lineno + 1)
                visit(child, f"{name}.")
            else:
                visit(child, prefix)

    visit(ast.parse(path.read_text(encoding="utf-8"), str(path)), "")
    return found


def measure(src: Path = SRC) -> dict[str, tuple[str, int]]:
    out = {}
    for path in sorted(src.rglob("*.py")):
        rel = path.relative_to(src).as_posix()
        for name, size in sizes(path).items():
            out[f"{rel}:{name}"] = size
    return out


@functools.cache
def offenders(src: Path = SRC) -> dict[str, int]:
    """Measured once per test session and folder (the tests only read it)."""
    return {key: lines for key, (kind, lines) in measure(src).items()
            if lines > (MAX_CLASS if kind == "class" else MAX_FUNCTION)}


def test_no_class_or_function_over_the_limit_unless_grandfathered():
    new = {key: lines for key, lines in offenders().items() if key not in GRANDFATHERED}
    assert new == {}, f"split these (limits: class {MAX_CLASS}, function {MAX_FUNCTION} lines)"


def test_grandfathered_ones_do_not_grow():
    found = offenders()
    grown = {key: (found[key], was) for key, was in GRANDFATHERED.items() if found.get(key, 0) > was}
    assert grown == {}


def test_grandfathered_list_shrinks_when_something_is_split():
    """An entry that is within the limit now (or gone) must come off the list."""
    stale = sorted(set(GRANDFATHERED) - set(offenders()))
    assert stale == []


def test_the_measure_counts_lines_of_a_definition(tmp_path):
    (tmp_path / "m.py").write_text("class A:\n    def f(self):\n        x = 1\n        return x\n", encoding="utf-8")
    assert measure(tmp_path) == {"m.py:A": ("class", 4), "m.py:A.f": ("function", 3)}
