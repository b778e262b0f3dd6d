"""Bounds and stability (core/bounds.py): each scenario's values equal a gate run on qrels that judge the
unjudged documents that way; a check the unjudged documents could flip names the documents to judge;
`require_stable` rejects such a decision (exit 3) in JSON, Markdown and JUnit."""

import json
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from rankgate.cli import main
from tests.conftest import SAMPLES, write

OPS = SAMPLES / "ops-handbook"


def gate(capsys, *argv):
    code = main(["gate", *(str(a) for a in argv)])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out.strip() else None), err


def trec_run(rankings: dict[str, list[str]], name: str) -> str:
    return "".join(f"{q} Q0 {d} {i + 1} {100 - i} {name}\n" for q, docs in rankings.items() for i, d in enumerate(docs))


# q1: the baseline ranks the unjudged x above the relevant d1; the candidate puts d1 first and the
# unjudged y second. q2 is fully judged and the same in both.
QRELS = "q1 0 d1 1\nq1 0 n1 0\nq2 0 e1 2\nq2 0 e2 0\n"
BASE = {"q1": ["x", "d1", "n1"], "q2": ["e1", "e2"]}
CAND = {"q1": ["d1", "y", "n1"], "q2": ["e1", "e2"]}


def files(tmp_path, qrels=QRELS, policy=""):
    q = write(tmp_path / "qrels.trec", qrels)
    b = write(tmp_path / "base.trec", trec_run(BASE, "base"))
    c = write(tmp_path / "cand.trec", trec_run(CAND, "cand"))
    argv = ["--qrels", q, "--runs", f"base={b}", "--runs", f"cand={c}", "--baseline", "base", "--candidate", "cand",
            "--k", "2", "--as-of", "2026-06-01"]
    if policy:
        argv += ["--policy", write(tmp_path / "policy.toml", policy)]
    return argv


def test_the_scenarios_are_the_gate_on_qrels_that_judge_the_unjudged_that_way(tmp_path, capsys):
    code, res, _ = gate(capsys, *files(tmp_path, policy='measures = ["AP", "nDCG@2"]\n'))
    assert code == 0
    st = res["stability"]
    # Every unjudged document within depth 2 (x for the baseline, y for the candidate) judged relevant at the
    # lowest relevant grade, or not relevant: the same as a gate on qrels that say so.
    for scenario, grade in (("all", 1), ("none", 0)):
        extra = f"q1 0 x {grade}\nq1 0 y {grade}\n"
        _, judged, _ = gate(capsys, *files(tmp_path / scenario, qrels=QRELS + extra, policy='measures = ["nDCG@2"]\n'))
        for key in ("recall_at_k", "mrr_at_k", "precision_at_k", "nDCG@2"):
            m = st["measures"][key]
            assert m["depth"] == 2 and m["depth_note"] == "at its cut-off 2"
            assert m["baseline"][scenario] == pytest.approx(judged["baseline_macro"][key])
            assert m["candidate"][scenario] == pytest.approx(judged["candidate_macro"][key])
    assert st["measures"]["mrr_at_k"]["baseline"]["now"] == pytest.approx(0.75)
    assert st["measures"]["mrr_at_k"]["baseline"]["all"] == pytest.approx(1.0)
    # AP has no cut-off: bounded at the runs' depth (3), and it says so.
    ap = st["measures"]["AP"]
    assert ap["depth"] == 3 and "no cut-off" in ap["depth_note"] and "runs' depth (3)" in ap["depth_note"]


def test_a_check_the_unjudged_documents_could_flip_names_the_documents_to_judge(tmp_path, capsys):
    code, res, _ = gate(capsys, *files(tmp_path))
    assert code == 0 and res["decision"] == "accept"
    checks = {c["name"]: c for c in res["stability"]["checks"]}
    # With x relevant and y not (the baseline ranks x higher), the baseline's R@2 rises to 1 and the
    # candidate's stays 0.5: recall_not_lower would fail. Judging x settles it.
    rec = checks["recall_not_lower"]
    assert not rec["stable"] and rec["outcomes"]["for_baseline"] is False and rec["outcomes"]["none"] is True
    assert rec["to_judge"] == [{"query": "q1", "doc": "x"}]
    assert rec["why"] == "could flip: judge this document"
    assert checks["must_pass_queries_hit"]["stable"]
    st = res["stability"]
    assert st["decision_could_flip"] and st["to_judge"] == [{"query": "q1", "doc": "x"}]
    # x judged not relevant: nothing left can flip the accept.
    _, after, _ = gate(capsys, *files(tmp_path / "0", qrels=QRELS + "q1 0 x 0\n"))
    assert after["decision"] == "accept" and after["stability"]["stable"] and after["stability"]["to_judge"] == []
    # x judged relevant: the gate rejects (R@2 0.5 against 1.0), and only y could bring the accept back.
    code, after, _ = gate(capsys, *files(tmp_path / "1", qrels=QRELS + "q1 0 x 1\n"))
    assert code == 3 and not after["stability"]["stable"]
    assert after["stability"]["to_judge"] == [{"query": "q1", "doc": "y"}]


def test_require_stable_rejects_an_unsettled_decision_with_the_documents(tmp_path, capsys):
    md, junit = tmp_path / "gate.md", tmp_path / "gate.xml"
    code, res, _ = gate(capsys, *files(tmp_path, policy="require_stable = true\n"), "--markdown", md, "--junit", junit)
    assert code == 3 and res["decision"] == "reject"
    check = next(c for c in res["check_details"] if c["name"] == "decision_stable")
    assert not check["passed"] and check["to_judge"] == [{"query": "q1", "doc": "x"}]
    assert check["why"] == "the decision could flip: judge this document: q1/x"
    text = md.read_text()
    assert "### Stability (unjudged documents)" in text and "could flip: judge this document: q1/x" in text
    root = ET.parse(junit).getroot()
    props = {p.get("name"): p.get("value") for p in root.find("testsuite").find("properties")}
    assert props["stability"].startswith("could flip: judge this document: q1/x")
    case = next(t for t in root.iter("testcase") if t.get("name") == "recall_not_lower")
    assert case.find("properties/property").get("value") == "could flip: judge this document: q1/x"
    # Judged, the same policy accepts.
    judged = files(tmp_path / "judged", qrels=QRELS + "q1 0 x 0\n", policy="require_stable = true\n")
    code, res, _ = gate(capsys, *judged)
    assert code == 0 and res["checks"]["decision_stable"]


def test_require_stable_must_be_true_or_false(tmp_path, capsys):
    code, res, err = gate(capsys, *files(tmp_path, policy='require_stable = "yes"\n'))
    assert code == 2 and "require_stable" in err and "Traceback" not in err


def test_ops_handbook_reports_stability_per_check(capsys):
    code, res, _ = gate(capsys, OPS, "--as-of", "2026-06-01")
    assert code == 3
    st = res["stability"]
    names = [c["name"] for c in st["checks"]]
    assert names == list(res["checks"])
    # The reject holds: the must-pass query is missed whatever the unjudged documents are.
    mp = next(c for c in st["checks"] if c["name"] == "must_pass_queries_hit")
    assert mp["stable"] and not mp["passed"] and st["stable"]
    budgets = [c for c in st["checks"] if c["name"].endswith("_budget")]
    assert budgets and all(c["stable"] and c["depth"] is None for c in budgets)


def test_ops_handbook_accept_could_flip_and_require_stable_rejects_it(tmp_path, capsys):
    # the sample's policy with require_stable (a key before the file's tables; a policy cannot name another)
    policy = write(tmp_path / "stable.toml", "require_stable = true\n" + (OPS / "policy.toml").read_text())
    code, res, _ = gate(capsys, OPS, "--policy", policy, "--candidate", "bm25-stemmed", "--as-of", "2026-06-01")
    assert code == 3
    assert [c["name"] for c in res["check_details"] if not c["passed"]] == ["decision_stable"]
    st = res["stability"]
    flips = [c for c in st["checks"] if not c["stable"]]
    assert flips and all(c["to_judge"] for c in flips)
    docs = {(d["query"], d["doc"]) for d in st["to_judge"]}
    assert docs == {(d["query"], d["doc"]) for c in flips for d in c["to_judge"]}
    queue = {(x["query"], x["doc"]) for x in res["coverage"]["review_queue"]}
    assert docs & queue  # the documents to judge are the queue's unjudged documents


def test_what_ifs_on_the_rows_within_each_cut_off_equal_those_on_whole_rankings():
    """relabel computes a measure with a cut-off on the rows within it (within_depth): the same values as
    on every row, for measures with and without a cut-off, deep and shallow runs, and the judged counts."""
    import numpy as np

    from rankgate.core import bounds
    from rankgate.core.compare import pair
    from rankgate.core.measures import parse_measures
    from rankgate.core.model import Catalog, Qrels, Run

    rng = np.random.default_rng(7)
    cat = Catalog()
    nq, depth, pool = 40, 30, 60
    for q in range(nq):
        cat.queries.code(f"q{q}")
    for d in range(pool):
        cat.docs.code(f"d{d}")
    jq = np.repeat(np.arange(nq), 6)
    jd = np.concatenate([rng.choice(pool, 6, replace=False) for _ in range(nq)])
    qrels = Qrels("t", cat, jq.astype(np.int32), jd.astype(np.int32), rng.choice([0, 1, 2, 3], len(jq)).astype(np.int64),
                  list(range(nq)))

    rows_b = [rng.permutation(pool)[:rng.integers(3, depth)] for _ in range(nq)]
    rows_c = [rng.permutation(pool)[:rng.integers(3, depth)] for _ in range(nq)]

    def as_run(name, rows):
        q = np.concatenate([np.full(len(r), i, np.int32) for i, r in enumerate(rows)])
        doc = np.concatenate(rows).astype(np.int32)
        score = np.concatenate([np.arange(len(r), 0, -1) for r in rows]).astype(np.float64)
        return Run(name, name, cat, q, doc, score, np.arange(len(q), dtype=np.int64))

    ms = parse_measures("Success@5,P@5,R@5,RR@5,nDCG@10,AP,AP@5,R@20,Judged@5,bpref,nDCG")
    p = pair(qrels, as_run("b", rows_b), as_run("c", rows_c), k=5, measures=ms, rel_level=1)
    keys = bounds.unjudged_keys(p, None)
    assert len(keys) > 100
    for scenario in bounds.SCENARIOS:
        grades = bounds.scenario_grades(p, keys, scenario)
        keep = rng.random(len(keys)) < 0.6
        got = bounds.relabel(p, keys, grades, keep=keep)
        # the same what-if with every measure computed on whole rankings (no row is deeper than 10**6)
        whole = {role: p.prepared[role] for role in ("baseline", "candidate")}
        for role in whole:
            p._cache[("bounds-within", role, 5)] = p._cache[("bounds-within", role, 10)] = \
                p._cache[("bounds-within", role, 20)] = (whole[role], None)
        want = bounds.relabel(p, keys, grades, keep=keep)
        for role in ("baseline", "candidate"):
            for m in ms:
                assert np.array_equal(got.values(role)[m], want.values(role)[m]), (scenario, role, m.name)
            assert np.array_equal(got.judged[role], want.judged[role])
        for key in [k for k in p._cache if isinstance(k, tuple) and k[0] == "bounds-within"]:
            del p._cache[key]


def test_no_stability_skips_the_report_and_the_receipt_records_it(tmp_path, capsys):
    receipt = tmp_path / "receipt.json"
    code, res, _ = gate(capsys, OPS, "--as-of", "2026-06-01", "--no-stability", "--receipt", receipt,
                        "--markdown", tmp_path / "gate.md")
    assert code == 3 and res["stability"] is None
    assert "Stability" not in (tmp_path / "gate.md").read_text()
    body = json.loads(receipt.read_text())["predicate"]
    assert body["policy"]["stability"] is False
    assert main(["receipt", "verify", str(receipt)]) == 0
    capsys.readouterr()
    # the same from the policy file; and a policy that asks for both is refused before anything is written
    policy = write(tmp_path / "p.toml", "stability = false\n")
    code, res, _ = gate(capsys, OPS, "--as-of", "2026-06-01", "--policy", policy)
    assert code == 3 and res["stability"] is None
    both = write(tmp_path / "both.toml", "stability = false\nrequire_stable = true\n")
    code, res, err = gate(capsys, OPS, "--as-of", "2026-06-01", "--policy", both, "-o", tmp_path / "out.json")
    assert code == 2 and "require_stable = true needs the stability report" in err and "Traceback" not in err
    assert not (tmp_path / "out.json").exists()


def stage_gate(capsys, folder, *more):
    code, res, err = gate(capsys, folder, "--policy", folder / "stages.toml", "--as-of", "2026-06-01", *more)
    assert code in (0, 3), err
    return {c["name"]: c for c in res["stability"]["checks"]}, res


def judge_not_relevant(folder, pairs) -> None:
    with open(folder / "judgments.jsonl", "a") as f:
        for q, d in pairs:
            f.write(json.dumps({"query": q, "doc": d, "grade": 0, "reason": "test", "reviewer": "test"}) + "\n")


def test_a_stage_recall_floor_is_bounded_on_the_stages_unjudged_documents(tmp_path, capsys):
    """ops-handbook's rerank floor passes (recall 0.88 >= 0.75), but documents nobody judged sit in the
    candidate's retrieve stage and not in its rerank stage: were they relevant, rerank recall would fall
    below the floor. Judging the documents named (not relevant) settles it; judging all but one does not."""
    import shutil

    folder = tmp_path / "ops"
    shutil.copytree(OPS, folder)
    checks, res = stage_gate(capsys, folder)
    floor = checks["rerank_recall_floor"]
    assert floor["passed"] and not floor["stable"]
    assert floor["outcomes"] == {"none": True, "all": False, "for_candidate": True, "for_baseline": False}
    assert floor["depth"] == 20 and floor["unjudged"] > floor["to_judge_total"] > 0
    to_judge = [(x["query"], x["doc"]) for x in floor["to_judge"]]
    assert len(to_judge) == min(floor["to_judge_total"], 100)  # the JSON lists the first 100
    # every document named is unjudged and in a stage of the candidate's pipeline
    judged = {(json.loads(x)["query"], json.loads(x)["doc"]) for x in (OPS / "judgments.jsonl").read_text().splitlines()}
    assert not set(to_judge) & judged
    # the loss check already fails: nothing unjudged can make it pass
    assert not checks["no_stage_loss"]["passed"] and checks["no_stage_loss"]["stable"]

    import datetime as dt

    from rankgate.core import bounds
    from rankgate.core.bundle import load_bundle
    from rankgate.core.gate import gate_bundle
    from rankgate.core.policy import resolve

    def core_checks(folder):
        bundle = load_bundle(benchmark=str(folder))
        policy = resolve({"policy": str(folder / "stages.toml")}, bundle)
        got = {}
        orig = bounds.stability

        def keep(*a, **k):
            got["st"] = orig(*a, **k)
            return got["st"]
        bounds.stability = keep
        try:
            gate_bundle(bundle, policy, as_of=dt.date(2026, 6, 1))
        finally:
            bounds.stability = orig
        return {c.name: c for c in got["st"].checks}

    names = core_checks(folder)["rerank_recall_floor"].to_judge
    assert len(names) == floor["to_judge_total"]
    fewer = tmp_path / "fewer"
    shutil.copytree(folder, fewer)
    judge_not_relevant(fewer, names[:-1])
    assert not core_checks(fewer)["rerank_recall_floor"].stable  # one short: it could still flip
    judge_not_relevant(folder, names)
    after = core_checks(folder)["rerank_recall_floor"]
    assert after.passed and after.stable and after.outcomes["all"]


def test_no_stage_loss_could_flip_on_a_document_the_baseline_keeps_and_nobody_judged():
    from types import SimpleNamespace

    from rankgate.core.bounds import stage_stability
    from rankgate.core.funnel import Pipeline, Stage, funnel
    from rankgate.core.policy import Rule

    def pipe(name, retrieve, rerank):
        return Pipeline(name, [Stage("retrieve", 3, retrieve), Stage("rerank", 2, rerank)])

    relevant = {"q1": {"r": 1}, "q2": {"s": 1}}
    judged = {"q1": {"r", "n"}, "q2": {"s"}}
    base = funnel(pipe("b", {"q1": ["r", "u", "n"], "q2": ["s", "v"]}, {"q1": ["r", "u"], "q2": ["s", "v"]}),
                  relevant, judged=judged)
    cand = funnel(pipe("c", {"q1": ["r", "n", "w"], "q2": ["s", "v"]}, {"q1": ["r", "n"], "q2": ["s", "v"]}),
                  relevant, judged=judged)
    assert cand.unjudged == {"retrieve": {"q1": ["w"], "q2": ["v"]}, "rerank": {"q2": ["v"]}}
    p = SimpleNamespace(qids=["q1", "q2"], funnels={"baseline": base, "candidate": cand})
    rule = Rule("no_stage_loss", None, "no_stage_loss")
    st = stage_stability(p, rule, "no_stage_loss", True, {"q1", "q2"})
    # u: the baseline keeps it at both stages, the candidate at neither; v: both keep it
    assert not st.stable and st.to_judge == [("q1", "u")] and st.outcomes["all"] is False
    assert stage_stability(p, rule, "no_stage_loss", True, {"q2"}).stable  # q1 is not must-pass
    assert stage_stability(p, rule, "no_stage_loss", True, {"q1", "q2"}, {"q1"}).stable  # q1 waived
    assert stage_stability(p, rule, "no_stage_loss", False, {"q1", "q2"}).stable  # a fail stays a fail
    floor = Rule("recall_floor", None, "stage_recall_floor", floor=0.9, stage="rerank")
    f = stage_stability(p, floor, "recall_floor", True, set())
    # rerank recall 1.0 now; w (retrieve only) relevant would make q1's 1/2: mean 0.75 < 0.9
    assert not f.stable and f.to_judge == [("q1", "w")] and f.outcomes["for_candidate"] is True


def test_appended_judgments_are_those_of_the_former_r_and_cast():
    """relabel appends the what-if's judgments to each run's by `_appended`: the same dtype and values as
    np.r_[a, b].astype(a.dtype) gave, for every pairing of integer types (wrapping casts too) and the float
    promotions, where it takes np.r_'s way."""
    from rankgate.core.bounds import _appended

    rng = np.random.default_rng(4)
    types = (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint32, np.uint64, np.float64)
    for ta in types:
        for tb in types:
            a = rng.integers(0, 120, 300).astype(ta)
            for b in (rng.integers(0, 2**40, 20), rng.integers(0, 3, 20), np.zeros(0, np.int64)):
                b = b.astype(tb)
                with np.errstate(invalid="ignore", over="ignore"):
                    want = np.r_[a, b].astype(a.dtype)
                    got = _appended(a, b)
                assert got.dtype == want.dtype and got.tobytes() == want.tobytes(), (ta, tb)
