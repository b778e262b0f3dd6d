"""The CLI as CI uses it: exit codes, one-line errors, receipts, the headless path."""

import json
import subprocess
import sys

import pytest

from rankgate.cli import main
from tests.conftest import SAMPLES, write

LAB = SAMPLES / "seed-lab"


def cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_validate_reports_every_problem_at_once(tmp_path, capsys):
    q = write(tmp_path / "q.json", '{"q1": ["d1", "d1"], "q2": [], "q3": ["d3"]}')
    r = write(tmp_path / "r.json", '{"run": {"q1": ["d1", "d1", "d2"], "q3": ["d3"], "q9": ["d1", "d2", "d3"]}}')
    code, out, err = cli(capsys, "validate", "--qrels", q, "--runs", r, "--k", "3")
    assert code == 2
    rules = [p["rule"] for p in json.loads(out)["problems"]]
    assert sorted(rules) == sorted(["duplicate-relevant", "empty-relevant", "missing-queries", "extra-queries",
                                    "duplicate-ranked", "short-ranking"])
    assert "'q2'" in err and "'q9'" in err and '$["run"]["q1"][1]' in err
    assert "Traceback" not in err


def test_policies_relax_validation(tmp_path, capsys):
    q = write(tmp_path / "q.json", '{"q1": ["d1"], "q2": ["d2"]}')
    r = write(tmp_path / "r.json", '{"run": {"q1": ["d1"]}}')
    code, out, _ = cli(capsys, "score", "--qrels", q, "--runs", r, "--missing-queries", "zero",
                       "--short-rankings", "allow")
    assert code == 0
    res = json.loads(out)
    assert res["macro"]["recall_at_k"] == pytest.approx(0.5)  # q2 scores 0


def test_no_answer_queries_are_reported_apart(tmp_path, capsys):
    q = write(tmp_path / "q.json", '{"q1": ["d1"], "q2": []}')
    qs = write(tmp_path / "queries.jsonl", '{"id": "q1", "text": "a"}\n{"id": "q2", "text": "b", "no_answer": true}\n')
    r = write(tmp_path / "r.json", '{"run": {"q1": ["d1", "d2", "d3"], "q2": ["d4", "d5", "d6"]}}')
    code, out, err = cli(capsys, "score", "--qrels", q, "--runs", r, "--queries", qs)
    assert code == 0, err
    res = json.loads(out)
    assert [x["query"] for x in res["queries"]] == ["q1"]
    assert res["macro"]["recall_at_k"] == 1.0 and res["no_answer_queries"] == ["q2"]


def test_rel_level_flag(tmp_path, capsys):
    q = write(tmp_path / "q.trec", "q1 0 d1 1\nq1 0 d2 2\n")
    r = write(tmp_path / "r.trec", "q1 Q0 d1 1 2 t\nq1 Q0 d2 2 1 t\nq1 Q0 d3 3 0.5 t\n")
    _, out, _ = cli(capsys, "score", "--qrels", q, "--runs", r, "--rel-level", "2")
    assert json.loads(out)["macro"]["mrr_at_k"] == 0.5


@pytest.mark.parametrize("argv,needle", [
    (["score", "--qrels", "/nonexistent/q", "--runs", "x"], "/nonexistent/q: no such file"),
    (["gate", LAB, "--baseline", "nope"], "unknown run 'nope'"),
    (["gate", LAB, "--must-pass", "q-nope"], "must-pass query 'q-nope'"),
    (["score", LAB, "-m", "P@x"], "'P@x'"),
    (["score", LAB, "--k", "0"], "k must be at least 1"),
    (["score", "--bogus"], "unrecognized arguments"),
])
def test_bad_input_one_line_exit_2(capsys, argv, needle):
    code, _, err = cli(capsys, *argv)
    assert code == 2
    assert needle in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_policy_file_rules_and_flags_override(tmp_path, capsys):
    pol = write(tmp_path / "policy.toml", 'k = 3\nmust_pass = ["q-recovery"]\n'
                '[[rules]]\nmeasure = "nDCG@3"\ncheck = "floor"\nmin = 0.99\n')
    code, out, _ = cli(capsys, "gate", LAB, "--candidate", "candidate_good", "--policy", pol)
    assert code == 0 and json.loads(out)["checks"]["nDCG@3_floor"] is True  # nDCG@3 is 1.0
    code, out, _ = cli(capsys, "gate", LAB, "--candidate", "baseline", "--policy", pol)
    assert code == 3
    res = json.loads(out)
    assert res["checks"] == {"nDCG@3_floor": False, "must_pass_queries_hit": True}
    bad = write(tmp_path / "bad.toml", 'k = 3\nfloor = 1\n')
    code, _, err = cli(capsys, "gate", LAB, "--policy", bad)
    assert code == 2 and "unknown policy key 'floor'" in err


def test_tolerance_lets_a_small_drop_pass(tmp_path, capsys):
    pol = write(tmp_path / "p.toml", '[[rules]]\nmeasure = "R@3"\ntolerance = 0.25\n')
    code, out, _ = cli(capsys, "gate", LAB, "--policy", pol, "--must-pass", "q-dns")
    assert code == 0, out
    pol2 = write(tmp_path / "p2.toml", '[[rules]]\nmeasure = "R@3"\ntolerance = 0.1\n')
    code, _, _ = cli(capsys, "gate", LAB, "--policy", pol2, "--must-pass", "q-dns")
    assert code == 3


def test_receipt_hashes_every_input(tmp_path, capsys):
    import hashlib

    receipt = tmp_path / "receipt.json"
    code, _, _ = cli(capsys, "gate", LAB, "--receipt", receipt)
    assert code == 3
    rec = json.loads(receipt.read_text())["predicate"]
    assert rec["exit_code"] == 3 and rec["decision"] == "reject" and rec["k"] == 3
    roles = {i["role"]: i for i in rec["inputs"]}
    assert set(roles) == {"manifest", "qrels", "run"}
    assert roles["qrels"]["sha256"] == hashlib.sha256((LAB / "qrels.json").read_bytes()).hexdigest()
    assert "R@3" in rec["measure_definitions"] and rec["result"]["accepted"] is False


def test_receipt_to_missing_folder_is_one_line(tmp_path, capsys):
    code, _, err = cli(capsys, "gate", LAB, "--receipt", tmp_path / "no" / "r.json")
    assert code == 2 and "folder does not exist" in err


def test_headless_path_never_imports_textual():
    code = ("import sys\nfrom rankgate.cli import main\nimport rankgate.core.engine, rankgate.core.gate\n"
            f"rc = main(['gate', {str(LAB)!r}])\n"
            "assert 'textual' not in sys.modules, 'textual imported'\nassert 'tinydb' not in sys.modules, 'tinydb imported'\n"
            "print('rc', rc)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "rc 3" in out.stdout


def test_core_never_imports_textual_or_tinydb():
    code = ("import sys, pkgutil, importlib, rankgate.core\n"
            "for m in pkgutil.walk_packages(rankgate.core.__path__, 'rankgate.core.'):\n"
            "    importlib.import_module(m.name)\n"
            "bad = [n for n in ('textual', 'tinydb') if n in sys.modules]\nassert not bad, bad\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


def test_python_dash_m_entry_point():
    out = subprocess.run([sys.executable, "-m", "rankgate", "validate", str(LAB)], capture_output=True, text=True)
    assert out.returncode == 0 and json.loads(out.stdout)["status"] == "valid"


def test_trec_format_and_table(capsys):
    code, out, _ = cli(capsys, "score", LAB, "--run", "baseline", "--format", "trec", "-m", "P@3,recip_rank")
    assert code == 0
    assert "P_3                   \tall\t0.5333" in out and "recip_rank" in out
    code, out, _ = cli(capsys, "score", LAB, "--run", "candidate_bad", "--format", "table")
    assert "q-recovery" in out and "NO" in out and "doc-restore-test" in out


def test_score_table_cuts_long_missing_lists_the_json_keeps_them(tmp_path, capsys, monkeypatch):
    """A run that misses hundreds of relevant IDs: the table fits 100 columns (piped), the JSON lists all."""
    import json as _json

    monkeypatch.setenv("COLUMNS", "100")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"q1 0 doc-{i:04d} 1\n" for i in range(500)), encoding="utf-8")
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 doc-0000 1 1.0 r\nq1 Q0 other 2 0.5 r\n", encoding="utf-8")
    code, out, _ = cli(capsys, "score", "--qrels", str(qrels), "--runs", str(run), "--k", "2", "--format", "table")
    assert code == 0
    assert "Success@2" in out and "hit@" not in out
    assert max(len(line) for line in out.splitlines()) <= 100
    assert "doc-0001, doc-0002" in out and " more" in out and "doc-0499" not in out
    code, out, _ = cli(capsys, "score", "--qrels", str(qrels), "--runs", str(run), "--k", "2")
    data = _json.loads(out)
    text = _json.dumps(data)
    assert "doc-0499" in text


def test_score_qrels_run_as_trec_eval_takes_them_says_how_runs_are_given(capsys):
    three = SAMPLES / "three-questions"
    code, out, err = cli(capsys, "score", three / "qrels.trec", three / "run.trec")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert err.strip() == (f"error: rankgate score: unrecognized arguments: {three / 'run.trec'} (runs are given with "
                           "--runs FILE, one --runs per run; or use `rankgate trec_eval QRELS RUN`)")
    code, _, err = cli(capsys, "score", LAB, "--bogus")  # a stray flag: no word about runs
    assert code == 2 and err.strip() == "error: rankgate score: unrecognized arguments: --bogus"


def test_counts_take_their_noun_in_the_right_number(tmp_path, capsys):
    from rankgate.cli.base import counted

    assert (counted(1, "judgment"), counted(0, "judgment"), counted(2, "query", "queries")) == \
        ("1 judgment", "0 judgments", "2 queries")
    qrels = write(tmp_path / "q.trec", "q1 0 d1 1\n")
    db = tmp_path / "w.json"
    assert cli(capsys, "labels", "import", "--db", db, qrels)[0] == 0
    code, out, _ = cli(capsys, "labels", "export", "--db", db, "--format", "trec", "-o", tmp_path / "out.trec")
    assert code == 0 and out.startswith(f"wrote 1 judgment to {tmp_path / 'out.trec'} (trec")
    code, out, _ = cli(capsys, "labels", "freeze", "--db", db, "v1")
    assert code == 0 and out.startswith("froze v1: 1 judgment over 1 query, ")


def test_labels_queue_takes_the_benchmark_as_b_too(capsys):
    code, positional, _ = cli(capsys, "labels", "queue", LAB, "--json")
    assert code == 0 and json.loads(positional)
    code, flag, _ = cli(capsys, "labels", "queue", "-b", LAB, "--json")
    assert code == 0 and flag == positional
    code, _, err = cli(capsys, "labels", "queue", "-b", LAB, SAMPLES / "ops-handbook")
    assert code == 2 and "name the benchmark folder once" in err
