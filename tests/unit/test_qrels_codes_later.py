"""The fast qrels reader leaves the document codes to be made when first asked for (`score` never asks):
the codes it then makes, the catalog they fill and everything read, scored or checked against such qrels are
what the reader gave when it made them at once (the path before, forced here by `_pairs_once_hashed`)."""

import threading

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from tests.conftest import write

pytest.importorskip("pyarrow")


def _qrels_text(rows):
    return "".join(f"{q} 0 {d} {g}\n" for q, d, g in rows)


def _read(path, monkeypatch, now: bool):
    """The fast reader's qrels; `now`: the codes made at once (the eager path)."""
    from rankgate.core.formats import trec_fast as fast

    monkeypatch.setattr(fast, "MIN_BYTES", 0)
    if now:
        monkeypatch.setattr(fast, "_pairs_once_hashed", lambda q, h: False)
    try:
        return fast.read_trec_qrels_fast(str(path))
    finally:
        monkeypatch.setattr(fast, "_pairs_once_hashed", _PAIRS_ONCE_HASHED)


from rankgate.core.formats.trec_fast import _pairs_once_hashed as _PAIRS_ONCE_HASHED  # noqa: E402


QRELS_ROWS = st.lists(st.tuples(st.sampled_from(["q1", "q2", "10", "q3"]),
                                st.sampled_from(["d1", "d2", "doc-3", "é4", "d10", "d11", "x"]),
                                st.integers(-1, 3)), min_size=1, max_size=25)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=QRELS_ROWS, catalog_first=st.booleans())
def test_codes_made_later_are_the_codes_made_at_once(tmp_path, monkeypatch, rows, catalog_first):
    from rankgate.core.model import is_later

    rows = list({(q, d): (q, d, g) for q, d, g in rows}.values())  # each pair once
    path = write(tmp_path / "q.trec", _qrels_text(rows))
    now, later = _read(path, monkeypatch, True), _read(path, monkeypatch, False)
    assert now is not None and later is not None
    assert not is_later(now, "doc") and is_later(later, "doc")
    assert later.q.tolist() == now.q.tolist() and later.grade.tolist() == now.grade.tolist()
    assert later.catalog.queries.names == now.catalog.queries.names
    if catalog_first:  # the catalog asked for first (a run read the usual way interns its documents there)
        assert later.catalog.docs.names == now.catalog.docs.names
    assert later.doc.tolist() == now.doc.tolist() and not is_later(later, "doc")
    assert later.doc.dtype == now.doc.dtype and not later.doc.flags.writeable
    assert later.catalog.docs.names == now.catalog.docs.names == list(dict.fromkeys(d for _, d, _ in rows))
    assert later.catalog.docs.order().tolist() == now.catalog.docs.order().tolist()
    assert later.as_dict() == now.as_dict()


def test_a_pair_judged_twice_is_still_refused(tmp_path, monkeypatch):
    """The hashed check finds the pair twice; the exact one then refuses the file (the general reader names it)."""
    path = write(tmp_path / "q.trec", _qrels_text([("q1", "d1", 1), ("q1", "d2", 0), ("q1", "d1", 2)]))
    assert _read(path, monkeypatch, False) is None


def test_two_documents_of_one_hash_make_their_codes_at_once(tmp_path, monkeypatch):
    """Two documents whose hashes agree (forced here) may be one pair twice: the codes are made at once and
    checked exactly; distinct pairs pass."""
    from rankgate.core.formats import trec_fast as fast
    from rankgate.core.model import is_later

    monkeypatch.setattr(fast, "MIN_BYTES", 0)
    path = write(tmp_path / "q.trec", _qrels_text([("q1", "d1", 1), ("q1", "d2", 0), ("q2", "d1", 2)]))
    real = fast.hash_strings
    monkeypatch.setattr(fast, "hash_strings", lambda d: np.zeros(len(d), np.uint64) if len(d) == 3 else real(d))
    qrels = fast.read_trec_qrels_fast(str(path))
    assert qrels is not None and not is_later(qrels, "doc")
    assert qrels.as_dict() == {"q1": {"d1": 1, "d2": 0}, "q2": {"d1": 2}}


def test_threads_asking_at_once_intern_the_documents_once(tmp_path, monkeypatch):
    path = write(tmp_path / "q.trec", _qrels_text([(f"q{i % 5}", f"d{i}", i % 3) for i in range(400)]))
    qrels = _read(path, monkeypatch, False)
    got, start = [], threading.Barrier(4)

    def ask(i):
        start.wait()
        got.append((qrels.doc if i % 2 else qrels.catalog.docs.names) is not None)

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got == [True] * 4
    assert len(qrels.catalog.docs) == 400 and qrels.doc.tolist() == list(range(400))


def _run_text(n_queries, depth, seed):
    rng = np.random.default_rng(seed)
    lines = []
    for q in range(n_queries):
        docs = rng.choice(60, depth, replace=False)
        for r, d in enumerate(docs):
            lines.append(f"q{q} Q0 d{d} {r + 1} {float(100 - r - (r % 4 == 1) * 0.5):.2f} t\n")
    return "".join(lines)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**16), queries=st.integers(1, 6), depth=st.integers(1, 30), jobs=st.sampled_from([1, 2]),
       by_pair=st.booleans())
def test_runs_read_against_either_qrels_are_the_same(tmp_path, monkeypatch, seed, queries, depth, jobs, by_pair):
    """A run read by pair against qrels whose codes wait: the same rows, entries and (made when asked)
    documents as against qrels whose codes were made at once; its scores, every measure, the same."""
    from rankgate.core.engine import evaluate, prepare_lean
    from rankgate.core.formats import trec_fast as fast
    from rankgate.core.measures import ALL_TREC
    from rankgate.core.model import is_later

    rng = np.random.default_rng(seed + 1)
    qrows = {(f"q{q}", f"d{d}"): int(rng.integers(-1, 4)) for q in range(queries + 1)
             for d in rng.choice(60, 25, replace=False)}
    qpath = write(tmp_path / "q.trec", _qrels_text([(q, d, g) for (q, d), g in qrows.items()]))
    rpath = write(tmp_path / "r.trec", _run_text(queries, depth, seed))
    monkeypatch.setattr(fast, "BLOCK", 97)
    runs = {}
    for now in (True, False):
        qrels = _read(qpath, monkeypatch, now)
        run = fast.read_lean_run(str(rpath), "r", qrels, jobs=jobs, by_pair=by_pair)
        assert is_later(run, "jdoc") == (not now and by_pair)
        p = prepare_lean(qrels, run, rel_level=1, missing="zero")
        assert is_later(p, "doc") == (not now and by_pair)
        scores = evaluate(qrels, run, ALL_TREC, missing="zero")
        cut = prepare_lean(qrels, run, rel_level=1, missing="zero", depth=5, judged_only=True)
        names = qrels.catalog.docs.names
        runs[now] = (run.jq.tolist(), run.jrank.tolist(), [names[c] for c in run.jdoc.tolist()],
                     None if run.jentry is None else run.jentry.tolist(), run.num_ret.tolist(),
                     p.qp.tolist(), p.rank.tolist(), p.grade.tolist(), [names[c] for c in p.doc.tolist()],
                     {m.name: scores.values[m].tolist() for m in ALL_TREC},
                     cut.grade.tolist(), [names[c] for c in cut.doc.tolist()])
    assert runs[True] == runs[False]


def test_score_leaves_the_codes_unmade(tmp_path, monkeypatch):
    """`rankgate score` of a large run reads by pair and never asks for the qrels' document codes."""
    from contextlib import redirect_stdout
    from io import StringIO

    from rankgate.cli import main
    from rankgate.core.formats import trec_fast as fast
    from rankgate.core.model import is_later

    qpath = write(tmp_path / "q.trec", _qrels_text([(f"q{q}", f"d{d}", (q + d) % 3) for q in range(4)
                                                    for d in range(0, 60, 3)]))
    rpath = write(tmp_path / "r.trec", _run_text(4, 30, 7))
    monkeypatch.setattr(fast, "MIN_BYTES", 0)
    made = []
    real = fast._DocCodes.__call__
    monkeypatch.setattr(fast._DocCodes, "__call__", lambda self, interner: made.append(1) or real(self, interner))
    with redirect_stdout(StringIO()) as out:
        assert main(["score", "--qrels", str(qpath), "--runs", str(rpath), "--format", "trec", "-m", "AP,P@5",
                     "--missing-queries", "zero", "--short-rankings", "allow"]) == 0
    assert made == [] and "map" in out.getvalue()
    assert fast._PENDING and is_later(fast._LOOKUP[0], "doc")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(names=st.lists(st.text(st.sampled_from("aZz9\u00e9\u00ff\u4e00\U0001f600_"), min_size=1, max_size=4),
                      min_size=1, max_size=12, unique=True),
       ranked=st.integers(0, 12), asked=st.integers(0, 12))
def test_lean_queries_are_in_byte_order_each_with_its_code(tmp_path, monkeypatch, names, ranked, asked):
    """prepare_lean's queries (ASCII names sorted as they are, others by their UTF-8 bytes) and their positions
    are the order and codes trec_eval's byte order gives, every query, the run's, or those asked for."""
    from rankgate.core.engine import prepare_lean
    from rankgate.core.formats import trec_fast as fast

    qpath = write(tmp_path / "q.trec", _qrels_text([(n, f"d{i}", i % 2) for i, n in enumerate(names)]))
    in_run = names[:ranked] or names[:1]
    rpath = write(tmp_path / "r.trec", "".join(f"{n} Q0 d{i} 1 1.0 t\n" for i, n in enumerate(in_run)))
    qrels = _read(qpath, monkeypatch, False)
    run = fast.read_lean_run(str(rpath), "r", qrels, by_pair=True)
    codes = qrels.catalog.queries.codes
    for missing, queries, expect in (("zero", None, names), ("drop", None, in_run),
                                     ("zero", names[:asked], names[:asked])):
        p = prepare_lean(qrels, run, rel_level=1, missing=missing, queries=queries)
        want = sorted(expect, key=str.encode)
        assert p.qids == want and p.nq == len(want)
        assert p.qrels_qp.tolist() == [want.index(n) if n in want else -1 for n in qrels.query_ids
                                       for _ in range(int((qrels.q == codes[n]).sum()))]
