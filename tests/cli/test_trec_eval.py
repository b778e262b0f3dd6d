"""`rankgate trec_eval` against trec_eval's own expected output, line for line.

The commands run in-process (rankgate.cli.main, stdout and stderr caught): a subprocess per command cost
~0.15 CPU s of start-up each. One test (test_lenient_files_are_scored_as_trec_eval_scores_them) runs
`python -m rankgate trec_eval` as a process, as a user or a script does: the entry point, the exit code and
the bytes a terminal sees. The conformance cases skip when ../shared/conformance is absent; the rest build
their files here.
"""

import contextlib
import gzip
import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import CONFORMANCE, ROOT, write

TESTS = CONFORMANCE / "trec_eval-tests"
DL19 = CONFORMANCE / "trec-dl-2019-passage"
needs_tests = pytest.mark.skipif(not TESTS.is_dir(), reason=f"no conformance data at {CONFORMANCE} (RANKGATE_CONFORMANCE names another place)")
needs_dl19 = pytest.mark.skipif(not DL19.is_dir(), reason=f"no DL 2019 data at {DL19} (RANKGATE_CONFORMANCE names another place)")


def trec_eval(*args, cwd=None) -> subprocess.CompletedProcess:
    """`rankgate trec_eval ARGS` in this process, run from `cwd`: its exit code, stdout and stderr."""
    from rankgate.cli import main

    argv = ["trec_eval", *map(str, args)]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.chdir(cwd or os.getcwd()), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return subprocess.CompletedProcess(argv, code, out.getvalue(), err.getvalue())


def trec_eval_process(*args, cwd=None) -> subprocess.CompletedProcess:
    """`python -m rankgate trec_eval ARGS` as its own process."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    return subprocess.run([sys.executable, "-m", "rankgate", "trec_eval", *map(str, args)], capture_output=True,
                          text=True, env=env, cwd=cwd, timeout=120)


def ok(*args, cwd=None) -> str:
    r = trec_eval(*args, cwd=cwd)
    assert r.returncode == 0, r.stderr
    return r.stdout


# The commands of trec_eval's own test suite (its Makefile's quicktest) that use options rankgate takes.
MEAS_PARAMS = ["-q", "-miprec_at_recall..10,.20,.25,.75,.50", "-m", "P.5,7,3", "-m", "recall.20,2000", "-m",
               "Rprec_mult.5.0,0.2,0.35", "-mutility.2,-1,0,0", "-m", "11pt_avg..25,.5,.75", "-mndcg.1=3,2=9,4=4.5",
               "-mndcg_cut.10,20,23.4", "-msuccess.2,5,20"]
CASES = {
    "out.test": ["qrels.test", "results.test"],
    "out.test.a": ["-m", "all_trec", "qrels.test", "results.test"],
    "out.test.aq": ["-m", "all_trec", "-q", "qrels.test", "results.test"],
    "out.test.aqc": ["-m", "all_trec", "-q", "-c", "qrels.test", "results.trunc"],
    "out.test.aqcM": ["-m", "all_trec", "-q", "-c", "-M100", "qrels.test", "results.trunc"],
    "out.test.aql": ["-m", "all_trec", "-mrelstring.20", "-q", "-l2", "qrels.rel_level", "results.test"],
    "out.test.meas_params": [*MEAS_PARAMS, "qrels.test", "results.test"],
    "out.comment.test": ["qrels.comment.test", "results.comment.test.gz"],
}
# Cases that need what rankgate does not read; each must be refused by name, not half-done.
REFUSED_CASES = {
    "out.test.aqZ": ["-q", "-m", "all_trec", "-Z", "zscores_file", "qrels.test", "results.test"],
    "out.test.prefs": ["-m", "all_prefs", "-q", "-R", "prefs", "prefs.test", "prefs.results.test"],
    "out.test.qrels_prefs": ["-m", "all_prefs", "-q", "qrels.test", "results.test"],
    "out.test.qrels_jg": ["-m", "qrels_jg", "-q", "-R", "qrels_jg", "qrels.123", "results.test"],
}


@needs_tests
def test_every_expected_output_is_covered():
    outs = {p.name for p in TESTS.glob("out.*")}
    assert outs == set(CASES) | set(REFUSED_CASES)


@pytest.mark.slow
@needs_tests
@pytest.mark.parametrize("version", ["10", "9"])
@pytest.mark.parametrize("out", sorted(CASES))
def test_trec_eval_test_suite_line_for_line(out, version):
    expected = TESTS / out if version == "10" else TESTS / "expected-trec_eval-9.0.7" / out
    if not expected.exists():
        pytest.skip(f"no trec_eval 9.0.7 output for {out}")
    got = ok("--trec-eval-version", version, *CASES[out], cwd=TESTS)
    assert got.splitlines() == expected.read_text().splitlines()


@pytest.mark.slow
@needs_tests
@pytest.mark.parametrize("out", sorted(REFUSED_CASES))
def test_unsupported_options_are_refused_by_name(out):
    r = trec_eval(*REFUSED_CASES[out], cwd=TESTS)
    assert r.returncode == 2 and r.stdout == ""
    assert len(r.stderr.splitlines()) == 1
    assert "not supported" in r.stderr and ("-Z" in r.stderr or "-R" in r.stderr or "prefs" in r.stderr)


def dl19_reference(run: str, level: int) -> list[str]:
    ref = DL19 / "reference-eval" / f"{run}.dl19.te907.q.c{'.l2' if level == 2 else ''}.all_trec.txt.gz"
    with gzip.open(ref, "rt") as f:
        return f.read().splitlines()


DL_RUNS = sorted(p.name.split(".dl19")[0] for p in (DL19 / "runs").glob("*.trec")) if DL19.is_dir() else []


@pytest.mark.slow
@needs_dl19
@pytest.mark.parametrize("level", [1, 2])
@pytest.mark.parametrize("run", DL_RUNS)
def test_dl19_runs_line_for_line_against_trec_eval_9(run, level):
    got = ok("--trec-eval-version", "9", "-q", "-c", f"-l{level}", "-m", "all_trec",
             DL19 / "qrels.dl19-passage.txt", DL19 / "runs" / f"{run}.dl19.trec")
    assert got.splitlines() == dl19_reference(run, level)


def _without(lines, prefixes):
    return [ln for ln in lines if not ln.startswith(prefixes)]


VERSIONED = ("iprec_at_recall", "11pt_avg", "rbp", "unj")  # 10 rounds R x level differently; 9 lacks rbp, unj


@pytest.mark.slow
@needs_dl19
@pytest.mark.parametrize("level", [1, 2])
@pytest.mark.parametrize("run", DL_RUNS)
def test_dl19_trec_eval_10_differs_from_9_only_where_the_versions_do(run, level):
    """Every line of trec_eval 10's output (rankgate's kernel) but the measures the versions define
    differently equals trec_eval 9.0.7's reference, digit for digit."""
    got = ok("-q", "-c", f"-l{level}", "-m", "all_trec", DL19 / "qrels.dl19-passage.txt",
             DL19 / "runs" / f"{run}.dl19.trec").splitlines()
    reference = dl19_reference(run, level)
    assert _without(got, VERSIONED) == _without(reference, VERSIONED)
    assert len(_without(got, VERSIONED)) > 3000
    if run == "REP_LLAMA":
        assert got != reference


C_TREC_EVAL = os.environ.get("TREC_EVAL") or shutil.which("trec_eval")
needs_c = pytest.mark.skipif(not C_TREC_EVAL, reason="no C trec_eval: put one on PATH or name it in TREC_EVAL")
DL19_OPTIONS = [["-q", "-c", "-l1"], ["-q", "-c", "-l2"], ["-q", "-c", "-M50", "-J"], ["-q", "-mrelstring.30"]]


def _c_trec_eval(*args, cwd=None) -> str:
    return subprocess.run([C_TREC_EVAL, *map(str, args)], capture_output=True, text=True, cwd=cwd,
                          check=True).stdout


@needs_c
@needs_tests
@pytest.mark.parametrize("out", sorted(CASES))
def test_trec_eval_test_suite_equals_the_c_trec_eval(out, tmp_path):
    args = CASES[out]
    if out == "out.comment.test":  # trec_eval reads no gzip: its own test gunzips the run first
        write(tmp_path / "results.comment.test", gzip.decompress((TESTS / args[1]).read_bytes()))
        args = [TESTS / args[0], tmp_path / "results.comment.test"]
    assert ok(*args, cwd=TESTS) == _c_trec_eval(*args, cwd=TESTS)


@needs_c
@needs_dl19
@pytest.mark.slow
@pytest.mark.parametrize("options", DL19_OPTIONS, ids=" ".join)
def test_dl19_every_line_equals_the_c_trec_eval(options):
    for run in DL_RUNS:
        args = [*options, "-m", "all_trec", DL19 / "qrels.dl19-passage.txt", DL19 / "runs" / f"{run}.dl19.trec"]
        assert ok(*args) == _c_trec_eval(*args), run


def test_trec_eval_imports_neither_numpy_nor_pyarrow_nor_the_engine(tmp_path):
    """trec_eval 10's path is plain Python: it starts in about the time Python does."""
    qrels = write(tmp_path / "qrels", "q1 0 d1 1\n")
    run = write(tmp_path / "run", "q1 Q0 d1 1 1.0 r\n")
    script = ("import sys\nfrom rankgate.cli import main\n"
              f"code = main(['trec_eval', '-q', '-c', '-m', 'all_trec', {str(qrels)!r}, {str(run)!r}])\n"
              "print(code, sorted(m for m in sys.modules if m.split('.')[0] in ('numpy', 'pyarrow', 'textual')"
              " or m in ('rankgate.core.engine', 'rankgate.core.formats', 'rankgate.core.measures')))")
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT,
                       env=dict(os.environ, PYTHONPATH=str(ROOT / "src")))
    assert r.stdout.splitlines()[-1] == "0 []", r.stderr


def _top(run_file: Path, depth: int, out: Path) -> Path:
    """The run cut to each ranking's top `depth` in trec_eval's order (score desc, docid desc)."""
    rows = [ln.split() for ln in run_file.read_text().splitlines() if ln.strip()]
    by_q: dict[str, list] = {}
    for r in rows:
        by_q.setdefault(r[0], []).append(r)
    keep = []
    for q, rs in by_q.items():
        rs.sort(key=lambda r: r[2].encode(), reverse=True)
        rs.sort(key=lambda r: float(r[4]), reverse=True)
        keep += rs[:depth]
    return write(out, "".join(" ".join(r) + "\n" for r in keep))


@needs_dl19
def test_dl19_depth_equals_a_cut_run(tmp_path):
    run = DL19 / "runs" / "REP_LLAMA.dl19.trec"
    qrels = DL19 / "qrels.dl19-passage.txt"
    deep = ok("-q", "-c", "-M", "100", "-m", "all_trec", qrels, run)
    cut = ok("-q", "-c", "-m", "all_trec", qrels, _top(run, 100, tmp_path / "REP_LLAMA.top100"))
    assert deep == cut
    assert deep != ok("-q", "-c", "-m", "all_trec", qrels, run)


# ---- files trec_eval accepts -----------------------------------------------------------------

QRELS = """q1 0 d1 2
q1 0 d2 0
q1 0 d3 1.5
q2 0 d1 1
q3 0 d9 0
"""


def test_lenient_files_are_scored_as_trec_eval_scores_them(tmp_path):
    qrels = write(tmp_path / "qrels", QRELS)
    run = write(tmp_path / "run", b"q1 Q0 d1 1 inf tagA\nq1 Q0 d\xff 2 3 tagA\n"
                b"q2 Q0 d1 1 1e0 tagA\nq4 Q0 d1 1 1 tagA\nq3 Q0 d9 1 1 tagB\n")
    r = trec_eval_process("-q", "-m", "num_ret", "-m", "num_rel", "-m", "P.2", "-m", "relstring", qrels, run)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    # q1: d1 (inf) first, then the unjudged d\xff; d3's grade 1.5 reads as 1, so q1 has 2 relevant documents.
    assert "num_rel               \tq1\t2" in lines
    assert "P_2                   \tq1\t0.5000" in lines
    assert "relstring             \tq1\t'2-'" in lines
    # q3 has no relevant document: scored, not refused; q4 is not in the qrels: ignored, as trec_eval does.
    assert "P_2                   \tq3\t0.0000" in lines
    assert not any("\tq4\t" in ln for ln in lines)
    assert lines[-3:] == ["num_ret               \tall\t4", "num_rel               \tall\t3",
                          "P_2                   \tall\t0.3333"]
    assert "runid                 \tall\ttagB" in ok("-m", "runid", qrels, run)  # the last line's tag
    assert "grade(s) are not whole numbers" in r.stderr and "1.5" in r.stderr


def test_gzip_and_non_utf8_ids_come_out_as_the_same_bytes_escaped(tmp_path):
    qrels = write(tmp_path / "qrels.gz", gzip.compress("q\xe9 0 d1 1\n".encode("latin-1")))
    run = write(tmp_path / "run.gz", gzip.compress("q\xe9 Q0 d1 1 2.0 r\n".encode("latin-1")))
    out = ok("-q", "-m", "recip_rank", qrels, run)
    assert "recip_rank            \tq\\udce9\t1.0000" in out.splitlines()


def test_a_qrels_query_missing_from_the_run_is_said_and_the_rest_scored(tmp_path):
    qrels = write(tmp_path / "qrels", QRELS.replace("1.5", "1"))
    run = write(tmp_path / "run", "q1 Q0 d1 1 2 r\n")
    r = trec_eval("-m", "num_q", "-m", "map", qrels, run)
    assert r.returncode == 0
    assert r.stdout.splitlines()[0] == "num_q                 \tall\t1"
    warning, = r.stderr.splitlines()
    assert "2 qrels queries have no ranking" in warning and "q2, q3" in warning and "-c" in warning
    r = trec_eval("-c", "-m", "num_q", "-m", "map", qrels, run)
    assert r.stderr == "" and "num_q                 \tall\t3" in r.stdout


def test_judged_only_drops_unjudged_documents_and_ranks_again(tmp_path):
    qrels = write(tmp_path / "qrels", "q1 0 d1 1\nq1 0 d2 0\n")
    run = write(tmp_path / "run", "q1 Q0 x 1 9 r\nq1 Q0 d2 2 8 r\nq1 Q0 y 3 7 r\nq1 Q0 d1 4 6 r\n")
    plain = ok("-m", "recip_rank", "-m", "num_ret", qrels, run).splitlines()
    judged = ok("-J", "-m", "recip_rank", "-m", "num_ret", qrels, run).splitlines()
    assert plain == ["num_ret               \tall\t4", "recip_rank            \tall\t0.2500"]
    assert judged == ["num_ret               \tall\t2", "recip_rank            \tall\t0.5000"]


def test_version_9_ties_scores_equal_as_floats(tmp_path):
    qrels = write(tmp_path / "qrels", "q1 0 b 1\n")  # tied, b comes first (document IDs descending)
    run = write(tmp_path / "run", "q1 Q0 a 1 36.000012 r\nq1 Q0 b 2 36.000011 r\n")
    assert "recip_rank            \tall\t0.5000" in ok("-m", "recip_rank", qrels, run)
    assert "recip_rank            \tall\t1.0000" in ok("--trec-eval-version", "9", "-m", "recip_rank", qrels, run)


@pytest.mark.parametrize("measure,says", [("prefs_simp", "preference files"), ("yaap", "yaap"),
                                          ("nonsense", "not a trec_eval measure"), ("map.5", "takes no parameters"),
                                          ("P.0", "1 or more")])
def test_measures_it_cannot_compute_are_refused_by_name(tmp_path, measure, says):
    qrels = write(tmp_path / "qrels", "q1 0 a 1\n")
    run = write(tmp_path / "run", "q1 Q0 a 1 1 r\n")
    r = trec_eval("-m", measure, qrels, run)
    assert r.returncode == 2 and r.stdout == ""
    assert says in r.stderr and len(r.stderr.splitlines()) == 1


def test_a_malformed_line_names_the_file_and_line(tmp_path):
    qrels = write(tmp_path / "qrels", "q1 0 a 1\nq1 0 b\n")
    run = write(tmp_path / "run", "q1 Q0 a 1 1 r\n")
    r = trec_eval(qrels, run)
    assert r.returncode == 2 and "qrels:2:" in r.stderr and "expected 4" in r.stderr


@pytest.mark.slow
@needs_dl19
@pytest.mark.parametrize("options", [["-c", "-l2", "-M50"], ["-J", "-mrelstring.30"]])
def test_the_kernel_and_the_engine_print_the_same(options):
    """trec_eval 10 (the per-query kernel) and --trec-eval-version 9 (the engine) on REP_LLAMA (1.4 MB,
    top 1000): the same lines but for the measures the versions define differently."""
    args = ["-q", *options, "-m", "all_trec", DL19 / "qrels.dl19-passage.txt", DL19 / "runs" / "REP_LLAMA.dl19.trec"]
    ten = ok(*args).splitlines()
    nine = ok("--trec-eval-version", "9", *args).splitlines()
    assert _without(ten, VERSIONED) == _without(nine, VERSIONED) and len(ten) > 3000


def test_ids_with_underscores_in_regular_qrels_are_read_and_grades_with_one_as_trec_eval_reads_them(tmp_path):
    """Regular qrels are read column-wise, their grades as ints: a '_' in a document ID (doc_1) did not reach
    the check for grades such as 1_0 as text, it crashed it (TypeError: argument of type 'int' ...)."""
    run = write(tmp_path / "run", b"q1 Q0 doc_1 1 2.0 t\nq1 Q0 doc_2 2 1.0 t\n")
    qrels = write(tmp_path / "qrels", b"q1 0 doc_1 1\nq1 0 doc_2 0\n")
    assert "num_rel               \tall\t1" in ok("-m", "num_rel", qrels, run).splitlines()
    odd = write(tmp_path / "odd", b"q1 0 doc_1 1_0\nq1 0 doc_2 0\n")  # atol reads 1_0 as 1, not 10
    r = trec_eval("-m", "num_rel", "-m", "relstring", odd, run)
    assert r.returncode == 0 and "num_rel               \tall\t1" in r.stdout.splitlines()
    assert "not whole numbers" in r.stderr and "1_0" in r.stderr
