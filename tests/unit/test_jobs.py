"""`--jobs N`: large TREC runs read with N blocks worked on at once give exactly what one at a time gives."""

import json

import numpy as np
import pytest

from rankgate.cli import main
from tests.conftest import write

pytest.importorskip("pyarrow")


@pytest.fixture(autouse=True)
def small_blocks(monkeypatch):
    """Small files through the fast path, in many small blocks (lines and queries cut across them)."""
    from rankgate.core.formats import trec_fast as fast

    monkeypatch.setattr(fast, "MIN_BYTES", 0)
    monkeypatch.setattr(fast, "BLOCK", 997)


def dense_inputs(tmp_path, seed: int, shuffled: bool, queries: int = 40, depth: int = 60, duplicate=False):
    """qrels and two runs (the second: each query's scores dealt again) with score ties and pooled
    qrels (most judged documents retrieved); `duplicate`: a line of the first run twice."""
    rng = np.random.default_rng(seed)
    lines, other, qrels = [], [], []
    for q in range(queries):
        docs = rng.choice(500, size=depth, replace=False)
        scores = np.sort(rng.integers(0, 40, size=depth))[::-1] / 4  # many ties
        lines += [f"q{q} Q0 doc-{d} {r + 1} {s} run\n" for r, (d, s) in enumerate(zip(docs, scores))]
        other += [f"q{q} Q0 doc-{d} {r + 1} {s} b\n" for r, (d, s) in enumerate(zip(docs, rng.permutation(scores)))]
        judged = set(rng.choice(docs, size=depth // 3, replace=False).tolist()) | {600 + q}
        qrels += [f"q{q} 0 doc-{d} {rng.integers(0, 4)}\n" for d in sorted(judged)]
    if duplicate:
        lines.append(lines[5])
    if shuffled:
        lines = [lines[i] for i in rng.permutation(len(lines))]
    return (write(tmp_path / "qrels.txt", "".join(qrels)), write(tmp_path / "run.txt", "".join(lines)),
            write(tmp_path / "b.txt", "".join(other)))


@pytest.mark.slow
@pytest.mark.parametrize("shuffled", [False, True])
@pytest.mark.parametrize("keep_top", [0, 10])
def test_every_field_of_the_run_read_is_the_same_for_any_jobs(tmp_path, monkeypatch, shuffled, keep_top):
    from rankgate.core.formats import read_qrels
    from rankgate.core.formats.trec_fast import _Reader, read_lean_run

    at_once = []
    real = _Reader._blocks_at_once
    monkeypatch.setattr(_Reader, "_blocks_at_once", lambda self: at_once.append(self.jobs) or real(self))

    q, r, _ = dense_inputs(tmp_path, 36, shuffled, duplicate=True)
    qrels = read_qrels(str(q))
    one = read_lean_run(str(r), "run", qrels, keep_top=keep_top, jobs=1)
    assert one is not None and one.lines > 2000 and one.n_duplicates == 1
    for jobs in (2, 3):
        many = read_lean_run(str(r), "run", qrels, keep_top=keep_top, jobs=jobs)
        for field in ("qnames", "duplicates", "n_duplicates", "lines", "top_docs", "keep_top"):
            assert getattr(many, field) == getattr(one, field), field
        for field in ("num_ret", "jq", "jdoc", "jrank", "top_q", "top_rank"):
            assert np.array_equal(getattr(many, field), getattr(one, field)), field
    assert 2 in at_once and 3 in at_once and 1 not in at_once  # the blocks were read at once


@pytest.mark.parametrize("piece", [1, 37, 10**9])
def test_a_scattered_run_counted_in_pieces_at_once_is_ranked_as_in_one(tmp_path, monkeypatch, piece):
    """_rank_by_counting: a scattered file's rows counted in pieces of RANK_PIECE rows, two at once
    (jobs 2, threads), give every judged row the rank that one piece at a time gives (ties included)."""
    from rankgate.core.formats import read_qrels
    from rankgate.core.formats import trec_fast as fast

    q, r, _ = dense_inputs(tmp_path, 38, shuffled=True, duplicate=True)
    qrels = read_qrels(str(q))
    one = fast.read_lean_run(str(r), "run", qrels, jobs=1)
    monkeypatch.setattr(fast, "RANK_PIECE", piece)
    at_once = []
    real = fast._in_threads
    monkeypatch.setattr(fast, "_in_threads", lambda f, items, jobs: at_once.append((len(items), jobs))
                        or real(f, items, jobs))
    many = fast.read_lean_run(str(r), "run", qrels, jobs=2)
    assert one.lines > 2000 and len(one.jrank) > 500
    for field in ("num_ret", "jq", "jdoc", "jrank"):
        assert np.array_equal(getattr(many, field), getattr(one, field)), field
    assert (many.duplicates, many.n_duplicates) == (one.duplicates, one.n_duplicates)
    pieces = sum(pieces for pieces, jobs in at_once if jobs == 2)  # (10**9: a piece a block)
    assert pieces == one.lines if piece == 1 else pieces > 2


@pytest.mark.parametrize("shuffled", [False, True])
@pytest.mark.parametrize("jobs", [1, 2])
def test_query_names_looked_up_by_arrow_or_by_dict_give_the_same_run(tmp_path, monkeypatch, shuffled, jobs):
    """_Names: a block's query names looked up among the run's and the qrels' by pyarrow's hash lookup
    (ARROW_LOOKUP 0: every block) or by a Python dict (10**9: every block) give the same codes, in the same
    order of first naming; a query whose lines are in two places is one query."""
    from rankgate.core.formats import read_qrels
    from rankgate.core.formats import trec_fast as fast

    q, r, _ = dense_inputs(tmp_path, 37, shuffled, duplicate=True)
    lines = r.read_text().splitlines(keepends=True)
    r.write_text("".join(lines[:300] + lines[300:310] * 2 + lines[310:]))  # q5 again after q6 (grouped)
    qrels = read_qrels(str(q))
    got = {}
    for way in (0, 10**9):
        monkeypatch.setattr(fast, "ARROW_LOOKUP", way)
        got[way] = fast.read_lean_run(str(r), "run", qrels, jobs=jobs, by_pair=True)
    arrow, python = got[0], got[10**9]
    assert arrow.qnames == python.qnames and len(arrow.qnames) == 40 and arrow.n_duplicates == python.n_duplicates
    for field in ("num_ret", "jq", "jentry", "jrank"):
        assert np.array_equal(getattr(arrow, field), getattr(python, field)), field
    assert len(arrow.jq) > 300


@pytest.mark.parametrize("way", [0, 10**9])
def test_names_are_found_by_arrow_as_by_dict(monkeypatch, way):
    from rankgate.core.formats import trec_fast as fast
    from rankgate.core.formats.trec_fast import _Names, _strings

    monkeypatch.setattr(fast, "ARROW_LOOKUP", way)
    fixed = _Names(["a", "b", "é"], np.array([7, 8, 9]))
    index = {"a": 7, "b": 8, "é": 9}
    assert fixed.codes(_strings(["é", "x", "a", "b", "a"]), index).tolist() == [9, -1, 7, 8, 7]
    names, index = ["q1"], {"q1": 0}
    grown = _Names(names)
    assert grown.codes(_strings(["q1", "q2"]), index).tolist() == [0, -1]
    names.append("q2"), index.setdefault("q2", 1)
    assert grown.codes(_strings(["q2", "q3", "q1"]), index).tolist() == [1, -1, 0]
    assert grown.codes(_strings([]), index).tolist() == [] and len(grown.arrow or names) == 2


def without_when_and_how(data):
    """A receipt less when it was written, its command line (with --jobs) and the digests over those."""
    from rankgate.core.receipt import NOT_RECOMPUTED

    if isinstance(data, dict):
        return {k: without_when_and_how(v) for k, v in data.items() if k not in NOT_RECOMPUTED or k == "inputs"}
    if isinstance(data, list):
        return [without_when_and_how(v) for v in data]
    return data


def run_cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.slow
@pytest.mark.parametrize("shuffled", [False, True])
def test_score_compare_and_gate_print_the_same_for_jobs_1_and_2(tmp_path, capsys, shuffled):
    """Every value: per-query scores of every measure, the comparison, the gate's receipt."""
    q, r, r2 = dense_inputs(tmp_path, 7, shuffled)
    measures = "AP,nDCG@10,nDCG,RR@10,R@100,P@10,Judged@10,bpref"
    common = ["--qrels", q, "--missing-queries", "zero", "--short-rankings", "allow"]
    outs = {}
    for jobs in (1, 2):
        got = []
        code, out, err = run_cli(capsys, "score", *common, "--runs", r, "--runs", f"b={r2}", "-m", measures,
                                 "--format", "trec", "-q", "--jobs", jobs)
        assert code == 0, err
        got.append(out)
        code, out, err = run_cli(capsys, "compare", *common, "--runs", r, "--runs", f"b={r2}", "--format", "json",
                                 "--jobs", jobs)
        assert code in (0, 1), err
        got.append(out)
        receipt = tmp_path / f"receipt{jobs}.json"
        code, out, err = run_cli(capsys, "gate", *common, "--runs", r, "--runs", f"b={r2}", "--baseline", "run",
                                 "--candidate", "b", "--receipt", receipt, "--jobs", jobs)
        assert code in (0, 3), err
        got.append(json.dumps(without_when_and_how(json.loads(receipt.read_text())), sort_keys=True))
        outs[jobs] = got
    assert len(outs[1][0].splitlines()) > 40 * 8  # per-query lines: every value compared
    assert outs[1][0] == outs[2][0]
    assert outs[1][1] == outs[2][1]
    assert outs[1][2] == outs[2][2]


def test_a_bad_line_deep_in_the_file_is_named_the_same_with_any_jobs(tmp_path, capsys):
    q, r, _ = dense_inputs(tmp_path, 3, False)
    text = r.read_text().splitlines(keepends=True)
    text.insert(1500, "q7 Q0 doc-1 1 0.5\n")
    write(r, "".join(text))
    errs = []
    for jobs in (1, 2):
        code, out, err = run_cli(capsys, "score", "--qrels", q, "--runs", r, "--jobs", jobs)
        assert code == 2 and "Traceback" not in err and not out
        errs.append(err)
    assert errs[0] == errs[1] and ":1501:" in errs[0]


@pytest.mark.parametrize("bad", ["0", "-2", "many"])
def test_jobs_below_one_is_refused_in_one_line(tmp_path, capsys, bad):
    q, r, _ = dense_inputs(tmp_path, 1, False, queries=2, depth=5)
    code, out, err = run_cli(capsys, "score", "--qrels", q, "--runs", r, "--jobs", bad)
    assert code == 2 and not out and len(err.strip().splitlines()) == 1 and "--jobs" in err
