"""The app's gate applies the benchmark's ACL as `rankgate gate` does: a candidate that leaks a restricted
document fails `no_permission_leaks` in the gate pane."""

from __future__ import annotations

import shutil

import pytest

from tests.conftest import SAMPLES
from tests.tui.conftest import SIZE, make_app, ready


@pytest.mark.slow
async def test_a_leaking_candidate_is_rejected_in_the_app_too(tmp_path):
    bench = tmp_path / "ops-handbook"
    shutil.copytree(SAMPLES / "ops-handbook", bench)
    app = make_app(bench / "permissions")
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        assert app.error is None, app.error
        view = app.screen.model.gate()
        leak = [d for d in view.check_details if d["name"] == "no_permission_leaks"]
        assert len(leak) == 1 and not leak[0]["passed"] and not view.accepted
        assert "ir-security-incident-01" in str(leak[0])


# ---- the app's measures are what each query's user may see, as `rankgate gate` computes them -------------------

import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402

from rankgate.core.acl import apply_access  # noqa: E402
from rankgate.core.gate import run_gate  # noqa: E402
from rankgate.tui.loader import Inputs, load  # noqa: E402


def _permissions_sample(tmp_path, extra_acl: str = ""):
    bench = tmp_path / "ops-handbook"
    shutil.copytree(SAMPLES / "ops-handbook", bench)
    if extra_acl:
        with open(bench / "permissions" / "acl.jsonl", "a", encoding="utf-8") as f:
            f.write(extra_acl)
    return bench / "permissions"


def _core_gate(m):
    """The core's gate on the labels as they are now, with the ACL applied as gate_bundle applies it."""
    b, c = m.runs[m.baseline].run, m.runs[m.candidate].run
    qrels, (b, c), perm, no_answer = apply_access(m.access, m.labels.to_qrels(), [b, c], m.level, m.no_answer)
    return run_gate(qrels, b, c, m.policy, no_answer, queries=m.queries, review=False, permissions=perm).data


def _assert_same(view, data):
    assert view.checks == data["checks"]
    for side in ("baseline_macro", "candidate_macro"):
        for key, value in data[side].items():
            assert getattr(view, side)[key] == pytest.approx(value, abs=1e-12), (side, key)
    assert [d["why"] for d in view.check_details] == [d["why"] for d in data["check_details"]]
    assert view.evaluated == data["queries"]


def test_the_app_gate_pane_and_rankgate_gate_give_the_same_figures(tmp_path):
    bench = _permissions_sample(tmp_path)
    out = tmp_path / "gate.json"
    done = subprocess.run([sys.executable, "-m", "rankgate", "gate", str(bench), "-o", str(out), "--quiet"],
                          capture_output=True, text=True)
    assert done.returncode == 3, done.stderr
    cli = json.loads(out.read_text())
    assert cli["permissions"]["restricted_relevant"]  # the sample has a relevant document its asker may not see
    m = load(Inputs(str(bench), memory=True)).model
    assert m.access is not None
    _assert_same(m.gate(fresh=True), cli)
    # The restricted relevant document is not counted for its query: not among what the runs miss either.
    for qid, docs in cli["permissions"]["restricted_relevant"].items():
        qi = m.qindex[qid]
        for rname in m.run_names:
            assert not set(docs) & set(m.missing(qi, rname))
            assert m.restricted(qi, docs[0]) == ["security"]


def test_a_restricted_document_in_the_top_k_moves_the_rest_up_in_the_app_as_in_the_cli(tmp_path):
    # Restrict a relevant document the baseline ranks first for an on-call query: it leaks, it no longer
    # counts as found, and the documents below it move up; the app agrees with the core through edits.
    plain = SAMPLES / "ops-handbook" / "permissions" / "runs" / "bm25-plain.jsonl"
    first = next(json.loads(line) for line in plain.read_text().splitlines() if '"query"' in line)
    qid, doc = first["query"], first["ranking"][0]["doc"]
    bench = _permissions_sample(tmp_path, json.dumps({"doc": doc, "groups": ["nobody"]}) + "\n")
    m = load(Inputs(str(bench), memory=True)).model
    qi = m.qindex[qid]
    row = m.ranking(qi, "bm25-plain")[0]
    assert row.doc == doc and m.restricted(qi, doc) == ["nobody"] and row.state != "found"
    assert sum(r.in_top_k for r in m.ranking(qi, "bm25-plain")) == min(m.k + 1, len(m.ranking(qi, "bm25-plain")))
    _assert_same(m.gate(fresh=True), _core_gate(m))
    m.labels.set(qid, doc, 3, "the answer, but restricted")  # counts for nobody
    m.apply_edit(qid)
    _assert_same(m.gate(fresh=True), _core_gate(m))
    # Every relevant label of a query restricted: the query has no answer its user may see (not a miss).
    for d in [d for d, g in m.labels.grades(qid).items() if g >= m.level]:
        m.labels.set(qid, d, 0)
    m.labels.set(qid, doc, 3)
    m.apply_edit(qid)
    assert not m.evaluated[qi]
    _assert_same(m.gate(fresh=True), _core_gate(m))
    for pair in (("bm25-stemmed", "bm25-plain"), ("bm25-plain", "bm25-stemmed")):
        m.set_pair(*pair)
        _assert_same(m.gate(fresh=True), _core_gate(m))


@pytest.mark.slow
async def test_the_label_pane_marks_a_restricted_document_and_the_rankings_show_the_leak_in_red(tmp_path):
    from rankgate.tui.widgets.label_editor import LabelEditor, LabelList
    from rankgate.tui.widgets.ranking import RankingPane

    app = make_app(_permissions_sample(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen, m = app.screen, app.screen.model
        screen.show_query(m.qindex["q-ssh-prod"], "netsec-ssh-bastion-02")
        await pilot.pause()
        lst = screen.query_one(LabelList)
        row = next(i for i, lab in enumerate(lst.rows) if lab.doc == "netsec-ssh-bastion-02")
        assert "restricted" in lst.render_row(row, 120).plain
        assert "restricted: visible to security only" in lst.render_row(row, 120).plain
        other = next(i for i, lab in enumerate(lst.rows) if lab.doc != "netsec-ssh-bastion-02")
        assert "restricted" not in lst.render_row(other, 120).plain
        detail = screen.query_one(LabelEditor).query_one("#label-detail")._shown.plain
        assert "restricted: visible to security only" in detail and "never counts as found" in detail

        screen.show_query(m.qindex["q-status-page"], "ir-security-incident-01")
        await pilot.pause()
        cand = screen.query_one(RankingPane).lists()["candidate"]
        i = next(i for i, r in enumerate(cand.rows) if r.doc == "ir-security-incident-01")
        text = cand.render_row(i, 60)
        assert cand.rows[i].rank == 9 and "leak" in text.plain
        assert any("red" in str(span.style) for span in text.spans)
        base = screen.query_one(RankingPane).lists()["baseline"]
        assert all("leak" not in base.render_row(j, 60).plain for j in range(len(base.rows)))
