"""--markdown and --junit: read well, name the failures, and escape whatever the IDs hold."""

import json
import re
import xml.etree.ElementTree as ET

from rankgate.cli import main
from rankgate.core.outputs import md, xml_text
from rankgate.core.text import visible
from tests.conftest import SAMPLES, write

OPS = SAMPLES / "ops-handbook"
EVIL_Q = "q|<script>alert(1)</script>\x1b[31m"
EVIL_D = "d]]>&[x](http://e.example)`*_\u202e\nline"


def test_ops_handbook_markdown_and_junit(tmp_path, capsys):
    md_path, xml_path = tmp_path / "gate.md", tmp_path / "gate.xml"
    code = main(["gate", str(OPS), "--policy", str(OPS / "policy.toml"), "--markdown", str(md_path),
                 "--junit", str(xml_path), "--as-of", "2026-06-01"])
    capsys.readouterr()
    assert code == 3
    text = md_path.read_text(encoding="utf-8")
    assert text.startswith("## rankgate gate: ❌ REJECT\n")
    assert "Failed: **must\\_pass\\_queries\\_hit**: no relevant document in the top 5 for q-leaked-key" in text
    for heading in ("### Checks", "### Measures", "### Failed queries", "### Slices", "### Coverage", "### Budgets",
                    "### Binding"):
        assert heading in text
    assert "| q-leaked-key | newly failed, must-pass | — | ir-security-incident-01, netsec-secrets-rotation-02 |" in text
    assert re.search(r"\| critical \| 9 \| 0\.889 → 0\.889 \|", text)
    table_rows = [line for line in text.splitlines() if line.startswith("| ")]
    for line in table_rows:  # every row of a table has as many cells as its header
        assert len(re.findall(r"(?<!\\)\|", line)) >= 3

    root = ET.parse(xml_path).getroot()
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    checks, queries = suites["rankgate.checks"], suites["rankgate.queries"]
    assert checks.get("failures") == "1" and int(checks.get("tests")) == len(list(checks.iter("testcase")))
    failed = [t for t in checks.iter("testcase") if t.find("failure") is not None]
    assert [t.get("name") for t in failed] == ["must_pass_queries_hit"]
    assert "q-leaked-key" in failed[0].find("failure").get("message")
    assert queries.get("tests") == "38" and queries.get("failures") == "1"
    leaked = next(t for t in queries.iter("testcase") if t.get("name") == "q-leaked-key")
    f = leaked.find("failure")
    assert f.get("type") == "newly_failed" and "baseline bm25-plain hits it (first relevant at rank 1)" in f.get("message")
    assert "missing: ir-security-incident-01, netsec-secrets-rotation-02" in f.text


def hostile(tmp_path):
    judg = [{"query": EVIL_Q, "doc": EVIL_D, "grade": 1}, {"query": "q2", "doc": "d2", "grade": 1},
            {"query": "q3", "doc": "d3", "grade": 1}]
    write(tmp_path / "j.jsonl", "".join(json.dumps(j) + "\n" for j in judg))
    base = [{"meta": {"name": "base<&>"}}, {"query": EVIL_Q, "ranking": [EVIL_D, "x"]},
            {"query": "q2", "ranking": ["d2"]}, {"query": "q3", "ranking": ["y"]}]
    cand = [{"meta": {"name": "cand|x"}}, {"query": EVIL_Q, "ranking": ["x", "y"]},
            {"query": "q2", "ranking": ["d2"]}, {"query": "q3", "ranking": ["y"]}]
    for name, rows in (("b", base), ("c", cand)):
        write(tmp_path / f"{name}.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    write(tmp_path / "w.toml", f'[[waivers]]\nquery = "q3"\nowner = "<ana> | \\u001b[1m"\nreason = "]]> & <b>"\n'
                               'expires = 2026-01-01\n')


def test_hostile_ids_are_escaped_everywhere(tmp_path, capsys):
    hostile(tmp_path)
    md_path, xml_path = tmp_path / "g.md", tmp_path / "g.xml"
    code = main(["gate", "--qrels", str(tmp_path / "j.jsonl"), "--runs", str(tmp_path / "b.jsonl"), "--runs",
                 str(tmp_path / "c.jsonl"), "--baseline", "base<&>", "--candidate", "cand|x", "--k", "2",
                 "--short-rankings", "allow", "--must-pass", EVIL_Q, "--policy", str(tmp_path / "w.toml"),
                 "--markdown", str(md_path), "--junit", str(xml_path), "--as-of", "2026-06-01"])
    capsys.readouterr()
    assert code == 3
    text = md_path.read_text(encoding="utf-8")
    for raw in ("<script>", "\x1b", "\u202e", "]]>", "<b>", "<ana>", "[x](http"):
        assert raw not in text
    assert "&lt;script&gt;" in text and "\\\\x1b" in text and "\\\\u202e" in text and "q\\|" in text
    for line in text.splitlines():
        assert "\n" not in line and "\r" not in line
    # the failed-queries table keeps its four columns
    row = next(line for line in text.splitlines() if line.startswith("| q\\|"))
    assert len(re.findall(r"(?<!\\)\|", row)) == 5

    raw_xml = xml_path.read_text(encoding="utf-8")
    assert "\x1b" not in raw_xml and "\u202e" not in raw_xml
    root = ET.fromstring(raw_xml.encode("utf-8"))  # well-formed
    names = [t.get("name") for t in root.iter("testcase")]
    assert visible(EVIL_Q) in names
    evil = next(t for t in root.iter("testcase") if t.get("name") == visible(EVIL_Q))
    assert evil.find("failure") is not None and "must-pass query missed" in evil.find("failure").get("message")
    q3 = next(t for t in root.iter("testcase") if t.get("name") == "q3")
    assert q3.find("skipped") is not None  # both runs miss it: a known failure, not a regression


def test_escapers():
    assert md("a|b") == "a\\|b" and md("<i>") == "&lt;i&gt;" and md("x_y*z") == "x\\_y\\*z"
    assert md("\x1b[1m") == "\\\\x1b\\[1m" and md("a\nb") == "a\\\\x0ab"
    assert visible("ok\u200bzero") == "ok\\u200bzero"
    assert xml_text("a\tb\nc\x00") == "a\tb\nc\\x00"


def test_outputs_to_a_missing_folder_are_one_line_errors(tmp_path, capsys):
    for flag in ("--markdown", "--junit"):
        code = main(["gate", str(OPS), flag, str(tmp_path / "no" / "x")])
        _, err = capsys.readouterr()
        assert code == 2 and "folder does not exist" in err and len(err.strip().splitlines()) == 1
