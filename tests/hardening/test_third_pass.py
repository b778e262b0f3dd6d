"""Hardening, third pass (issue 18's last items and a red team on the commands added since): JSONL runs
read in memory proportional to what is kept, `labels export -o` never replacing an input, and bad input
to `trec_eval`, `labels suggest` (a judge's answers), `receipt verify`, `samples copy`, `init` and
`review --serve` refused in one line (exit 2, no traceback, nothing written).

Before this pass: a 540 MB JSONL run took 2.7 GB to score; `labels export -o` replaced a benchmark's
queries file or a run; each case below was a traceback, a silent misreading or a broken result."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rankgate.cli import main
from tests.conftest import ROOT, SAMPLES, write
from tests.hardening.test_inputs import one_line


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    cap = capsys.readouterr()
    return code, cap.out, cap.err


# ---- a JSONL run is read lean --------------------------------------------------------------------

_CAPPED = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, ({cap}, {cap}))
from rankgate.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.slow
def test_a_jsonl_run_of_millions_of_unjudged_documents_scores_in_little_memory(tmp_path):
    """1.5M distinct documents nobody judged (18 MB): only judged rows are kept, so score runs under a
    400 MB address-space cap (the general reader, interning every document, peaks at about 450 MB of
    resident memory and fails under that cap; bench/bench_jsonl.py measures 540 MB: 2.7 GB -> 128 MB)."""
    q = write(tmp_path / "q.trec", "".join(f"q{i} 0 j{i} 1\n" for i in range(1500)))
    path = tmp_path / "run.jsonl"
    with open(path, "w") as f:
        for i in range(1500):
            f.write(json.dumps({"query": f"q{i}", "ranking": [f"u{i}-{k}" for k in range(1000)] + [f"j{i}"]}) + "\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1",
               RANKGATE_FAST="1")
    p = subprocess.run([sys.executable, "-c", _CAPPED.format(cap=400 << 20), "score", "--qrels", str(q), "--runs",
                        str(path), "-m", "RR,NumRet", "--k", "1", "--short-rankings", "allow"],
                       capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    macro = json.loads(p.stdout)["macro"]
    assert macro["RR"] == pytest.approx(1 / 1001) and macro["NumRet"] == 1500 * 1001  # each judged one ranks last


# ---- labels export -o never replaces an input -----------------------------------------------------

@pytest.fixture
def bench(tmp_path):
    import shutil

    folder = tmp_path / "bench"
    shutil.copytree(SAMPLES / "ops-handbook", folder)
    return folder


@pytest.mark.parametrize("name, role", [("queries.jsonl", "queries"), ("runs/bm25-prf.jsonl", "run"),
                                        ("benchmark.toml", "benchmark.toml"), ("policy.toml", "policy"),
                                        ("corpus.jsonl", "corpus"), ("GUIDELINES.md", "guidelines"),
                                        ("runs/pipeline/bm25-plain-rerank.jsonl", "pipeline stage"),
                                        ("link", "queries")])
def test_an_export_never_replaces_a_file_of_the_benchmark(tmp_path, capsys, bench, name, role):
    """Before: `labels export -b BENCH -o BENCH/queries.jsonl` replaced the queries with qrels, exit 0.
    Refused even with --force, through a link too."""
    target = bench / name
    if name == "link":
        target = tmp_path / "link.txt"
        target.symlink_to(bench / "queries.jsonl")
    before = {p: p.read_bytes() for p in bench.rglob("*") if p.is_file()}
    code, _, err = run(capsys, "labels", "export", "-b", bench, "-o", target, "--force")
    line = one_line(err)
    assert code == 2 and f"is the {role} file of benchmark ops-handbook" in line and "nothing was written" in line
    assert {p: p.read_bytes() for p in bench.rglob("*") if p.is_file()} == before


def test_an_export_to_the_benchmarks_own_qrels_points_to_export_back(capsys, bench):
    before = (bench / "judgments.jsonl").read_bytes()
    code, _, err = run(capsys, "labels", "export", bench, "-o", bench / "judgments.jsonl")
    assert code == 2 and f"rankgate labels export {bench}` (without -o) writes it back" in one_line(err)
    assert (bench / "judgments.jsonl").read_bytes() == before


@pytest.mark.slow
def test_an_export_replaces_an_earlier_export_but_not_another_file_without_force(tmp_path, capsys, bench):
    notes = write(tmp_path / "notes.txt", "my notes\n")
    code, _, err = run(capsys, "labels", "export", bench, "-o", notes)
    assert code == 2 and "exists and holds no judgments" in one_line(err) and "--force" in err
    assert notes.read_text() == "my notes\n"
    run_file = write(tmp_path / "other.trec", "q1 Q0 d1 1 2.5 t\n")  # a run of another benchmark
    assert run(capsys, "labels", "export", bench, "-o", run_file)[0] == 2
    assert run_file.read_text() == "q1 Q0 d1 1 2.5 t\n"
    for fmt, plain in (("trec", False), ("trec", True), ("jsonl", False), ("json", True), ("json-graded", False)):
        out = tmp_path / f"export.{fmt}"
        for _ in range(2):  # the second replaces the first: an earlier export, with or without its header
            argv = ["labels", "export", bench, "-o", out, "--format", fmt] + (["--plain"] if plain else [])
            code, _, err = run(capsys, *argv)
            assert code == 0, (fmt, plain, err)
    empty = write(tmp_path / "empty.txt", "")
    assert run(capsys, "labels", "export", bench, "-o", empty)[0] == 0 and empty.stat().st_size > 0
    code, _, err = run(capsys, "labels", "export", bench, "-o", notes, "--force")
    lines = [ln for ln in notes.read_text().splitlines() if not ln.startswith("#")]
    assert code == 0 and lines and all(len(ln.split()) == 4 for ln in lines)  # judgments replaced the notes
    code, _, err = run(capsys, "labels", "export", bench, "-o", "")  # before: ValueError traceback
    assert code == 2 and "-o: expected a file name" in one_line(err)


# ---- trec_eval ------------------------------------------------------------------------------------

def test_trec_eval_refuses_a_grade_out_of_range_in_one_line(tmp_path, capsys):
    """Before: OverflowError traceback."""
    q = write(tmp_path / "q.trec", "q1 0 d1 1\nq1 0 d2 100000000000000000000000000\n")
    r = write(tmp_path / "r.trec", "q1 Q0 d1 1 2.0 t\n")
    code, out, err = run(capsys, "trec_eval", q, r)
    assert code == 2 and out == "" and "q.trec:2: grade 100000000000000000000000000 is out of range" in one_line(err)


@pytest.mark.parametrize("measure", ["utility.nan,1,0,0", "utility.1e400,1,0,0", "utility.1_0,1,0,0", "ndcg.1=nan",
                                     "ndcg.1=1e400", "ndcg.1=\u0663", "set_F.inf", "rbp.p=nan"])
def test_trec_eval_measure_parameters_are_finite_ascii_numbers(tmp_path, capsys, measure):
    """Before: exit 0 printing nan or inf (with a RuntimeWarning), or 1_0 read as 10 and a non-ASCII
    digit as a number."""
    q = write(tmp_path / "q.trec", "q1 0 d1 1\n")
    r = write(tmp_path / "r.trec", "q1 Q0 d1 1 2.0 t\n")
    code, out, err = run(capsys, "trec_eval", "-m", measure, q, r)
    assert code == 2 and out == "" and "parameters not understood" in one_line(err)
    assert run(capsys, "trec_eval", "-m", "utility.1,-1,0,0", "-m", "ndcg.1=2,2=9", q, r)[0] == 0


# ---- labels suggest: what a judge command answers -------------------------------------------------

JUDGE = """import sys
answer = {answer}
for line in sys.stdin:
    print(answer, flush=True)
"""


@pytest.mark.slow
@pytest.mark.parametrize("answer, why", [('"[" * 100000 + "]" * 100000', "nested 100000 deep"),
                                         ('\'{"id": 1, "a":\' * 50000 + "1" + "}" * 50000', "nested 50000 deep"),
                                         ("""'{"id": 1, "grade": 1, "reason": "bad \\\\ud800 x"}'""",
                                          "lone UTF-16 surrogate")],
                         ids=["nested-array", "nested-object", "surrogate-reason"])
def test_a_judges_broken_answer_is_a_failure_for_that_document(tmp_path, capsys, bench, answer, why):
    """Before: RecursionError or UnicodeEncodeError traceback (the surrogate one while storing it)."""
    judge = write(tmp_path / "judge.py", JUDGE.format(answer=answer))
    code, out, err = run(capsys, "labels", "suggest", bench, "--query", "q-leaked-key", "--max-calls", "1",
                         "--judge-command", f"{sys.executable} {judge}")
    assert "Traceback" not in err and code == 2
    assert f"failed: {why}" in out + err or why in out + err
    assert "0 suggestions stored" in out + err


# ---- receipt verify ---------------------------------------------------------------------------------

def test_a_receipt_whose_payload_is_nested_too_deeply_is_one_line(tmp_path, capsys):
    """Before: RecursionError traceback."""
    import base64

    payload = base64.b64encode(b'{"a":' * 50000 + b"1" + b"}" * 50000).decode()
    receipt = write(tmp_path / "r.json", json.dumps({"payloadType": "application/vnd.in-toto+json",
                                                     "payload": payload, "signatures": []}))
    code, _, err = run(capsys, "receipt", "verify", receipt)
    assert code == 2 and "payload is JSON nested too deeply" in one_line(err)


# ---- samples copy, init, review --serve ---------------------------------------------------------------

def test_samples_copy_leaves_a_folder_of_the_same_part_name_alone(tmp_path, capsys, monkeypatch):
    """Before: `samples copy keep` first removed an existing `.keep.part` folder (someone's)."""
    monkeypatch.chdir(tmp_path)
    mine = write(tmp_path / ".keep.part" / "mine.txt", "mine\n")
    assert run(capsys, "samples", "copy", "keep", "--only", "three-questions")[0] == 0
    assert mine.read_text() == "mine\n" and (tmp_path / "keep" / "three-questions" / "benchmark.toml").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == [".keep.part", "keep"]
    code, _, err = run(capsys, "samples", "copy", "")
    assert code == 2 and "DIR is empty" in one_line(err)


@pytest.mark.parametrize("flag, value, expect", [("--k", "99999999999999999999", "k must be at most 1000000"),
                                                 ("--rel-level", "99999999999999999999999", "out of range")])
def test_init_never_writes_a_benchmark_its_reader_refuses(tmp_path, capsys, flag, value, expect):
    """Before: exit 0, and every command on the folder then refused its benchmark.toml."""
    q = write(tmp_path / "q.trec", "q1 0 d1 1\n")
    r = write(tmp_path / "r.trec", "q1 Q0 d1 1 2.0 t\n")
    code, _, err = run(capsys, "init", tmp_path / "b", "--qrels", q, "--runs", r, flag, value)
    assert code == 2 and expect in one_line(err) and not (tmp_path / "b").exists()


@pytest.mark.parametrize("extra, expect", [(["--k", "0"], "k must be between 1"),
                                           (["--k", "99999999999"], "k must be between 1"),
                                           (["--rel-level", "99999999999999999999999"], "out of range"),
                                           (["-m", "nope"], "unknown measure"),
                                           (["--runs", "FIFO"], "is a pipe"),
                                           (["--queries", "FOLDER"], "is a folder")])
def test_review_serve_refuses_what_every_session_would_fail_on(tmp_path, capsys, extra, expect):
    """Before: the server started, and every browser session then failed on the same argument."""
    pytest.importorskip("textual_serve")
    fifo = tmp_path / "in.fifo"
    os.mkfifo(fifo)
    extra = [str(fifo) if x == "FIFO" else str(tmp_path) if x == "FOLDER" else x for x in extra]
    code, _, err = run(capsys, "review", SAMPLES / "three-questions", "--serve", "--port", "8799", *extra)
    assert code == 2 and expect in one_line(err)


def test_nothing_here_names_the_real_dev_null():
    assert "/dev/null" not in Path(__file__).read_text().replace('"/dev/null" not in', "")


def test_a_judge_prompt_that_is_a_fifo_is_refused_and_never_waited_on(tmp_path, capsys, bench):
    """Before: a FIFO as --judge-prompt hung for ever (and /dev/zero grew until MemoryError)."""
    fifo = tmp_path / "prompt.fifo"
    os.mkfifo(fifo)
    code, _, err = run(capsys, "labels", "suggest", bench, "--query", "q-leaked-key", "--max-calls", "1",
                       "--judge-url", "http://127.0.0.1:9/v1", "--judge-model", "m", "--judge-prompt", fifo)
    assert code == 2 and "prompt template cannot be read: is a pipe" in one_line(err)


def test_suggest_limit_below_1_is_refused(capsys, bench):
    """Before: --judged --limit -5 asked about every pair but the last five, exit 0."""
    code, _, err = run(capsys, "labels", "suggest", bench, "--judged", "--limit", "-5",
                       "--judge-command", f"{sys.executable} judges/lexical.py")
    assert code == 2 and "--limit: N must be at least 1" in one_line(err)


def test_running_out_of_memory_is_one_line_and_exit_2(tmp_path, monkeypatch, capsys):
    """The last guard behind every reader's bound: a process cap below what must be kept (e.g. trec_eval
    on a huge gzipped run) ends in one line, not a MemoryError traceback."""
    import rankgate.core.trec_eval as trec_eval_core
    from rankgate.cli import main

    qrels, run = tmp_path / "q.trec", tmp_path / "r.trec"
    qrels.write_text("q1 0 d1 1\n")
    run.write_text("q1 Q0 d1 1 1.0 t\n")

    def no_memory(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(trec_eval_core, "judged_by_query", no_memory)
    assert main(["trec_eval", str(qrels), str(run)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: out of memory in `rankgate trec_eval`"), err


@pytest.mark.parametrize("lean", [True, False])
@pytest.mark.parametrize("line, expected", [
    ('{"query": "q1", "ranking": ["d1"], "latency_m": 5}', "unknown key 'latency_m' in a ranking line (did you mean 'latency_ms'?"),
    ('{"query": "q1", "ranking": [{"doc": "d1", "scor": 2}]}', "unknown key 'scor' in ranking[0] (did you mean 'score'?"),
])
def test_a_misspelt_key_in_a_jsonl_run_is_refused_not_ignored(tmp_path, monkeypatch, capsys, lean, line, expected):
    """A misspelt latency_ms would leave a budget rule without its numbers; a misspelt score would rank by
    position: both are refused on the lean and the general path."""
    import rankgate.cli.evaluate as evaluate
    from rankgate.cli import main

    monkeypatch.setattr(evaluate, "FAST_MIN_BYTES", 0)
    monkeypatch.setenv("RANKGATE_FAST", "1" if lean else "0")
    qrels, run = tmp_path / "q.trec", tmp_path / "r.jsonl"
    qrels.write_text("q1 0 d1 1\n")
    run.write_text(line + "\n")
    assert main(["score", "--qrels", str(qrels), "--runs", str(run)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "r.jsonl:1: " + expected in err, err


def test_out_of_memory_while_compare_writes_its_json_says_the_output_is_cut(monkeypatch, capsys):
    """compare's JSON is written as it is made (cli.base.JsonOut): memory running out part-way leaves a cut
    text on stdout, and the error line says to discard it, not "nothing was written"."""
    import rankgate.core.jsontext as jsontext
    from rankgate.cli import base, main

    made = jsontext.pieces

    def then_no_memory(data, out):
        made(data, out=out)  # the text, then the next piece cannot be made
        raise MemoryError

    monkeypatch.setattr(base.JsonOut, "AT_ONCE", 64)  # written as soon as 64 characters are kept
    monkeypatch.setattr(jsontext, "pieces", then_no_memory)
    assert main(["compare", "sample_benchmarks/seed-lab"]) == 2
    out, err = capsys.readouterr()
    assert out.startswith("{") and err.count("\n") == 1
    assert err.startswith("error: out of memory in `rankgate compare`") and "stops part-way: discard it" in err, err
    monkeypatch.setattr(jsontext, "pieces", made)
    assert main(["compare", "sample_benchmarks/seed-lab"]) == 0 and not base.stdout_cut  # a whole text: not cut
