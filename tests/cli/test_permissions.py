"""Permissions: leaks fail the gate (exit 3, named in JSON, Markdown and JUnit), restricted relevant documents
never count as found, and bad ACL input is reported with file:line."""

import json
import xml.etree.ElementTree as ET

import pytest

from rankgate.cli import main
from tests.conftest import SAMPLES, write

# q1 is asked by staff, q2 by someone in staff and sec. Only sec may see s.
JUDGMENTS = [("q1", "a", 2), ("q1", "s", 2), ("q2", "b", 1), ("q2", "s", 1)]
RUNS = {
    "base": {"q1": ["a", "n1"], "q2": ["s", "b"]},  # q2's user may see s: no leak
    "leaky": {"q1": ["s", "a", "n1"], "q2": ["b", "s"]},  # s at rank 1 for q1's user: a leak
    "only_s": {"q1": ["s", "n1"], "q2": ["b"]},  # finds q1's restricted relevant document only
}


def _jsonl(rows) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


def bench(tmp_path, *, acl: str | None = '{"doc": "s", "groups": ["sec"]}\n', groups=True, gate: str = ""):
    write(tmp_path / "judgments.jsonl", _jsonl({"query": q, "doc": d, "grade": g} for q, d, g in JUDGMENTS))
    qs = [{"id": "q1", "text": "one"}, {"id": "q2", "text": "two"}]
    if groups:
        qs[0]["groups"], qs[1]["groups"] = ["staff"], ["staff", "sec"]
    write(tmp_path / "queries.jsonl", _jsonl(qs))
    for name, r in RUNS.items():
        write(tmp_path / f"{name}.jsonl", _jsonl([{"meta": {"name": name}}]
                                                 + [{"query": q, "ranking": d} for q, d in r.items()]))
    manifest = ('name = "p"\nk = 2\nqrels = "judgments.jsonl"\nqueries = "queries.jsonl"\n'
                'runs = ["base.jsonl", "leaky.jsonl", "only_s.jsonl"]\n')
    if acl is not None:
        write(tmp_path / "acl.jsonl", acl)
        manifest += 'acl = "acl.jsonl"\n'
    write(tmp_path / "benchmark.toml", manifest + '[gate]\nshort_rankings = "allow"\nbaseline = "base"\n'
          'candidate = "leaky"\n' + gate)
    return tmp_path


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_leaking_candidate_is_rejected_and_the_leak_is_named_everywhere(tmp_path, capsys):
    b = bench(tmp_path)
    md, junit = tmp_path / "gate.md", tmp_path / "gate.xml"
    code, out, _ = run(capsys, "gate", b, "--markdown", md, "--junit", junit)
    assert code == 3
    r = json.loads(out)
    assert r["checks"]["no_permission_leaks"] is False
    check = next(c for c in r["check_details"] if c["name"] == "no_permission_leaks")
    assert check["leaks"] == [{"query": "q1", "doc": "s", "rank": 1, "allowed_groups": ["sec"],
                               "user_groups": ["staff"]}]
    assert "s at rank 1 for q1" in check["why"]
    assert r["permissions"]["leaks"]["leaky"]["count"] == 1 and r["permissions"]["leaks"]["base"]["count"] == 0
    # every other check passes: the leak alone rejects
    assert [n for n, ok in r["checks"].items() if not ok] == ["no_permission_leaks"]
    text = md.read_text()
    assert "### Permissions" in text and "| candidate leaky | q1 | s | 1 | sec | staff |" in text
    assert "**no\\_permission\\_leaks**" in text
    root = ET.parse(junit).getroot()
    failures = {f.get("type"): f.get("message") for f in root.iter("failure")}
    assert "s at rank 1 for q1" in failures["no_permission_leaks"]
    assert failures["permission_leak"] == "permission leak: s at rank 1 (only sec)"


def test_measures_count_only_what_the_user_may_see(tmp_path, capsys):
    code, out, _ = run(capsys, "score", bench(tmp_path), "--run", "only_s", "--short-rankings", "allow")
    assert code == 0
    rows = {q["query"]: q for q in json.loads(out)["queries"]}
    # s is relevant to q1 but q1's user may not see it: not found, not missing, and no hit
    assert rows["q1"]["found"] == [] and rows["q1"]["missing"] == ["a"]
    assert rows["q1"]["hit_at_k"] is False and rows["q1"]["recall_at_k"] == 0.0
    # q2's user may see s: it stays relevant (b found, s missing)
    assert rows["q2"]["found"] == ["b"] and rows["q2"]["missing"] == ["s"]
    # without the ACL the same run hits q1 with s
    write(tmp_path / "queries.jsonl", '{"id": "q1"}\n{"id": "q2"}\n')
    (tmp_path / "benchmark.toml").write_text((tmp_path / "benchmark.toml").read_text().replace('acl = "acl.jsonl"\n', ""))
    code, out, _ = run(capsys, "score", tmp_path, "--run", "only_s", "--short-rankings", "allow")
    assert {q["query"]: q for q in json.loads(out)["queries"]}["q1"]["found"] == ["s"]


def test_a_restricted_document_above_moves_the_rest_up(tmp_path, capsys):
    code, out, _ = run(capsys, "score", bench(tmp_path), "--run", "leaky", "--short-rankings", "allow")
    q1 = next(q for q in json.loads(out)["queries"] if q["query"] == "q1")
    assert q1["reciprocal_rank"] == 1.0  # (s removed), a, n1: a is first of what the user sees
    assert json.loads(out)["permission_leaks"][0]["doc"] == "s"


def test_the_rule_can_be_turned_off(tmp_path, capsys):
    code, out, _ = run(capsys, "gate", bench(tmp_path, gate="no_permission_leaks = false\n"))
    assert code == 0 and "no_permission_leaks" not in json.loads(out)["checks"]
    assert json.loads(out)["permissions"]["leaks"]["leaky"]["count"] == 1  # still reported


def test_acl_as_a_flag(tmp_path, capsys):
    b = bench(tmp_path, acl=None)
    write(tmp_path / "rules.tsv", "s\tsec\n")
    code, _, err = run(capsys, "gate", b)
    assert code == 2 and "queries.jsonl:1: query 'q1' names the asking user's groups but no ACL" in err
    code, out, _ = run(capsys, "gate", b, "--acl", tmp_path / "rules.tsv")
    assert code == 3 and json.loads(out)["checks"]["no_permission_leaks"] is False


@pytest.mark.parametrize("acl, groups, expected", [
    ('{"doc": "s", "groups": ["sec"]}\n{"doc": "ghost", "groups": ["sec"]}\n', True,
     "acl.jsonl:2: document 'ghost' is not in the qrels or any run"),
    ('{"doc": "s", "groups": ["sec"]}\n{"doc": "s", "groups": []}\n', True,
     "acl.jsonl:2: document 's' appears twice (first at line 1)"),
    ('{"doc": "s"}\n', True, "acl.jsonl:1: document 's' names no 'groups'"),
    ('s\t\n', True, "acl.jsonl:1: document 's' names no groups after the tab"),
    ('s\t , \n', True, "acl.jsonl:1: document 's' names no groups after the tab"),
    ('{"doc": "s", "groups": "sec"}\n', True, "acl.jsonl:1: field 'groups' must be a list"),
    ('{"doc": "s", "groups": ["sec"]}\n', False, "queries.jsonl:1: query 'q1' names no 'groups'"),
])
def test_bad_acl_input_names_file_and_line(tmp_path, capsys, acl, groups, expected):
    code, out, err = run(capsys, "gate", bench(tmp_path, acl=acl, groups=groups))
    assert code == 2 and out == ""
    assert expected in err and "Traceback" not in err


def test_unknown_document_checked_against_the_corpus(tmp_path, capsys):
    b = bench(tmp_path)
    write(tmp_path / "corpus.jsonl", '{"id": "a", "text": "x"}\n')  # s is not in it
    (tmp_path / "benchmark.toml").write_text(
        (tmp_path / "benchmark.toml").read_text().replace('acl = ', 'corpus = "corpus.jsonl"\nacl = '))
    code, _, err = run(capsys, "gate", b)
    assert code == 2 and "acl.jsonl:1: document 's' is not in the corpus" in err


def test_acl_from_the_corpus(tmp_path, capsys):
    b = bench(tmp_path, acl=None)
    write(tmp_path / "corpus.jsonl", '{"id": "a", "text": "x"}\n{"id": "s", "text": "y", "acl": ["sec"]}\n')
    (tmp_path / "benchmark.toml").write_text((tmp_path / "benchmark.toml").read_text().replace(
        'runs = ', 'corpus = "corpus.jsonl"\nacl = "corpus"\nruns = '))
    code, out, _ = run(capsys, "gate", b)
    assert code == 3 and json.loads(out)["permissions"]["leaks"]["leaky"]["list"][0]["doc"] == "s"


def test_ops_handbook_permissions_sample(capsys):
    """The sample's README: the cached candidate leaks one security runbook and is rejected for that alone."""
    code, out, _ = run(capsys, "gate", SAMPLES / "ops-handbook" / "permissions")
    assert code == 3
    r = json.loads(out)
    assert [n for n, ok in r["checks"].items() if not ok] == ["no_permission_leaks"]
    (leak,) = r["permissions"]["leaks"]["bm25-stemmed-cache"]["list"]
    assert (leak["query"], leak["doc"], leak["rank"]) == ("q-status-page", "ir-security-incident-01", 9)
    assert r["permissions"]["restricted_relevant"] == {"q-ssh-prod": ["netsec-ssh-bastion-02"]}
    code, out, _ = run(capsys, "gate", SAMPLES / "ops-handbook" / "permissions", "--candidate", "bm25-stemmed")
    assert code == 0


def test_a_query_whose_every_answer_is_restricted_has_no_visible_answer(tmp_path, capsys):
    b = bench(tmp_path)
    write(tmp_path / "judgments.jsonl", _jsonl({"query": q, "doc": d, "grade": g} for q, d, g in
                                               [("q1", "s", 2), ("q1", "a", 0), ("q2", "b", 1)]))
    code, out, _ = run(capsys, "gate", b)
    r = json.loads(out)
    assert r["permissions"]["no_visible_answer"] == ["q1"]
    assert "q1" in r["no_answer_queries"] and r["queries"] == 1  # reported apart, never averaged


def test_receipt_hashes_the_acl_and_verifies(tmp_path, capsys):
    b = bench(tmp_path)
    receipt = tmp_path / "r.json"
    assert run(capsys, "gate", b, "--receipt", receipt)[0] == 3
    assert "acl" in {i["role"] for i in json.loads(receipt.read_text())["predicate"]["inputs"]}
    assert run(capsys, "receipt", "verify", receipt)[0] == 0
    write(tmp_path / "acl.jsonl", '{"doc": "s", "groups": ["staff"]}\n')
    code, out, _ = run(capsys, "receipt", "verify", receipt)
    assert code == 3 and "acl" in out
