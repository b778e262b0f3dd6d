"""The parts `rankgate score` was made faster with (issue 36) give what the slower ways gave:
the packed sort is lexsort's order, the judged-document hash table finds every key (also past the end
of its slots), a catalog's Arrow-held names are the same names, and a run read in blocks whose queries
run on across blocks scores as the general reader scores it."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from rankgate.cli import main
from tests.conftest import write

pytest.importorskip("pyarrow")


@settings(max_examples=60, deadline=None)
@given(rows=st.lists(st.tuples(st.integers(-3, 40), st.integers(-2**20, 2**20)), max_size=60),
       wide=st.booleans())
def test_packed_order_is_lexsorts_stable_order(rows, wide):
    from rankgate.core.engine import _order

    major = np.array([r[0] for r in rows], np.int64) * (2**40 if wide else 1)  # wide: too many bits to pack
    minor = np.array([r[1] for r in rows], np.int64)
    assert _order(major, minor).tolist() == np.lexsort((minor, major)).tolist()


@settings(max_examples=80, deadline=None)
@given(stretches=st.lists(st.tuples(st.integers(-3, 12), st.lists(st.integers(0, 30), max_size=6)), max_size=12))
def test_stretches_order_is_lexsorts_stable_order(stretches):
    """_stretches_order: rows as stretches of one major, minors rising within them (a lean run's judged rows), or
    not (a major in two stretches, minors falling or equal): lexsort's stable order either way."""
    from rankgate.core.engine import _stretches_order

    major = np.array([m for m, minors in stretches for _ in minors], np.int64)
    minor = np.array([v for _, minors in stretches for v in minors], np.int64)
    assert _stretches_order(major, minor).tolist() == np.lexsort((minor, major)).tolist()
    rising = np.array([v for _, minors in stretches for v in sorted(set(minors))], np.int64)
    once = np.array([i for i, (_, minors) in enumerate(stretches) for _ in sorted(set(minors))], np.int64)
    order = np.random.default_rng(len(once)).permutation(len(stretches))
    assert _stretches_order(order[once] if len(once) else once, rising).tolist() == \
        np.lexsort((rising, order[once] if len(once) else once)).tolist()


def test_hash_table_finds_keys_crowded_at_the_end_of_its_slots():
    """Keys whose slots are the last ones are placed past the end (no wrap): each is still found,
    and a key that is not there is not."""
    from rankgate.core.formats.trec_fast import _HashTable

    rng = np.random.default_rng(36)
    h = np.unique(np.r_[rng.integers(0, 2**64, 500, dtype=np.uint64),
                        rng.integers(2**64 - 2**52, 2**64, 300, dtype=np.uint64)])  # 300 in the last few slots
    rng.shuffle(h)
    table = _HashTable(h)
    assert not table.repeated and len(table.keys) > 1 << 11  # it ran on past its 2048 slots
    assert table.find(h).tolist() == list(range(len(h))) and table.find(h).dtype == np.int64
    assert table.find(h[::-1]).tolist() == list(range(len(h)))[::-1] and len(table.find(h[:0])) == 0
    absent = rng.integers(2**64 - 2**52, 2**64, 200, dtype=np.uint64)
    absent = absent[~np.isin(absent, h)]
    assert (table.find(absent) == -1).all()
    assert _HashTable(np.array([3, 9, 3], np.uint64)).repeated


def test_adopted_names_are_made_when_asked_and_agree():
    import pyarrow as pa

    from rankgate.core.model import Interner

    names = ["d3", "d10", "é", "d1"]
    lazy, eager = Interner(), Interner()
    assert lazy.adopt(pa.array(names, pa.string())).tolist() == eager.extend(names, distinct=True).tolist()
    assert len(lazy) == 4 and lazy._lazy is not None  # nothing made yet
    assert lazy.order().tolist() == eager.order().tolist()  # byte order, from the Arrow strings
    assert lazy._lazy is not None
    assert lazy.get("é") == 2 and lazy.names == names
    assert lazy.extend(["d1", "new"]).tolist() == eager.extend(["d1", "new"]).tolist() == [3, 4]
    assert lazy.names == eager.names and lazy.order().tolist() == eager.order().tolist()


def test_names_of_some_codes_are_the_names_and_make_no_other():
    """Interner.names_of (the gate's missed queries' documents, the stability's documents to judge) gives what
    `names` gives for those codes, Arrow-held names and those added after them alike, without making the rest."""
    import pyarrow as pa

    from rankgate.core.model import Interner

    names = ["d3", "d10", "é", "d1", "x" * 40]
    lazy, eager = Interner(), Interner()
    lazy.adopt(pa.array(names, pa.string()))
    eager.extend(names, distinct=True)
    lazy.extend_looked_up(["new", "d1", "n2"])
    eager.extend(["new", "d1", "n2"])
    codes = [6, 0, 2, 5, 2, 4, 1]
    assert lazy.names_of(np.array(codes)) == lazy.names_of(codes) == [eager.names[c] for c in codes]
    assert lazy.names_of(np.zeros(0, np.int64)) == [] and lazy.name_at()[5] == "new" and len(lazy.name_at()) == 7
    assert lazy._lazy is not None  # no name made for all
    with pytest.raises(IndexError):
        lazy.names_of([7])
    with pytest.raises(IndexError):
        lazy.names_of([-1])
    assert lazy.names == eager.names and eager.names_of(np.array(codes)) == lazy.names_of(codes)


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lengths=st.lists(st.integers(1, 30), min_size=1, max_size=8), block=st.sampled_from([60, 200, 1000]),
       jobs=st.sampled_from([1, 2]))
def test_queries_running_on_across_blocks_score_as_the_general_reader(tmp_path_factory, lengths, block, jobs):
    """A grouped file read in blocks of a few lines, queries of 1-30 lines: a query that begins in one
    block and ends in a later one is settled with its own rows (not the next block copied whole)."""
    import os
    from contextlib import redirect_stdout
    from io import StringIO

    from rankgate.core.formats import trec_fast as fast

    tmp = tmp_path_factory.mktemp("runon")
    lines, qrels = [], []
    for q, n in enumerate(lengths):
        for r in range(n):
            lines.append(f"q{q} Q0 d{(r * 7 + q) % 40} {r + 1} {100 - r - (r % 3 == 1) * 0.5:.2f} t")
        qrels += [f"q{q} 0 d{(j * 5 + q) % 40} {j % 3}" for j in range(6)]
    run = write(tmp / "run.txt", "\n".join(dict.fromkeys(lines)) + "\n")
    qr = write(tmp / "qrels.txt", "\n".join(dict.fromkeys(qrels)) + "\n")
    out = {}
    saved = fast.BLOCK, fast.MIN_BYTES, os.environ.get("RANKGATE_FAST")
    try:
        fast.BLOCK, fast.MIN_BYTES = block, 0
        for way in ("1", "0"):
            os.environ["RANKGATE_FAST"] = way
            buf = StringIO()
            with redirect_stdout(buf):
                assert main(["score", "--qrels", str(qr), "--runs", str(run), "--format", "trec", "-q", "-m",
                             "AP,nDCG@10,RR,P@5,R@20,num_ret", "--missing-queries", "zero", "--short-rankings", "allow",
                             "--jobs", str(jobs)]) == 0
            out[way] = buf.getvalue()
    finally:
        fast.BLOCK, fast.MIN_BYTES = saved[0], saved[1]
        os.environ.pop("RANKGATE_FAST") if saved[2] is None else os.environ.__setitem__("RANKGATE_FAST", saved[2])
    assert out["1"] == out["0"] and "num_ret" in out["1"]


@pytest.mark.slow
@pytest.mark.skipif(not __import__("sys").platform.startswith("linux"), reason="the switch is for glibc's malloc")
def test_score_takes_arrows_blocks_from_malloc_unless_a_pool_is_chosen(tmp_path):
    """`rankgate score` on a large run switches Arrow to malloc's pool (less memory kept between blocks);
    ARROW_DEFAULT_MEMORY_POOL still wins, and the Python API's reads keep Arrow's default."""
    import os
    import subprocess
    import sys

    lines = [f"q{q} Q0 document-{q}-{r} {r + 1} {1000 - r} t" for q in range(40) for r in range(1000)]
    run = write(tmp_path / "run.txt", "\n".join(lines) + "\n")
    qrels = write(tmp_path / "qrels.txt", "\n".join(f"q{q} 0 document-{q}-{r} 1" for q in range(40)
                                                   for r in range(0, 1000, 50)) + "\n")
    assert os.path.getsize(run) > 1 << 20
    code = ("import sys, io, contextlib, pyarrow as pa\n"
            "from rankgate.cli import main\n"
            "from rankgate.core.formats import read_qrels, trec_fast\n"
            "if sys.argv[1] == 'cli':\n"
            "    with contextlib.redirect_stdout(io.StringIO()):\n"
            "        main(['score', '--qrels', sys.argv[2], '--runs', sys.argv[3], '--format', 'trec'])\n"
            "else:\n"
            "    trec_fast.read_lean_run(sys.argv[3], 'r', read_qrels(sys.argv[2]))\n"
            "print(pa.default_memory_pool().backend_name)\n")

    def pool(way, **env):
        environ = {k: v for k, v in os.environ.items() if k != "ARROW_DEFAULT_MEMORY_POOL"} | env
        out = subprocess.run([sys.executable, "-c", code, way, str(qrels), str(run)], capture_output=True,
                             text=True, env=environ, check=True)
        return out.stdout.split()[-1]

    default = pool("api")
    assert default != "system"  # Arrow's own default (mimalloc or jemalloc)
    assert pool("cli") == "system"
    assert pool("cli", ARROW_DEFAULT_MEMORY_POOL=default) == default


@pytest.mark.parametrize("hashing", ["real", "top bits alike", "all alike"])
def test_encoding_by_hash_gives_arrows_dictionary_encoding(monkeypatch, hashing):
    """_encode (the qrels' document IDs) gives what pc.dictionary_encode gives: the distinct strings in order
    of first appearance and each string's index, and the hash of each distinct string; also when hashes
    share their top bits only (sorted again by the whole hash) and when every string has one hash (Arrow's
    dictionary then). _encode_grouped (the qrels' queries) too, for queries together or scattered."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from rankgate.core.formats import trec_fast as fast

    rng = np.random.default_rng(5)
    values = [f"d{int(v)}" for v in rng.integers(0, 300, 2000)] + ["é", "", "d1", "a-much-longer-document-id"] * 3
    strings = pa.array(values, pa.string())
    real = fast.hash_strings
    if hashing == "top bits alike":  # 40 distinct hashes whose top bits are alike in pairs: only the low bits differ
        monkeypatch.setattr(fast, "hash_strings", lambda d: (real(d) % np.uint64(40)) | np.uint64(0xABC << 40))
    elif hashing == "all alike":
        monkeypatch.setattr(fast, "hash_strings", lambda d: np.full(len(d), 7, np.uint64))
    want = pc.dictionary_encode(strings)
    for arr in (strings, strings.slice(3, 1500)):
        want = pc.dictionary_encode(arr)
        names, index, hashes = fast._encode(arr)
        assert names.equals(want.dictionary) and index.tolist() == fast._np(want.indices).tolist()
        assert index.dtype == np.int32 and hashes.tolist() == fast.hash_strings(names).tolist()
    for arr in (pa.array(sorted(values), pa.string()), strings, strings.slice(0, 1), strings.slice(0, 0)):
        want = pc.dictionary_encode(arr)
        names, index = fast._encode_grouped(arr)
        assert names.equals(want.dictionary) and index.tolist() == fast._np(want.indices).tolist()


@pytest.mark.parametrize("crowded", [False, True])
def test_merge_match_finds_each_rows_entries(crowded):
    """_merge_match calls for every (row, entry) whose hashes are equal, and for no other: entries and rows
    alike in their hashes' top bits only, rows repeated, an entry's hash twice (`crowded`: several entries
    of one top bits, and of one hash), rows with no entry."""
    from rankgate.core.formats.trec_fast import _merge_match

    rng = np.random.default_rng(11)
    top = rng.integers(0, 2**20, 300, dtype=np.uint64) << np.uint64(44)
    if crowded:  # 300 entries of 50 top bits, 4 hashes each: some entries of one hash
        keys = (top % np.uint64(50 << 44)) | rng.integers(0, 4, 300, dtype=np.uint64)  # (low bits: overwritten)
    else:
        keys = np.unique(top)[:250] | np.uint64(1)
        keys = keys[rng.permutation(len(keys))]
    h = np.r_[keys[rng.integers(0, len(keys), 400)], rng.integers(0, 2**64, 100, dtype=np.uint64),
              keys[:50] ^ np.uint64(2)]  # the last: an entry's top bits, another hash
    h = h[rng.permutation(len(h))]
    entry = np.arange(1000, 1000 + len(keys))
    got = []
    def by_name(r, j):  # (a hash's name: its value; reached only by more than SHARED entries of one hash)
        at = dict(zip(keys[j - 1000].tolist(), j.tolist()))
        e = np.array([at.get(x, -1) for x in h[r].tolist()], np.int64)
        return r[e >= 0], e[e >= 0]

    _merge_match(keys, entry, h, lambda r, j: got.extend(zip(r.tolist(), j.tolist())), by_name)
    want = [(r, int(entry[j])) for r in range(len(h)) for j in np.flatnonzero(keys == h[r]).tolist()]
    assert sorted(got) == sorted(want) and len(set(got)) == len(got) and len(want) >= 400


def test_pairs_the_qrels_reader_found_judged_once_are_not_sorted_again(tmp_path, monkeypatch):
    """read_trec_qrels_fast checks that each (query, document) is judged once and hands over read-only codes;
    the by-pair lookup takes that fact for those very arrays only: a copy, or qrels with a pair judged twice,
    are checked (and the latter's rows then carry documents, not entries)."""
    from dataclasses import replace

    from rankgate.core.formats import trec_fast as fast

    monkeypatch.setattr(fast, "MIN_BYTES", 0)
    path = write(tmp_path / "q.trec", "".join(f"q{i % 7} 0 d{i} {i % 3}\n" for i in range(60)))
    qrels = fast.read_trec_qrels_fast(str(path))
    assert qrels is not None and fast._judged_once(qrels)
    with pytest.raises(ValueError):
        qrels.q[0] = 3  # read-only: still what the reader checked
    calls = []
    monkeypatch.setattr(fast, "_each_once", lambda q: calls.append(q) or True)
    names = qrels.catalog.docs.arrow
    assert fast._JudgedLookup(names, np.arange(len(names)), qrels).entries and calls == []
    copied = replace(qrels, q=qrels.q.copy())
    assert not fast._judged_once(copied)
    assert fast._JudgedLookup(names, np.arange(len(names)), copied).entries and calls == [copied]
    monkeypatch.undo()
    twice = replace(qrels, q=np.r_[qrels.q, qrels.q[:1]].astype(np.int32), doc=np.r_[qrels.doc, qrels.doc[:1]].astype(
        np.int32), grade=np.r_[qrels.grade, 1])
    assert not fast._judged_once(twice) and not fast._JudgedLookup(names, np.arange(len(names)), twice).entries


@settings(max_examples=60, deadline=None)
@given(codes=st.lists(st.integers(0, 70), max_size=80), wide=st.booleans())
def test_distinct_codes_are_uniques(codes, wide):
    """model.distinct_codes (the queries with a relevant judgment, by counting) gives what model.unique gives."""
    from rankgate.core.model import distinct_codes, unique

    x = np.array(codes, np.int64 if wide else np.int32)
    assert distinct_codes(x).tolist() == unique(x).tolist()


@settings(max_examples=80, deadline=None)
@given(stretches=st.lists(st.tuples(st.integers(0, 6), st.lists(st.booleans(), min_size=1, max_size=9)), max_size=10),
       cutoff=st.sampled_from([None, 1, 3, 5]))
def test_relevant_counts_at_rows_and_ap_are_the_whole_arrays(stretches, cutoff):
    """_cum_rel_at (the relevant rows at or above each row of its query, at some rows only) is _cum_rel's
    array at those rows, and AP from it is the formula over every row, bit for bit; stretches of one query
    apart count apart, as _cum_rel counts them."""
    from rankgate.core.engine import UNJUDGED, Prepared, _cum_rel, _cum_rel_at, _safe_div, per_query
    from rankgate.core.measures import parse_measures

    qp = np.array([q for q, rels in stretches for _ in rels], np.int64)
    rank = np.array([r for _, rels in stretches for r in range(len(rels))], np.int64)
    grade = np.array([2 if x else (0 if r % 2 else UNJUDGED) for _, rels in stretches for r, x in enumerate(rels)],
                     np.int64)
    nq = 7
    qrels_qp = np.r_[qp, np.arange(nq)]  # every retrieved relevant judged, and one more judgment a query
    qrels_grade = np.r_[np.where(grade == UNJUDGED, 0, grade), np.ones(nq, np.int64)]
    p = Prepared([str(i) for i in range(nq)], nq, qp, rank, grade, qp, np.full(nq, 9.0), qrels_qp, qrels_grade, 1)
    rel = p.rel(1) if cutoff is None else p.rel(1) & (p.rank < cutoff)
    rows = np.flatnonzero(rel)
    assert _cum_rel_at(p, rel, rows).tolist() == _cum_rel(p, rel)[rows].tolist()
    measure = parse_measures("AP" if cutoff is None else f"AP@{cutoff}")[0]
    whole = _cum_rel(p, rel) / (p.rank + 1.0)
    expect = _safe_div(np.bincount(qp[rel], weights=whole[rel], minlength=nq), p.num_rel(1))
    assert per_query(p, measure).tobytes() == expect.tobytes()


@pytest.mark.parametrize("seed", range(40))
def test_grades_by_document_are_the_sorted_searchs(seed):
    """engine._grades looks a row up among its document's judgments; _grades_sorted searches every pair. The
    same rows kept and grades: pairs judged twice (the first in file order), queries not scored (-1), documents
    judged for many queries (past BY_DOC_AT_MOST: the search), top rows kept, watched runs, no rows, no pairs."""
    from types import SimpleNamespace

    from rankgate.core import engine

    rng = np.random.default_rng(seed)
    docs, queries = int(rng.integers(1, 40)), int(rng.integers(1, 12))
    pairs = int(rng.integers(0, 300)) if seed % 10 else 0
    crowd = seed % 3 == 0  # one document judged for most queries, over and over
    doc = (np.full(pairs, 3 % docs) if crowd else rng.integers(0, docs, pairs)).astype(np.int32)
    qrels = SimpleNamespace(catalog=SimpleNamespace(docs=[None] * (docs + int(rng.integers(0, 5)))), doc=doc,
                            grade=rng.integers(-1, 4, pairs).astype(np.int64))
    qqp = rng.integers(-1, queries, pairs).astype(np.int64)
    n = int(rng.integers(0, 400)) if seed % 7 else 0
    qp = rng.integers(0, queries, n).astype(np.int64)
    run = SimpleNamespace(jdoc=rng.integers(0, len(qrels.catalog.docs), n), jrank=rng.integers(0, 30, n),
                          keep_top=int(rng.choice([0, 0, 5, 20])), watched=bool(seed % 5 == 0))
    rows = np.sort(rng.choice(n, int(rng.integers(0, n + 1)), replace=False)) if n else np.zeros(0, np.int64)
    got, want = engine._grades(qrels, qqp, qp, rows, run), engine._grades_sorted(qrels, qqp, qp, rows, run)
    assert got[0].tolist() == want[0].tolist() and got[1].tolist() == want[1].tolist()
    assert got[1].dtype == want[1].dtype


@settings(max_examples=60, deadline=None)
@given(arrays=st.lists(st.lists(st.sampled_from([0, 1, 5, 2**29 - 1, 2**29, 2**31 + 7, 2**32 - 1])
                                | st.integers(0, 2**32 - 1), max_size=30), min_size=1, max_size=6),
       pieces=st.sampled_from([2, 4, 8]))
def test_repeated_values_are_those_a_whole_sort_finds(arrays, pieces):
    """_repeated (the scattered file's duplicate check: each array put in order of its values' ranges, then a
    range at a time sorted): every value found more than once, as often as a sort of all finds it, sorted."""
    from rankgate.core.formats.trec_fast import _repeated

    keys = [np.array(a, np.uint32) for a in arrays]
    every = np.sort(np.concatenate(keys))
    assert _repeated(iter(keys), pieces).tolist() == every[1:][every[1:] == every[:-1]].tolist()


@pytest.mark.parametrize("n", [0, 2, 4095, 4096, 20000, 105000, 262144, 262145])
@pytest.mark.parametrize("near", [False, True])
@pytest.mark.parametrize("repeats", [0, 1, 7])
def test_values_found_twice_are_those_a_sort_finds(n, near, repeats):
    """_twice (the grouped file's duplicate check: past SLOTTED_AT values, a table of their top bits rules most
    out before the sort): the sort's answer, each value as often as it comes again; `near`: values that share
    their top bits but not all (the table's slots crowded)."""
    from rankgate.core.formats.trec_fast import _twice

    rng = np.random.default_rng(n + repeats)
    top = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    if near:
        top &= np.uint32(0xFFF0000F)
    if n:
        top[rng.integers(0, n, repeats)] = top[rng.integers(0, n, repeats)]
    srt = np.sort(top)
    assert _twice(top).tolist() == srt[1:][srt[1:] == srt[:-1]].tolist()
