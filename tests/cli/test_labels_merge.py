"""`rankgate labels merge | agreement | disagreements | adjudicate | confirm | migrate | queue` end to end on the
ops-handbook sample, with a second reviewer's export (its reviews/ana.jsonl)."""

from __future__ import annotations

import json

import pytest

from rankgate.cli import main
from tests.conftest import SAMPLES, write

OPS = SAMPLES / "ops-handbook"
ANA = OPS / "reviews" / "ana.jsonl"


def cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def merged(tmp_path, capsys):
    """The sample's workspace (priya, tomas, lena) with ana's export merged in."""
    db = tmp_path / "ops.json"
    code, out, err = cli(capsys, "labels", "import", "-b", OPS, "--db", db)
    assert code == 0, err
    code, out, err = cli(capsys, "labels", "merge", "--db", db, ANA)
    assert code == 0, err
    assert "35 new judgments (read: ana 35)" in out and out.splitlines()[1].startswith("7 pairs where reviewers")
    return db


def test_merge_agreement_and_adjudication_from_the_cli(merged, capsys, tmp_path):
    """Done when: two exports merge, agreement figures are right, adjudication resolves a disagreement."""
    db = merged
    code, out, _ = cli(capsys, "labels", "agreement", "--db", db, "--json", "--by", "query")
    report = json.loads(out)
    overall = report["overall"]
    assert (overall["units"], overall["agreed"], overall["reviewers"]) == (33, 26, ["ana", "lena", "priya", "tomas"])
    kappa = {tuple(k["reviewers"]): k for k in overall["kappa"]}
    assert kappa[("ana", "lena")]["kappa"] == pytest.approx(0.76)  # 19/25, by hand in tests/unit
    assert kappa[("ana", "tomas")]["kappa"] == pytest.approx(25 / 61)  # by hand in tests/store/test_reviewers.py
    assert report["groups"]["q-rto-vault"]["units"] == 6 and report["groups"]["q-pitr-dropped-table"]["units"] == 0
    assert len(report["disagreements"]) == 7
    code, out, _ = cli(capsys, "labels", "agreement", "--db", db, "--by", "slice")
    assert "Krippendorff's alpha (ordinal): 0.828" in out and "Cohen's kappa ana ~ lena: 0.760 (quadratic-weighted " \
        "0.923) over 6 pairs, 5 agreed" in out
    assert "  gpu " in out and "  dns " not in out  # slices without a pair judged twice are left out
    assert 'q-leaked-key ir-declare-01: tomas 0 "Generic incident declaration' in out
    # the gate's qrels refuse open disagreements when asked
    code, _, err = cli(capsys, "labels", "export", "--db", db, "--require-adjudication")
    assert code == 2 and "7 disagreements not adjudicated" in err and err.count("\n") == 1
    # adjudicate every one from the CLI; the export then names how each was reached
    code, out, _ = cli(capsys, "labels", "disagreements", "--db", db, "--json")
    for d in map(json.loads, out.splitlines()):
        grade = min(j["grade"] for j in d["judgments"])
        code, out, err = cli(capsys, "labels", "adjudicate", "--db", db, d["query"], d["doc"], grade, "--reason",
                             "the stricter reading holds", "--reviewer", "lena")
        assert code == 0 and f"{d['query']} {d['doc']}: adjudicated {grade} by lena" in out
    code, _, err = cli(capsys, "labels", "adjudicate", "--db", db, "q-leaked-key", "ir-declare-01", "1")
    assert code == 2 and "needs --reason" in err
    target = tmp_path / "reviewed.jsonl"
    code, out, err = cli(capsys, "labels", "export", "--db", db, "--format", "jsonl", "--require-adjudication",
                         "-o", target)
    assert code == 0, err
    lines = [json.loads(x) for x in target.read_text().splitlines()]
    assert lines[0]["meta"]["adjudicated"] == 7 and "unresolved" not in lines[0]["meta"]
    declare = next(x for x in lines[1:] if (x["query"], x["doc"]) == ("q-leaked-key", "ir-declare-01"))
    assert (declare["grade"], declare["reached"], declare["reviewer"]) == (0, "adjudicated", "lena")
    assert next(x for x in lines[1:] if x["doc"] == "netsec-secrets-rotation-02")["reached"] == "unanimous"
    # ... and the gate reads it
    code, out, err = cli(capsys, "gate", OPS, "--qrels", target)
    assert code in (0, 3) and "error" not in err
    code, out, _ = cli(capsys, "labels", "history", "--db", db, "q-leaked-key", "ir-declare-01")
    assert [line.split()[3] for line in out.splitlines()] == ["import", "merge", "adjudicate"]


def test_merge_conflicts_and_bad_files_merge_nothing(merged, capsys, tmp_path):
    db = merged
    edited = write(tmp_path / "ana2.jsonl", ANA.read_text().replace('"grade": 3, "reason": "Revoke first',
                                                                     '"grade": 2, "reason": "Revoke first'))
    code, _, err = cli(capsys, "labels", "merge", "--db", db, edited)
    assert code == 2
    assert err.splitlines()[0].startswith("conflict: query q-leaked-key document netsec-secrets-rotation-02: the store "
                                          "has ana's judgment: grade 3")
    assert "1 conflict with a reviewer's judgment in the store; nothing was merged" in err.splitlines()[-1]
    bad = write(tmp_path / "bad.jsonl", '{"query": "q-x", "doc": "d", "grade": 1, "reviewer": "zoe"}\n{"query": 1}\n')
    code, _, err = cli(capsys, "labels", "merge", "--db", db, bad)
    assert code == 2 and err.count("\n") == 1 and "bad.jsonl:2:" in err
    code, out, _ = cli(capsys, "labels", "status", "--db", db)
    assert "reviewers: ana, lena, priya, tomas" in out and "reviewer_judgments: 314" in out
    code, out, _ = cli(capsys, "labels", "merge", "--db", db, edited, "--on-conflict", "overwrite", "--json")
    assert json.loads(out)["changed"] == 1


def test_migrate_from_the_cli(merged, capsys, tmp_path):
    db = merged
    m = write(tmp_path / "rechunk.tsv", "backup-policy-02\tbackup-policy-02a\nbackup-policy-02\tbackup-policy-02b\n"
              "gpu-kv-cache-02\tgpu-kv-cache-02\ngpu-kv-cache-03\tgpu-kv-cache-02\n")
    code, out, err = cli(capsys, "labels", "migrate", "--db", db, "--map", m, "--version", "chunks-2")
    assert code == 0, err
    assert out.startswith("carried 12 labels to 17 query-document pairs with new IDs, each marked as needing review")
    assert "merged: q-kv-cache-per-token gpu-kv-cache-02 <- gpu-kv-cache-02, gpu-kv-cache-03" in out
    assert "... and " in out and out.rstrip().endswith("versions: before chunks-2-before, after chunks-2")
    code, out, _ = cli(capsys, "labels", "list", "--db", db, "q-rto-vault")
    assert "backup-policy-02a" in out and out.count("[needs review]") == 2 and "backup-policy-02 " not in out
    code, out, _ = cli(capsys, "labels", "confirm", "--db", db, "q-rto-vault", "backup-policy-02a")
    assert code == 0 and "confirmed (2 judgments" in out
    bad = write(tmp_path / "bad.tsv", "a\tb\nbackup-policy-01 backup-policy-01a\n")
    code, _, err = cli(capsys, "labels", "migrate", "--db", db, "--map", bad)
    assert code == 2 and err == f"error: {bad}:2: expected OLD_ID<TAB>NEW_ID, found no TAB in " \
        "'backup-policy-01 backup-policy-01a'\n"


def test_the_review_queue_from_the_cli(capsys):
    code, out, err = cli(capsys, "labels", "queue", OPS, "--json")
    assert code == 0, err
    q = json.loads(out)
    assert q["gate"] == ["bm25-plain", "bm25-prf"] and q["decision"] == "reject" and q["total"] == len(q["items"])
    items = q["items"]
    keys = [(not i["changes_decision"], not i["flips"], not i["must_pass_runs"], -round(i["impact"], 12),
             not i["must_pass"], i["best_rank"]) for i in items]
    assert keys == sorted(keys)
    judged = {(j["query"], j["doc"]) for j in map(json.loads, (OPS / "judgments.jsonl").read_text().splitlines())}
    assert not any((i["query"], i["doc"]) in judged for i in items)
    assert all(i["best_rank"] <= 5 for i in items)
    code, out, _ = cli(capsys, "labels", "queue", OPS, "--limit", "3")
    lines = out.splitlines()
    assert lines[0].startswith(f"{q['total']} unjudged documents in the top 5 of bm25-plain, bm25-stemmed, "
                               "bm25-prf") and len(lines) == 5 and lines[-1].startswith("... and ")


def test_the_queue_takes_the_workspace_and_skips_what_ana_judged(merged, capsys):
    code, out, _ = cli(capsys, "labels", "queue", OPS, "--db", merged, "--json")
    docs = {(i["query"], i["doc"]) for i in json.loads(out)["items"]}
    code, out, _ = cli(capsys, "labels", "queue", OPS, "--json")
    before = {(i["query"], i["doc"]) for i in json.loads(out)["items"]}
    assert before - docs == {("q-sev1-first-steps", "ir-chatops-01"),
                             ("q-kv-cache-per-token", "gpu-tensor-parallel-01")}
