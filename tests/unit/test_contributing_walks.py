"""CONTRIBUTING.md's walks name real files and names: a walk fails here when what it names moves (#37, item 4)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "rankgate"
TEXT = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
WALKS = TEXT[TEXT.index("## Four common changes"):TEXT.index("## Dependencies and why")]
# `path` or `path::NAME`: a file (or folder, ending in /) that a walk names, and optionally a name defined in it
REF = re.compile(r"`((?:tests|docs|core|store|tui|cli)/[\w/.]*?)(?:::(\w+))?`")


def references() -> list[tuple[str, str | None]]:
    return [(m.group(1), m.group(2)) for m in REF.finditer(WALKS)]


def _where(path: str) -> Path:
    return ROOT / path if path.split("/")[0] in ("tests", "docs") else SRC / path


def test_there_are_four_walks_each_naming_files():
    walks = re.split(r"^### Walk \d: ", WALKS, flags=re.M)[1:]
    assert [w.splitlines()[0] for w in walks] == ["a measure", "a pane of the app", "a labels subcommand",
                                                   "an input format"]
    for walk in walks:
        assert len(REF.findall(walk)) >= 4, walk[:60]


def test_every_named_file_exists():
    missing = [path for path, _ in references() if not _where(path).exists()]
    assert missing == []


def test_every_named_name_is_defined_in_its_file():
    absent = []
    for path, name in references():
        if name is None:
            continue
        source = _where(path).read_text(encoding="utf-8")
        if not re.search(rf"^\s*(?:def|class|async def)\s+{name}\b|^\s*{name}\s*[:=]|^\s*{name} = ", source, re.M):
            absent.append(f"{path}::{name}")
    assert absent == []


def test_the_check_notices_a_moved_file(tmp_path):
    """The test above is not vacuous: a name that is not there is reported."""
    assert not (SRC / "core/no_such_module.py").exists()
    assert REF.search("`core/measures.py::FAMILIES`").groups() == ("core/measures.py", "FAMILIES")
