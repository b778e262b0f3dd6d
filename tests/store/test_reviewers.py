"""Several reviewers: one judgment per reviewer per pair, the pair's label, adjudication, blind review, merge,
agreement on the ops-handbook sample, and the review queue."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rankgate.core.errors import InputError
from rankgate.core.formats import read_qrels
from rankgate.core.model import Query
from rankgate.store import MergeConflicts, Workspace, content_hash

from .conftest import labels_of, write

# ana's export: a blind second pass over four ops-handbook queries (shipped with the sample, for docs/reviewers.md)
ANA = Path(__file__).parents[2] / "sample_benchmarks" / "ops-handbook" / "reviews" / "ana.jsonl"


@pytest.fixture
def two(ws):
    """q1 with d1 judged by ana (2) and bo (0), d2 by ana only (1), d3 by both alike (1)."""
    ws.set_query(Query("q1", "restore a file", tags=("backups",)))
    ws.set_judgment("q1", "d1", 2, reason="the steps", reviewer="ana")
    ws.set_judgment("q1", "d2", 1, reason="mentions it", reviewer="ana")
    ws.set_judgment("q1", "d3", 1, reason="partial", reviewer="ana")
    ws.set_judgment("q1", "d1", 0, reason="another product", reviewer="bo")
    ws.set_judgment("q1", "d3", 1, reason="half of it", reviewer="bo")
    return ws


def test_a_pair_holds_one_judgment_per_reviewer_and_a_label(two):
    ws = two
    assert len(ws) == 3
    assert [(j.doc, j.reviewer, j.grade) for j in ws.reviews("q1")] == [
        ("d1", "ana", 2), ("d1", "bo", 0), ("d2", "ana", 1), ("d3", "ana", 1), ("d3", "bo", 1)]
    labels = {j.doc: j for j in ws.judgments("q1")}
    assert (labels["d2"].reached, labels["d2"].reviewers, labels["d2"].how()) == ("single", ("ana",),
                                                                                   "single reviewer ana")
    assert (labels["d3"].reached, labels["d3"].grade, labels["d3"].reviewer) == ("unanimous", 1, "bo")
    # a disagreement nobody adjudicated: the latest judgment counts (as the last edit did with one judgment a pair)
    d1 = labels["d1"]
    assert (d1.grade, d1.reviewer, d1.reached, d1.unresolved) == (0, "bo", "latest", True)
    assert ws.grades("q1") == {"d1": 0, "d2": 1, "d3": 1}
    ws.set_judgment("q1", "d1", 2, reason="the steps, really", reviewer="ana")  # ana's edit is now the latest
    assert ws.judgment("q1", "d1").grade == 2
    qrels = ws.to_qrels()
    assert qrels.grades_for("q1") == {"d1": 2, "d2": 1, "d3": 1}
    assert qrels.details[("q1", "d1")].reviewer == "ana"
    assert ws.stats()["reviewer_judgments"] == 5 and ws.stats()["disagreements"] == 1


def test_a_reviewer_regrades_only_their_own_judgment(two):
    ws = two
    e = ws.set_judgment("q1", "d2", 2, reviewer="bo")  # bo's first judgment of d2: no reason of anyone else's
    assert (e.kind, e.before, e.after["reason"], e.scope) == ("set", None, "", "reviewer")
    assert [(j.reviewer, j.grade) for j in ws.reviews("q1", "d2")] == [("ana", 1), ("bo", 2)]
    assert ws.set_judgment("q1", "d2", 2, reviewer="bo") is None  # unchanged
    assert ws.set_judgment("q1", "d2", 2, reason="all of it", reviewer="bo").kind == "reason"


def test_disagreements_and_adjudication_end_to_end(two):
    ws = two
    [d] = ws.disagreements()
    assert (d.query, d.doc, d.grades, d.resolved) == ("q1", "d1", {"ana": 2, "bo": 0}, False)
    assert [j.reason for j in d.judgments] == ["the steps", "another product"]
    assert d.label.grade == 0 and d.as_dict()["reached"] == "latest"
    with pytest.raises(InputError, match="needs a reason"):
        ws.adjudicate("q1", "d1", 1, "  ")
    with pytest.raises(InputError, match="nothing to adjudicate"):
        ws.adjudicate("q1", "d9", 1, "r")
    e = ws.adjudicate("q1", "d1", 1, "right product, steps half there", reviewer="cy", why="weekly review")
    assert (e.kind, e.scope, e.who, e.after["grades"]) == ("adjudicate", "adjudication", "cy", {"ana": 2, "bo": 0})
    assert "cy adjudicate q1 d1: - -> 1" in e.describe() and "(ana 2, bo 0)" in e.describe()
    label = ws.judgment("q1", "d1")
    assert (label.grade, label.reason, label.reached, label.how()) == (1, "right product, steps half there",
                                                                       "adjudicated", "adjudicated by cy")
    assert ws.disagreements() == [] and len(ws.disagreements(include_adjudicated=True)) == 1
    assert ws.adjudicate("q1", "d1", 1, "right product, steps half there", reviewer="cy") is None
    ws.set_judgment("q1", "d1", 2, reviewer="bo")  # a reviewer's later edit does not undo the adjudication
    assert ws.judgment("q1", "d1").grade == 1
    assert ws.to_qrels().grades_for("q1")["d1"] == 1
    # the export uses it and says how it was reached
    line = next(json.loads(x) for x in ws.export("jsonl").text.splitlines() if '"d1"' in x)
    assert (line["grade"], line["reached"], line["reviewer"], line["reviewers"]) == (1, "adjudicated", "cy",
                                                                                     ["ana", "bo"])
    w = ws.remove_adjudication("q1", "d1", why="new evidence")
    assert (w.kind, w.scope, w.before["grade"]) == ("remove", "adjudication", 1)
    assert ws.judgment("q1", "d1").reached == "unanimous"  # bo moved to 2 meanwhile
    kinds = [(e.kind, e.scope) for e in ws.history("q1", "d1")]
    assert kinds == [("set", "reviewer"), ("set", "reviewer"), ("adjudicate", "adjudication"),
                     ("regrade", "reviewer"), ("remove", "adjudication")]


def test_remove_takes_the_reviewers_own_judgment_only(two):
    ws = two
    before = [(j.doc, j.reviewer, j.grade) for j in ws.reviews("q1")]
    with pytest.raises(InputError, match=r"'d1' for query 'q1' is judged by ana, bo, not by you \(tester\).*"
                       "adjudicate instead"):
        ws.remove_judgment("q1", "d1")  # tester has not judged it: nobody's judgment goes
    assert [(j.doc, j.reviewer, j.grade) for j in ws.reviews("q1")] == before
    e = ws.remove_judgment("q1", "d1", reviewer="ana")  # ana's own; bo's stays
    assert (e.kind, e.scope, e.who, e.before["reviewer"], e.after) == ("remove", "reviewer", "ana", "ana", None)
    label = ws.judgment("q1", "d1")
    assert (label.grade, label.reviewer, label.reached) == (0, "bo", "single")
    with pytest.raises(InputError, match="judged by bo, not by you"):
        ws.remove_judgment("q1", "d1", reviewer="ana")  # hers is gone already
    ws.remove_judgment("q1", "d2", reviewer="ana")
    with pytest.raises(InputError, match="no judgment to remove: your judgment .* was removed already"):
        ws.remove_judgment("q1", "d2", reviewer="ana")
    ws.adjudicate("q1", "d3", 1, "both say partial", reviewer="cy")
    with pytest.raises(InputError, match="judged by ana, bo, not by you \\(cy\\)"):
        ws.remove_judgment("q1", "d3", reviewer="cy")  # the adjudicator withdraws, not removes
    e = ws.remove_judgment("q1", "d3", of_reviewer="bo")  # explicit: bo's judgment
    assert (e.scope, e.before["reviewer"]) == ("reviewer", "bo")
    assert ws.judgment("q1", "d3").reached == "adjudicated" and [j.reviewer for j in ws.reviews("q1", "d3")] == ["ana"]


def test_exports_say_how_labels_were_reached_and_can_refuse_open_disagreements(two, tmp_path):
    ws = two
    out = ws.export("trec", header=True)
    assert "# unresolved: 1\n" in out.text and out.unresolved == 1
    assert any("not adjudicated" in n for n in out.notes)
    assert "# reviewer:" not in out.text  # several reviewers
    with pytest.raises(InputError, match="1 disagreement not adjudicated .* nothing was exported"):
        ws.export("trec", tmp_path / "x.trec", require_adjudication=True)
    assert not (tmp_path / "x.trec").exists()
    ws.adjudicate("q1", "d1", 2, "the steps are there")
    out = ws.export("json-graded", require_adjudication=True)
    meta = json.loads(out.text)["meta"]
    assert (meta["adjudicated"], "unresolved" in meta) == (1, False)
    # a reviewer's own export names them in its header: what `merge` reads from TREC and JSON
    mine = ws.export("trec", judged_by="bo", header=True)
    assert "# reviewer: bo\n" in mine.text and mine.labels == 2
    assert read_qrels(write(tmp_path / "bo.trec", mine.text)).meta["reviewer"] == "bo"


def test_versions_rebuild_every_reviewer_and_adjudication(two):
    ws = two
    ws.adjudicate("q1", "d1", 1, "half")
    v1 = ws.freeze("v1")
    ws.remove_adjudication("q1", "d1")
    ws.set_judgment("q1", "d2", 3, reviewer="bo")
    ws.remove_judgment("q1", "d3", of_reviewer="ana")
    v2 = ws.freeze("v2")
    for v in (v1, v2):
        out = ws.export("jsonl", version=v.name)
        assert out.content_hash == v.content_hash and not out.notes[:1] == ["purged"]
    assert json.loads(ws.export("json-graded", version="v1").text)["qrels"]["q1"] == {"d1": 1, "d2": 1, "d3": 1}
    assert ws.diff("v1", "v2").as_dict()["regraded"] == [{"query": "q1", "doc": "d1", "before": 1, "after": 0},
                                                          {"query": "q1", "doc": "d2", "before": 1, "after": 3}]


def test_several_reviewers_survive_reopen_fold_and_replay(db):
    with Workspace.open(db, fold_every=4) as ws:
        ws.set_judgment("q1", "d1", 2, reason="a", reviewer="ana", create_query=True)
        ws.set_judgment("q1", "d1", 0, reason="b", reviewer="bo")
        ws.set_judgment("q1", "d1", 2, reason="a2", reviewer="ana")  # after a fold: ana's is the latest
        ws.adjudicate("q1", "d1", 1, "c", reviewer="cy")
        ws.set_judgment("q1", "d2", 1, reason="d", reviewer="bo")
        want = [j.as_dict() for j in ws.reviews()], ws.judgment("q1", "d1"), labels_of(ws)
    with Workspace.open(db, readonly=True) as ws:
        assert ([j.as_dict() for j in ws.reviews()], ws.judgment("q1", "d1"), labels_of(ws)) == want
        assert ws.adjudication("q1", "d1").reviewer == "cy"
    with Workspace.open(db) as ws:
        ws.checkpoint()
        ws.remove_adjudication("q1", "d1")
        assert ws.judgment("q1", "d1").grade == 2  # ana's regrade came after bo's
    assert Workspace.recover(db)["lost"] is None
    with Workspace.open(db, readonly=True) as ws:
        assert ws.judgment("q1", "d1").grade == 2 and "adjudications" in json.loads(db.read_text())


def test_a_store_of_format_1_reads_and_replays_as_before(db):
    from rankgate.store.durable import FORMAT_VERSION

    """A workspace written before several reviewers: one judgment a pair, "judgment" edits in its journal."""
    with Workspace.open(db) as ws:
        ws.set_judgment("q1", "d1", 1, reason="r", create_query=True)
        ws.checkpoint()
    snap = json.loads(db.read_text())
    snap["meta"]["1"]["format_version"] = 1
    from rankgate.store.columns import FIELDS, SAME
    cols = snap["judgments"]["1"]  # format 1: one document per judgment
    snap["judgments"] = {"1": {"query": cols["query"], **{
        f: cols[f][SAME] if isinstance(cols[f], dict) else cols[f][0] for f in FIELDS}}}
    db.write_text(json.dumps(snap))
    from rankgate.store.storage import encode_record
    journal = db.with_name(db.name + ".journal")
    record = {"seq": snap["meta"]["1"]["journal_seq"] + 1, "ops": [["judgment", {
        "query": "q1", "doc": "d1", "grade": 3, "reason": "old-style regrade", "collection_version": "",
        "reviewer": "someone-else", "created": "2025-01-01T00:00:00.000Z", "updated": "2025-01-02T00:00:00.000Z",
        "removed": None}]], "events": [{"id": 3, "jseq": snap["meta"]["1"]["journal_seq"] + 1, "kind": "regrade",
                                        "query": "q1", "doc": "d1", "before": None, "after": {
                                            "grade": 3, "reason": "old-style regrade", "collection_version": "",
                                            "reviewer": "someone-else"}, "who": "someone-else",
                                        "when": "2025-01-02T00:00:00.000Z", "why": ""}],
              "ws": snap["meta"]["1"]["workspace_id"]}  # (in this journal's version, a record names its workspace)
    with open(journal, "ab") as f:
        f.write(encode_record(record))
    with Workspace.open(db) as ws:
        # the old edit replaced the pair's judgment, as it did then: no second reviewer appears
        assert [(j.reviewer, j.grade) for j in ws.reviews()] == [("someone-else", 3)]
        ws.freeze("v1")
        assert json.loads(ws.export("json-graded", version="v1").text)["qrels"] == {"q1": {"d1": 3}}
        ws.checkpoint()
    assert json.loads(db.read_text())["meta"]["1"]["format_version"] == FORMAT_VERSION


def test_blind_review_hides_other_reviewers(db):
    with Workspace.open(db) as ws:
        ws.set_judgment("q1", "d1", 2, reason="a", reviewer="ana", create_query=True)
        ws.set_judgment("q1", "d2", 0, reason="b", reviewer="ana")
        ws.set_judgment("q1", "d1", 0, reason="c", reviewer="bo")
        # the API flag: a reviewer's view with and without the others
        assert {j.doc: j.grade for j in ws.judgments("q1", for_reviewer="bo")} == {"d1": 0, "d2": 0}
        assert [j.doc for j in ws.judgments("q1", for_reviewer="bo", blind=True)] == ["d1"]
        assert ws.grades("q1", for_reviewer="bo", blind=True) == {"d1": 0}
        assert ws.judgment("q1", "d2", for_reviewer="bo", blind=True) is None
    with Workspace.open(db, reviewer="bo", blind=True) as ws:  # the workspace option: every read is bo's own
        assert ws.blind and ws.grades("q1") == {"d1": 0} and [j.reviewer for j in ws.judgments()] == ["bo"]
        assert ws.to_qrels().grades_for("q1") == {"d1": 0}
        assert all(e.reviewer == "bo" for e in ws.history() if e.kind != "query")
        for peek in (ws.disagreements, ws.reviews, ws.ratings, lambda: ws.judgments(for_reviewer="ana"),
                     lambda: ws.adjudicate("q1", "d1", 1, "r"), lambda: ws.import_files([])):
            with pytest.raises(InputError, match="blind review by bo"):
                peek()
        ws.set_judgment("q1", "d2", 1, reason="mine")
        ws.remove_judgment("q1", "d1")  # bo's own only
        assert "# reviewer: bo" in ws.export("trec", header=True).text  # a blind reviewer exports their own labels
    with Workspace.open(db) as ws:
        assert [(j.doc, j.reviewer) for j in ws.reviews()] == [("d1", "ana"), ("d2", "ana"), ("d2", "bo")]


# --------------------------------------------------------------------------- merge


def test_two_reviewers_exports_on_the_sample_merge(db, samples):
    """Done when: two reviewers' exports on the ops-handbook sample merge, and the agreement figures are right."""
    sample = samples / "ops-handbook"
    with Workspace.open(db) as ws:
        ws.import_files([sample / "queries.jsonl"])
        report = ws.merge_files([sample / "judgments.jsonl", ANA])
        assert (report.added, report.unchanged, report.disagreements) == (279 + 35, 0, 7)
        assert report.reviewers == {"priya": 84, "tomas": 107, "lena": 88, "ana": 35}
        assert ws.reviewers() == {"ana": 35, "lena": 88, "priya": 84, "tomas": 107}
        assert len(ws) == 281  # 279 pairs, and two only ana judged
        overall, by_slice = ws.agreement("slice")
        assert (overall.units, overall.single, overall.agreed) == (33, 248, 26)
        kappas = {(p.a, p.b): (p.units, p.agreed, p.kappa, p.kappa_quadratic) for p in overall.pairs}
        # ana~lena: the six q-kv-cache-per-token pairs, worked by hand in tests/unit/test_agreement.py
        assert kappas[("ana", "lena")] == (6, 5, pytest.approx(19 / 25), pytest.approx(12 / 13))
        # ana~tomas, q-leaked-key, 12 pairs; tomas 3 1 0 0 0 0 0 0 0 0 0 0, ana 3 2 0 0 1 1 0 0 0 0 0 0:
        # p_o = 9/12; tomas 0:10 1:1 3:1, ana 0:8 1:2 2:1 3:1; p_e = (10*8 + 1*2 + 1*1)/144 = 83/144;
        # kappa = (108/144 - 83/144) / (61/144) = 25/61.
        assert kappas[("ana", "tomas")][:3] == (12, 9, pytest.approx(25 / 61))
        assert kappas[("ana", "priya")][:2] == (15, 12)
        assert overall.alpha == pytest.approx(0.8284798793704646)
        assert by_slice["gpu"].units == 6 and by_slice["dns"].units == 0 and by_slice["dns"].alpha is None
        pairs = {(d.query, d.doc): d.grades for d in ws.disagreements()}
        assert pairs[("q-leaked-key", "ir-declare-01")] == {"tomas": 0, "ana": 1}
        assert len(pairs) == 7
        # merging again changes nothing
        again = ws.merge_files([ANA])
        assert (again.added, again.unchanged) == (0, 35)


def test_merge_is_all_or_nothing_and_keeps_everyone(db, tmp_path):
    good = write(tmp_path / "ana.jsonl", '{"query": "q1", "doc": "d1", "grade": 2, "reviewer": "ana"}\n')
    bad = write(tmp_path / "bo.jsonl", '{"query": "q1", "doc": "d1", "grade": 0, "reviewer": "bo"}\n{"query": "q1"}\n')
    with Workspace.open(db) as ws:
        with pytest.raises(InputError, match=r"bo.jsonl:2: field 'doc'"):
            ws.merge_files([good, bad])
        assert len(ws) == 0 and ws.history() == []
        trec = write(tmp_path / "cy.trec", "# reviewer: cy\nq1 0 d1 1\n")
        plain = write(tmp_path / "plain.trec", "q1 0 d1 3\n")
        with pytest.raises(InputError, match="names no reviewer"):
            ws.merge_files([good, plain])
        report = ws.merge_files([good, trec, f"dee={plain}"])
        assert report.reviewers == {"ana": 1, "cy": 1, "dee": 1} and report.queries_added == 1
        assert [(j.reviewer, j.grade) for j in ws.reviews("q1", "d1")] == [("ana", 2), ("cy", 1), ("dee", 3)]
        assert [e.kind for e in ws.history("q1", "d1")] == ["merge"] * 3
        # one reviewer, two grades: a conflict, listed; nothing merged unless told
        changed = write(tmp_path / "ana2.jsonl", '{"query": "q1", "doc": "d1", "grade": 0, "reviewer": "ana"}\n')
        with pytest.raises(MergeConflicts) as e:
            ws.merge_files([changed])
        assert "ana's judgment: grade 2" in str(e.value.conflicts[0])
        assert ws.merge_files([changed], on_conflict="keep").kept == 1
        assert ws.merge_files([changed], on_conflict="overwrite").changed == 1
        assert [(j.reviewer, j.grade) for j in ws.reviews("q1", "d1")] == [("cy", 1), ("dee", 3), ("ana", 0)]
        with pytest.raises(InputError, match="second judgment by ana"):
            ws.merge_files([write(tmp_path / "dup.jsonl", changed.read_text() * 2)])


def test_every_reviewer_export_merges_into_another_workspace(two, tmp_path):
    ws = two
    ws.adjudicate("q1", "d1", 1, "half of it", reviewer="cy")
    out = ws.export("jsonl", tmp_path / "all.jsonl", all_reviewers=True)
    with pytest.raises(InputError, match="jsonl only"):
        ws.export("trec", all_reviewers=True)
    with Workspace.open(tmp_path / "other.json", reviewer="zed") as other:
        report = other.merge_files([tmp_path / "all.jsonl"])
        assert (report.added, report.adjudications) == (5, 1)
        assert [j.as_dict()["grade"] for j in other.reviews()] == [j.grade for j in ws.reviews()]
        assert labels_of(other) == labels_of(ws) and other.judgment("q1", "d1").how() == "adjudicated by cy"
    assert out.content_hash == content_hash((q, d, g) for (q, d), g in labels_of(ws).items())


@pytest.mark.slow
def test_a_second_writer_cannot_merge(db, tmp_path):
    import subprocess
    import sys

    with Workspace.open(db):
        f = write(tmp_path / "a.jsonl", '{"query": "q1", "doc": "d1", "grade": 2, "reviewer": "ana"}\n')
        code = ("import sys; from rankgate.cli import main; "
                f"sys.exit(main(['labels', 'merge', '--db', {str(db)!r}, {str(f)!r}]))")
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        assert p.returncode == 2 and "is open for writing by" in p.stderr


def test_import_still_sets_the_pairs_label(two, tmp_path):
    """`labels import` compares with the pair's label; overwriting makes the file's judgment the pair's only one."""
    ws = two
    f = write(tmp_path / "q.trec", "# reviewer: dee\nq1 0 d1 3\n")
    with pytest.raises(InputError, match="1 conflict"):
        ws.import_files([f])
    ws.import_files([f], on_conflict="overwrite")
    assert [(j.reviewer, j.grade) for j in ws.reviews("q1", "d1")] == [("dee", 3)]
    e = ws.history("q1", "d1")[-1]
    assert e.kind == "import" and set(e.before["judgments"]) == {"ana", "bo"}


# --------------------------------------------------------------------------- the review queue


def _tiny(tmp_path):
    """k = 2; q1 is must-pass. The candidate misses q1 (reject); judging u1 relevant would fix it and accept."""
    from rankgate.core.formats import read_qrels, read_runs
    from rankgate.core.model import Catalog
    from rankgate.core.policy import Policy

    qrels_path = write(tmp_path / "q.trec", "q1 0 a 1\nq2 0 b 1\nq3 0 c 1\n")
    runs = {
        "base": {"q1": ["a", "x1"], "q2": ["b", "y1"], "q3": ["c", "z1"]},
        "cand": {"q1": ["u1", "u2"], "q2": ["b", "y2"], "q3": ["c", "z1"]},
        "other": {"q1": ["t1", "t2"], "q2": ["w1", "b"], "q3": ["w2", "c"]},
    }
    cat = Catalog()
    qrels = read_qrels(qrels_path, catalog=cat)
    loaded = {}
    for name, per in runs.items():
        text = "".join(f"{q} Q0 {d} {i + 1} {10 - i} {name}\n" for q, docs in per.items() for i, d in enumerate(docs))
        [run] = read_runs(str(write(tmp_path / f"{name}.trec", text)), catalog=cat)
        loaded[run.name] = run
    return qrels, loaded, Policy(k=2, must_pass=["q1"], baseline="base", candidate="cand")


def test_the_review_queue_orders_by_decision_must_pass_then_rank(tmp_path):
    from rankgate.core.queue import build_queue

    qrels, runs, policy = _tiny(tmp_path)
    queue = build_queue(qrels, runs, policy)
    order = [(it.query, it.doc) for it in queue]
    assert sorted(order) == sorted([("q1", d) for d in ("x1", "u1", "u2", "t1", "t2")]
                                   + [("q2", d) for d in ("y1", "y2", "w1")] + [("q3", d) for d in ("z1", "w2")])
    assert queue.decision == "reject" and queue.gate == ("base", "cand")
    first = queue[0]
    assert (first.query, first.doc, first.changes_decision) == ("q1", "u1", True)
    assert first.why().startswith("could flip the gate's decision")
    # then the checks it could flip, then what would make a run hit a must-pass query it misses (other: q1)
    keys = [(not it.changes_decision, not it.flips, not it.must_pass_runs, -round(it.impact, 12), not it.must_pass,
             it.best_rank) for it in queue]
    assert keys == sorted(keys)
    assert first.must_pass_runs == ("cand",)  # the candidate misses must-pass q1 today
    mp = [it for it in queue if it.must_pass_runs and not it.flips]
    assert [(it.doc, it.must_pass_runs) for it in mp] == [("t1", ("other",)), ("t2", ("other",))]
    # what only the third run ranks, with no effect on anything: by rank
    tail = [(it.doc, it.best_rank) for it in queue if not (it.flips or it.impact or it.must_pass_runs
                                                           or it.must_pass or it.changes_decision)]
    assert tail == [("w1", 1), ("w2", 1), ("z1", 2)]  # z1: both gate runs rank it 2nd, so it moves nothing
    # the app's key: next item past the current one, skipping what has been judged since
    assert queue.next().doc == "u1"
    assert queue.next(after=("q1", "u1"), judged={("q1", "u2")}).doc == queue[2].doc
    assert queue.next(after=(queue[-1].query, queue[-1].doc)) is None


def test_the_queue_reads_the_labels_of_every_reviewer(db, tmp_path):
    from rankgate.core.model import Catalog
    from rankgate.core.queue import build_queue

    qrels, runs, policy = _tiny(tmp_path)
    with Workspace.open(db) as ws:
        ws.import_files([tmp_path / "q.trec"])
        ws.merge_files([write(tmp_path / "x.jsonl", '{"query": "q1", "doc": "u1", "grade": 1, "reviewer": "ana"}\n')])
        labels = ws.to_qrels(runs["base"].catalog)
    queue = build_queue(labels, runs, policy)
    assert ("q1", "u1") not in [(it.query, it.doc) for it in queue] and queue.decision == "accept"
    with pytest.raises(ValueError, match="catalog"):
        build_queue(ws_qrels := read_qrels(tmp_path / "q.trec", catalog=Catalog()), runs, policy)
    assert ws_qrels is not None


# --------------------------------------------------------------------------- live labels == versions rebuilt


from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_edit = st.tuples(st.sampled_from(["set", "set", "set", "remove", "remove_own", "adjudicate", "withdraw", "confirm",
                                   "migrate"]),
                  st.sampled_from(["q1", "q2"]), st.sampled_from(["d1", "d2", "d3"]),
                  st.sampled_from(["ana", "bo", "cy"]), st.integers(-1, 3))


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits=st.lists(_edit, min_size=1, max_size=25))
def test_every_version_rebuilds_the_labels_it_froze(tmp_path_factory, edits):
    db = tmp_path_factory.mktemp("prop") / "w.json"
    frozen = []
    with Workspace.open(db, fold_every=7) as ws:
        ws.set_query(Query("q1"))
        ws.set_query(Query("q2"))
        for i, (kind, q, d, who, g) in enumerate(edits):
            try:
                if kind == "set":
                    ws.set_judgment(q, d, g, reason=f"r{g}", reviewer=who)
                elif kind == "remove":
                    ws.remove_judgment(q, d, reviewer=who)
                elif kind == "remove_own":
                    ws.remove_judgment(q, d, of_reviewer=who)
                elif kind == "adjudicate":
                    ws.adjudicate(q, d, g, f"a{g}", reviewer=who)
                elif kind == "withdraw":
                    ws.remove_adjudication(q, d)
                elif kind == "migrate":  # d splits into itself and the next one (which it merges with)
                    from rankgate.core.migrate import parse_map

                    nxt = {"d1": "d2", "d2": "d3", "d3": "d1"}[d]
                    ws.migrate(parse_map(f"{d}\t{d}\n{d}\t{nxt}\n", "m.tsv"), version=f"m{i}",
                               drop_unmapped=g < 0)
                    frozen.append((ws.versions()[-1].name, ws.export("jsonl", plain=True).text))
                else:
                    ws.confirm(q, d)
            except InputError:
                continue
            if i % 4 == 3:
                v = ws.freeze(f"v{i}")
                frozen.append((v.name, ws.export("jsonl", plain=True).text))
        frozen.append((ws.freeze("last").name, ws.export("jsonl", plain=True).text))
        live = ws.export("jsonl", plain=True).text
        for name, text in frozen:
            assert ws.export("jsonl", plain=True, version=name).text == text
    with Workspace.open(db, readonly=True) as ws:
        assert ws.export("jsonl", plain=True).text == live
