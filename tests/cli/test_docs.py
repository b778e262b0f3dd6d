"""rankgate docs: the pages README links, readable offline from the installed package (a wheel too)."""

import subprocess
import sys

import pytest

from rankgate.cli import docs as docs_cli, main
from tests.conftest import ROOT

PAGES = sorted(p.stem for p in (ROOT / "docs").glob("*.md"))


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_without_a_topic_it_lists_every_page_with_its_title(capsys):
    code, out, _ = run(capsys, "docs")
    rows = [line.split(maxsplit=1) for line in out.splitlines() if line and not line.startswith("rankgate docs")]
    assert code == 0 and [name for name, _ in rows] == PAGES
    titles = dict(rows)
    assert titles["measures"] == "Measures" and titles["review"].startswith("`rankgate review`")


@pytest.mark.parametrize("topic", ["review", "Measures", "ci.md"])
def test_a_topic_prints_its_page(capsys, topic):
    code, out, _ = run(capsys, "docs", topic)
    page = ROOT / "docs" / f"{topic.lower().removesuffix('.md')}.md"
    assert code == 0 and out == page.read_text(encoding="utf-8")


def test_an_unknown_topic_names_the_topics(capsys):
    code, out, err = run(capsys, "docs", "nope")
    assert code == 2 and out == ""
    assert err.strip() == f"error: docs: no topic 'nope' (expected one of {', '.join(PAGES)})"


def test_a_page_reaches_the_terminal_escaped(capsys, monkeypatch, tmp_path):
    (tmp_path / "trap.md").write_text("# Trap\n\tkept\x1b]0;owned\x07 and \u202e\n", encoding="utf-8")
    monkeypatch.setattr(docs_cli, "docs_root", lambda: tmp_path)
    code, out, _ = run(capsys, "docs", "trap")
    assert code == 0 and out == "# Trap\n\tkept\\x1b]0;owned\\x07 and \\u202e\n"


@pytest.mark.slow
def test_the_wheel_carries_the_docs_and_the_command_reads_them(tmp_path, built_wheel):
    """The wheel (built once per run, tests/wheel.py), unpacked: `rankgate docs` runs from it alone."""
    shipped = sorted(n.removeprefix("rankgate/docs/").removesuffix(".md") for n in built_wheel.names
                     if n.startswith("rankgate/docs/"))
    assert shipped == PAGES
    where = subprocess.run([sys.executable, "-c", "import rankgate; print(rankgate.__file__)"],
                           env={"PYTHONPATH": str(built_wheel.unpacked), "PATH": "/usr/bin:/bin"},
                           capture_output=True, text=True, cwd=tmp_path)
    assert where.stdout.startswith(str(built_wheel.unpacked)), where
    out = built_wheel.run("docs", "ci", cwd=tmp_path)
    assert out.returncode == 0 and out.stdout == (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    listing = built_wheel.run("docs", cwd=tmp_path)
    assert listing.returncode == 0 and [line.split()[0] for line in listing.stdout.splitlines()[:len(PAGES)]] == PAGES


def test_the_review_page_is_the_users_guide_and_the_apps_inside_is_in_contributing(capsys):
    """F28: `rankgate docs review` printed 940 lines, half of them how the app is built and measured. That
    material is CONTRIBUTING.md's ("Inside the review app"); every anchor the page links is still on it."""
    import re

    code, out, _ = run(capsys, "docs", "review")
    assert code == 0
    for developers in ("## How an edit stays fast", "## Figures", "## Tests", "## Files", "bench_app.py",
                       "tests/tui/", "tui/commands.py", "cache/runs/", "scorecache"):
        assert developers not in out, developers
    assert "## Keys" in out and "## When a file is bad" in out and len(out.splitlines()) < 700
    contributing = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    for moved in ("### How an edit stays fast", "### Figures (`python bench/bench_app.py`)", "### Tests",
                  "### Files", "#### Opening DL19 from raw files", "`test_scorecache.py`"):
        assert moved in contributing, moved

    def anchor(heading: str) -> str:
        return re.sub(r"[^\w\- ]", "", heading.strip("# ").lower()).replace(" ", "-")

    anchors = {anchor(line) for line in out.splitlines() if line.startswith("#")}
    for link in re.findall(r"\]\(#([^)]+)\)", out):
        assert link in anchors, link
