"""The faces (cli/, tui/) use the Workspace through its public names: a private one (`ws._name`) is the
store's own and may change under them."""

from __future__ import annotations

import pytest

import ast
from pathlib import Path

import rankgate
from rankgate.store.workspace import Workspace

SRC = Path(rankgate.__file__).parent


@pytest.mark.slow
def test_the_cli_and_the_app_use_no_private_name_of_the_workspace():
    private = {n for n in dir(Workspace) if n.startswith("_") and not n.startswith("__")}
    found = []
    for face in ("cli", "tui"):
        for path in sorted((SRC / face).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if (isinstance(node, ast.Attribute) and node.attr in private
                        and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))):
                    found.append(f"{path.relative_to(SRC)}:{node.lineno} {node.attr}")
    assert found == []
