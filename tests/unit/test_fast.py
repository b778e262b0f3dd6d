"""The compiled fast path (pyarrow) gives exactly what the general reader and engine give."""

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from rankgate.cli import main
from rankgate.core.measures import FAMILIES
from tests.conftest import write

pytest.importorskip("pyarrow")


@pytest.fixture(autouse=True)
def fast_path_for_small_files(monkeypatch):
    """The fast path normally starts at 1 MB; these tests use small files."""
    from rankgate.core.formats import trec_fast as fast

    monkeypatch.setattr(fast, "MIN_BYTES", 0)


def every_measure() -> str:
    """Every measure family of the registry, bare and with cutoffs, as far as each allows."""
    names = []
    for f in FAMILIES.values():
        if f.cutoff != "required":
            names.append(f.name)
        if f.cutoff != "none":
            names += [f"{f.name}@0.5"] if f.level else [f"{f.name}@2", f"{f.name}@5"]
    return ",".join(names)


def score(capsys, monkeypatch, fast, *argv):
    monkeypatch.setenv("RANKGATE_FAST", "1" if fast else "0")
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


rows_st = st.lists(st.tuples(st.sampled_from(["q1", "q2", "q3", "10"]), st.sampled_from([f"d{i}" for i in range(9)]),
                             st.sampled_from([0.5, 1.0, 1.5, 2.0])), min_size=1, max_size=40)
qrels_st = st.dictionaries(st.sampled_from(["q1", "q2", "q3", "10", "7"]),
                           st.dictionaries(st.sampled_from([f"d{i}" for i in range(12)]), st.integers(-1, 3),
                                           min_size=1, max_size=5), min_size=1, max_size=5)


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=rows_st, qrels=qrels_st, fmt=st.sampled_from(["trec", "json"]), grouped=st.booleans(),
       block=st.sampled_from([16 << 20, 64, 23, 8]), spill=st.booleans())
def test_fast_path_equals_general_path(tmp_path, capsys, monkeypatch, rows, qrels, fmt, grouped, block, spill):
    """Any rows, grouped by query or scattered, read in blocks of any size (lines cut across
    blocks, one query's lines across several), scattered ones in memory or through temporary files."""
    from rankgate.core.formats import trec_fast as fast

    monkeypatch.setattr(fast, "BLOCK", block)
    monkeypatch.setattr(fast, "SPILL_AT", 0 if spill else 1 << 40)
    monkeypatch.setattr(fast, "HOLD_AT", 0 if spill else 1 << 40)
    monkeypatch.setattr(fast, "SPILL_BUCKET", 100)
    if grouped:
        rows = sorted(rows, key=lambda r: r[0])
    run = write(tmp_path / "run.trec", "".join(f"{q} Q0 {d} 0 {s} tag\n" for q, d, s in rows))
    q = write(tmp_path / "q.trec", "".join(f"{qid} 0 {d} {g}\n" for qid, ds in qrels.items() for d, g in ds.items()))
    argv = ["score", "--qrels", q, "--runs", run, "--format", fmt, "-m", every_measure(),
            "--missing-queries", "zero", "--short-rankings", "allow", "-q", "--k", "2"]
    if fmt == "json":
        argv.remove("-q")
    fast = score(capsys, monkeypatch, True, *argv)
    general = score(capsys, monkeypatch, False, *argv)
    assert fast == general


def test_a_plain_file_is_read_in_blocks_keeping_judged_rows_only(tmp_path, monkeypatch):
    from rankgate.core.formats import trec_fast as fast
    from rankgate.core.formats import read_qrels

    monkeypatch.setattr(fast, "BLOCK", 50)  # about two lines a block
    lines = [f"q{q} Q0 d{d} {d} {10 - d} t\n" for q in (2, 1) for d in range(6)]
    lines[3], lines[4] = lines[4], lines[3]  # q2 out of score order
    run = write(tmp_path / "run.trec", "".join(lines) + "q1 Q0 d4 9 0.5 t\n")
    qrels = read_qrels(write(tmp_path / "q.trec", "q1 0 d4 1\nq2 0 d3 2\nq2 0 d9 1\n"))
    reports = []
    lean = fast.read_lean_run(str(run), "run", qrels, lambda done, total: reports.append((done, total)))
    assert lean is not None and lean.qnames == ["q2", "q1"] and lean.num_ret.tolist() == [6, 7]
    names = qrels.catalog.docs.names
    # rows of documents someone judged (for any query), ranked in trec_eval order
    assert sorted((lean.qnames[q], names[d], r) for q, d, r in zip(lean.jq, lean.jdoc, lean.jrank)) == [
        ("q1", "d3", 3), ("q1", "d4", 4), ("q1", "d4", 6), ("q2", "d3", 3), ("q2", "d4", 4)]
    assert lean.n_duplicates == 1 and lean.duplicates == [(13, "q1", "d4")]
    assert reports[-1] == (run.stat().st_size,) * 2 and len(reports) > 3


def test_a_large_scattered_file_goes_through_temporary_files(tmp_path, monkeypatch):
    """Above SPILL_AT bytes, lines of scattered queries are partitioned by query on disk and each
    part settled alone: same ranks, duplicates named in file order, the files removed."""
    import random

    import pyarrow as pa

    from rankgate.core.formats import trec_fast as fast
    from rankgate.core.formats import read_qrels

    rng = random.Random(7)
    lines = [f"q{q} Q0 d{d} 0 {rng.choice([1, 2, 3])} t\n" for q in range(20) for d in range(15)]
    lines += [lines[5], lines[40]]  # two duplicates
    rng.shuffle(lines)
    run = write(tmp_path / "run.trec", "".join(lines))
    qrels = read_qrels(write(tmp_path / "q.trec", "".join(f"q{q} 0 d{q % 15} 1\n" for q in range(20))))
    monkeypatch.setattr(fast, "SPILL_AT", 1 << 40)
    monkeypatch.setattr(fast, "HOLD_AT", 1 << 40)
    whole = fast.read_lean_run(str(run), "run", qrels)
    made = []
    real = pa.ipc.new_stream
    monkeypatch.setattr(pa.ipc, "new_stream", lambda where, schema: made.append(where) or real(where, schema))
    monkeypatch.setattr(fast, "SPILL_AT", 0)
    monkeypatch.setattr(fast, "HOLD_AT", 0)
    monkeypatch.setattr(fast, "SPILL_BUCKET", 1000)
    monkeypatch.setattr(fast, "BLOCK", 512)
    spilled = fast.read_lean_run(str(run), "run", qrels)
    assert len(made) > 3 and not any(__import__("os").path.exists(w) for w in made)
    key = lambda r: sorted(zip(r.jq.tolist(), r.jdoc.tolist(), r.jrank.tolist()))  # noqa: E731
    assert spilled.qnames == whole.qnames and spilled.num_ret.tolist() == whole.num_ret.tolist()
    assert key(spilled) == key(whole) and spilled.duplicates == whole.duplicates and spilled.n_duplicates == 2
    assert [d[0] for d in whole.duplicates] == sorted(d[0] for d in whole.duplicates)

    import tempfile

    def no_room(*a, **kw):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(tempfile, "TemporaryDirectory", no_room)  # then in memory, the same
    in_memory = fast.read_lean_run(str(run), "run", qrels)
    assert key(in_memory) == key(whole) and in_memory.duplicates == whole.duplicates


def test_fast_path_refuses_what_the_general_path_refuses(tmp_path, capsys, monkeypatch):
    q = write(tmp_path / "q.trec", "q1 0 d1 1\nq2 0 d2 1\n")
    run = write(tmp_path / "run.trec", "q1 Q0 d1 1 2 t\nq1 Q0 d3 2 1 t\nq1 Q0 d1 3 0.5 t\nq9 Q0 d2 1 1 t\n")
    fast = score(capsys, monkeypatch, True, "validate", "--qrels", q, "--runs", run, "--k", "3")
    general = score(capsys, monkeypatch, False, "validate", "--qrels", q, "--runs", run, "--k", "3")
    assert fast[0] == general[0] == 2
    rules = lambda out: sorted(p["rule"] for p in json.loads(out)["problems"])  # noqa: E731
    assert rules(fast[1]) == rules(general[1])
    # score goes through the fast path; its problems name the same line
    code, _, err = score(capsys, monkeypatch, True, "score", "--qrels", q, "--runs", run, "--k", "1")
    assert code == 2 and "run.trec:3" in err and "ranks document 'd1' twice" in err


@pytest.mark.parametrize("text", ["q1\tQ0\td1\t1\t2\tt\n", "# comment\nq1 Q0 d1 1 2 t\n", "q1 Q0 d1 1 2 t\n\n",
                                  "q1 Q0 d1 1 2 t extra\n", "q1 Q0 d1 1 2 t",
                                  # five fields made six columns by an empty one: never read as a score
                                  "q1 Q0 d1  1 2.5\n", "q1  Q0 d1 1 2.5\n", "q1 Q0 d1 1 2.5 \n", " q1 Q0 d1 1 2.5\n"])
def test_irregular_files_take_the_general_path(tmp_path, capsys, monkeypatch, text):
    from rankgate.core.formats import trec_fast as fast
    from rankgate.core.formats import read_qrels

    run = write(tmp_path / "run.trec", text)
    qrels = read_qrels(write(tmp_path / "q.trec", "q1 0 d1 1\n"))
    assert fast.read_lean_run(str(run), "run", qrels) is None
    general = score(capsys, monkeypatch, False, "score", "--qrels", tmp_path / "q.trec", "--runs", run, "--k", "1")
    fast_ = score(capsys, monkeypatch, True, "score", "--qrels", tmp_path / "q.trec", "--runs", run, "--k", "1")
    assert fast_ == general
    if general[0] == 0:
        assert json.loads(general[1])["macro"]["recall_at_k"] == 1.0
    else:
        assert general[0] == 2 and "columns, expected 6" in general[2]


field = st.sampled_from(["q1", "q2", "Q0", "d1", "d2", "d3", "1", "2.5", "0.5", "t"])
sep = st.sampled_from([" ", " ", " ", "  ", "\t"])
messy_line = st.tuples(st.lists(field, min_size=4, max_size=7), st.lists(sep, min_size=7, max_size=7),
                       st.sampled_from(["", " "])).map(
    lambda t: "".join(f + s for f, s in zip(t[0], t[1]))[: -1] + t[2] + "\n" if t[0] else "\n")


@pytest.mark.slow
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(messy_line, min_size=1, max_size=6))
def test_fast_and_general_agree_on_messy_files(tmp_path, capsys, monkeypatch, lines):
    """Whatever the spacing and field counts, both paths accept the same files with the same
    scores, and refuse the same files with the same message."""
    run = write(tmp_path / "run.trec", "".join(lines))
    q = write(tmp_path / "q.trec", "q1 0 d1 1\nq2 0 d2 2\n")
    argv = ["score", "--qrels", q, "--runs", run, "--format", "trec", "-m", "AP,P@2,RR", "--missing-queries", "zero",
            "--short-rankings", "allow", "-q"]
    assert score(capsys, monkeypatch, True, *argv) == score(capsys, monkeypatch, False, *argv)


POLICY = """
measures = ["nDCG@5", "AP@4", "Judged@3"]
[[rules]]
measure = "nDCG@5"
check = "not_lower"
tolerance = 0.0
[[rules]]
measure = "R@3"
check = "floor"
floor = 0.2
[[rules]]
check = "judged"
floor = 0.3
"""


@pytest.mark.parametrize("measures", ['["nDCG@5"]', '["AP", "nDCG"]'])
def test_the_gate_on_deep_rankings_agrees_on_both_paths(tmp_path, capsys, monkeypatch, measures):
    """Rankings deeper than the measures' cut-offs: the review queue's candidates, ranked deep by
    the other run, read the same on both paths: no rank past the deepest cut-off, or, when a
    measure has none (AP), every rank (the fast path looks the queue's documents up again)."""
    import random

    rng = random.Random(3)
    docs = [f"d{i}" for i in range(12)]
    runs, qrels = {"a": [], "b": []}, []
    for q in ("q1", "q2", "q3"):
        for lines in runs.values():
            lines += [f"{q} Q0 {d} {i} {20 - i} t\n" for i, d in enumerate(rng.sample(docs, 12))]
        qrels += [f"{q} 0 {d} {rng.choice([0, 1, 2])}\n" for d in rng.sample(docs, 3)]
    q = write(tmp_path / "q.trec", "".join(qrels))
    policy = write(tmp_path / "policy.toml", f"measures = {measures}\n")
    argv = ["gate", "--qrels", q, "--k", "3", "--baseline", "a", "--candidate", "b", "--policy", policy,
            "--as-of", "2026-06-01"]
    for name, lines in runs.items():
        argv += ["--runs", f"{name}={write(tmp_path / f'{name}.trec', ''.join(lines))}"]
    fast_ = score(capsys, monkeypatch, True, *argv)
    assert fast_ == score(capsys, monkeypatch, False, *argv)
    queue = json.loads(fast_[1])["coverage"]["review_queue"]
    ranks = [r for x in queue for r in (x["baseline_rank"], x["candidate_rank"])]
    if "AP" in measures:  # whole rankings: every document of these runs is ranked in both
        assert queue and None not in ranks and max(ranks) > 5
    else:
        assert queue and all(r is None or r <= 5 for r in ranks) and None in ranks


deep_rows_st = st.lists(st.tuples(st.sampled_from(["q1", "q2", "10"]), st.sampled_from([f"d{i}" for i in range(14)]),
                                  st.sampled_from([0.5, 1.0, 1.5, 2.0, 3.0])), min_size=1, max_size=60)


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(a=deep_rows_st, b=deep_rows_st, qrels=qrels_st, block=st.sampled_from([16 << 20, 40]), deep=st.booleans(),
       spill=st.booleans())
def test_gate_compare_and_validate_agree_on_both_paths(tmp_path, capsys, monkeypatch, a, b, qrels, block, deep,
                                                        spill):
    """The gate (with its review queue), compare and validate say the same whether the runs were
    read by the fast path or the general one; `deep` adds AP, which makes the gate read whole rankings."""
    from rankgate.core.formats import trec_fast as fast

    monkeypatch.setattr(fast, "BLOCK", block)
    monkeypatch.setattr(fast, "SPILL_AT", 0 if spill else 1 << 40)
    monkeypatch.setattr(fast, "HOLD_AT", 0 if spill else 1 << 40)
    monkeypatch.setattr(fast, "SPILL_BUCKET", 64)
    runs = []
    for name, rows in (("a", a), ("b", b)):
        seen = set()
        rows = [r for r in rows if (r[0], r[1]) not in seen and not seen.add((r[0], r[1]))]  # no duplicates
        runs.append(f"{name}=" + str(write(tmp_path / f"{name}.trec",
                                           "".join(f"{q} Q0 {d} 0 {s} t\n" for q, d, s in rows))))
    q = write(tmp_path / "q.trec", "".join(f"{qid} 0 {d} {g}\n" for qid, ds in qrels.items() for d, g in ds.items()))
    policy = write(tmp_path / "policy.toml", POLICY.replace('"Judged@3"', '"Judged@3", "AP"') if deep else POLICY)
    common = ["--qrels", q, "--runs", runs[0], "--runs", runs[1], "--k", "3", "--missing-queries", "zero",
              "--short-rankings", "allow"]
    for argv in (["gate", *common, "--baseline", "a", "--candidate", "b", "--policy", policy, "--as-of", "2026-06-01"],
                 ["compare", *common, "--baseline", "a", "-m", "AP,nDCG@5,RR"],
                 ["validate", *common, "--format", "json"]):
        fast_ = score(capsys, monkeypatch, True, *argv)
        general = score(capsys, monkeypatch, False, *argv)
        assert fast_ == general, argv[0]


def test_the_fast_path_shows_progress_on_a_terminal(tmp_path, capsys, monkeypatch):
    from rankgate.cli import progress
    from rankgate.core.formats import trec_fast as fast

    monkeypatch.setattr(fast, "BLOCK", 64)
    monkeypatch.setattr(progress, "MIN_BYTES", 0)
    monkeypatch.setattr(progress.sys.stderr, "isatty", lambda: True, raising=False)
    read, used = fast.read_lean_run, []
    monkeypatch.setattr(fast, "read_lean_run", lambda *a, **kw: used.append(read(*a, **kw)) or used[-1])
    run = write(tmp_path / "big.trec", "".join(f"q{i % 7} Q0 d{i} 1 {1000 - i} t\n" for i in range(400)))
    q = write(tmp_path / "q.trec", "q1 0 d1 1\n")
    code, out, err = score(capsys, monkeypatch, True, "score", "--qrels", q, "--runs", run, "--format", "trec",
                           "--missing-queries", "zero", "--short-rankings", "allow")
    assert code == 0 and "reading big.trec: 100.0%" in err and used and used[0] is not None


@pytest.mark.parametrize("bad, expect", [("q9 Q0 dX 1 2.5\n", ":30001: 5 columns, expected 6"),
                                         ("q9 Q0 d5 1 0.25 t\n", ":30001: run 'big' ranks document 'd5' twice")])
def test_a_large_file_with_one_bad_line_names_that_line(tmp_path, capsys, monkeypatch, bad, expect):
    """A file big enough for the fast path (over 1 MB), faulty on its last line: exit 2 and the
    line named, whichever path finds it, and nothing written."""
    from rankgate.core.formats import trec_fast as fast

    monkeypatch.setattr(fast, "MIN_BYTES", 1 << 20)
    monkeypatch.setattr(fast, "BLOCK", 256 << 10)  # several blocks
    lines = "".join(f"q{i // 1000} Q0 d{i % 1000} {i % 1000 + 1} {1000 - i % 1000}.5 tag-{'x' * 20}\n"
                    for i in range(30000))
    run = write(tmp_path / "big.trec", lines + bad)
    assert run.stat().st_size > 1 << 20
    q = write(tmp_path / "q.trec", "q1 0 d1 1\nq9 0 d5 2\n")
    receipt = tmp_path / "receipt.json"
    code, out, err = score(capsys, monkeypatch, True, "gate", "--qrels", q, "--runs", run, "--runs", f"b={run}",
                           "--baseline", "big", "--candidate", "b", "--short-rankings", "allow",
                           "--missing-queries", "zero", "--receipt", receipt)
    assert code == 2 and expect in err and "Traceback" not in err and not receipt.exists()


def test_hash_strings_is_exact_for_short_ids_and_ignores_where_the_strings_sit():
    import pyarrow as pa

    from rankgate.core.formats.trec_fast import hash_strings

    short = [f"{i:x}" for i in range(5000)] + ["", "a\x00", "é", "12345678", "1234567", "abcdefgh", "xyz"]
    h = hash_strings(pa.array(short))
    assert len(set(short)) == len(short) and len(set(h.tolist())) == len(short)  # 8 bytes or fewer: never alike
    long_ = ["clueweb09-en0000-00-%05d" % i for i in range(3000)] + ["x" * 100 + "a", "x" * 100 + "b"]
    both = pa.array(short + long_)
    h = hash_strings(both)
    assert len(set(h.tolist())) == len(short) + len(long_)
    # the same strings give the same hashes in a slice, in chunks, and as a copy
    assert (hash_strings(both.slice(4000, 3000)) == h[4000:7000]).all()
    assert (hash_strings(pa.chunked_array([both.slice(0, 10), both.slice(10)])) == h).all()
    assert (hash_strings(pa.array(both.to_pylist()[::-1])) == h[::-1]).all()


def test_one_length_ids_hash_as_they_do_among_others():
    """IDs all of one length take a quicker way through the hash; their hashes must be the same as
    when they sit among IDs of other lengths (a run's blocks differ in that)."""
    import pyarrow as pa

    from rankgate.core.formats.trec_fast import hash_strings

    same = ["msmarco_passage_0_%07d" % i for i in range(2000)] + ["é" * 12]  # 25 and 24 bytes
    mixed = hash_strings(pa.array(same + ["1", "22", "x" * 40]))
    assert (hash_strings(pa.array(same[:2000])) == mixed[:2000]).all()
    assert len(set(mixed.tolist())) == len(same) + 3


@pytest.mark.parametrize("size", [1, 3, 7, 8, 9, 11, 12, 16, 17, 23])
def test_one_length_ids_read_in_place_hash_as_among_others(size):
    """One-length IDs' words are read in place, every `size` bytes, the last IDs' from a padded copy (a word
    would run past the buffer's end): the hashes are those of the same IDs among others, for the whole
    array (its buffer ends with its last ID), slices at its start, middle and end, and a single ID."""
    import pyarrow as pa

    from rankgate.core.formats.trec_fast import hash_strings

    ids = [f"{i:0{size}d}"[-size:] for i in range(0, 50 * 7919, 7919)]
    arr = pa.array(ids, pa.string())
    assert arr.buffers()[2].size == size * len(ids)  # no slack past the last ID
    want = hash_strings(pa.array(ids + ["x" * (size + 1)], pa.string()))[:len(ids)]  # (lengths differ: the other way)
    assert hash_strings(arr).tolist() == want.tolist()
    for at, n in ((0, 5), (20, 10), (len(ids) - 3, 3), (len(ids) - 1, 1), (0, len(ids))):
        assert hash_strings(arr.slice(at, n)).tolist() == want[at:at + n].tolist()


def spy_lean_reads(monkeypatch) -> list:
    from rankgate.core.formats import trec_fast as fast

    read, used = fast.read_lean_run, []
    monkeypatch.setattr(fast, "read_lean_run", lambda *a, **kw: used.append(read(*a, **kw)) or used[-1])
    return used


def test_a_gzipped_run_goes_through_the_fast_path(tmp_path, capsys, monkeypatch):
    import gzip

    from rankgate.core.formats import trec_fast as fast

    monkeypatch.setattr(fast, "BLOCK", 200)  # lines and queries across blocks of the decompressed stream
    text = "".join(f"q{i % 5} Q0 d{i // 5} 1 {i % 11}.5 t\n" for i in range(300))
    text = "".join(sorted(text.splitlines(True), key=lambda line: line.split()[0]))
    run = write(tmp_path / "run.trec.gz", gzip.compress(text.encode()))
    q = write(tmp_path / "q.trec", "q1 0 d1 1\nq2 0 d4 2\nq3 0 d36 1\nq4 0 d59 1\n")
    argv = ["score", "--qrels", q, "--runs", run, "--format", "trec", "-q", "-m", "AP,nDCG@5,P@10",
            "--missing-queries", "zero", "--short-rankings", "allow"]
    used = spy_lean_reads(monkeypatch)
    fast_ = score(capsys, monkeypatch, True, *argv)
    assert used and used[0] is not None, "the fast path read it"
    assert fast_ == score(capsys, monkeypatch, False, *argv) and fast_[0] == 0


def test_one_endless_line_is_refused_without_reading_it_all(tmp_path, capsys, monkeypatch):
    """A small .gz that holds one huge line: refused once the line passes MAX_LINE, its line named;
    no block grows past about twice that."""
    import gzip

    from rankgate.core.formats import trec_fast as fast

    monkeypatch.setattr(fast, "BLOCK", 4096)
    monkeypatch.setattr(fast, "MAX_LINE", 100_000)
    body = "".join(f"q1 Q0 d{i} 1 {100 - i} t\n" for i in range(50))
    run = write(tmp_path / "run.trec.gz", gzip.compress((body + "x" * 5_000_000 + "\n").encode()))
    sizes = []
    real = bytearray
    monkeypatch.setitem(fast.__dict__, "bytearray", lambda n: sizes.append(n) or real(n))
    q = write(tmp_path / "q.trec", "q1 0 d1 1\n")
    code, out, err = score(capsys, monkeypatch, True, "score", "--qrels", q, "--runs", run, "--short-rankings",
                           "allow")
    assert code == 2 and "run.trec.gz:51: a line longer than 100000 bytes" in err and "Traceback" not in err
    assert max(sizes) <= 4 * 100_000


def test_without_pyarrow_the_general_reader_scores_the_same(tmp_path, capsys, monkeypatch):
    """pyarrow is a dependency, but the general reader remains the way when it cannot be imported."""
    from rankgate.core.formats import trec_fast as fast

    run = write(tmp_path / "run.trec", "".join(f"q{i % 4} Q0 d{i // 4} 1 {i % 7}.25 t\n" for i in range(60)))
    q = write(tmp_path / "q.trec", "q1 0 d1 1\nq2 0 d5 2\n")
    argv = ["score", "--qrels", q, "--runs", run, "--format", "trec", "-q", "-m", "AP,RR,P@3",
            "--missing-queries", "zero", "--short-rankings", "allow"]
    with_fast = score(capsys, monkeypatch, True, *argv)
    monkeypatch.setattr(fast, "available", lambda: False)
    used = spy_lean_reads(monkeypatch)
    assert score(capsys, monkeypatch, True, *argv) == with_fast and not used


def test_score_on_the_fast_path_does_not_import_pandas(tmp_path):
    """pyarrow imports pandas (0.2 s) when an array is built from Python objects and pandas is installed;
    the fast path builds its arrays from buffers instead. Fresh interpreter, pandas installed or not."""
    import subprocess
    import sys

    run = write(tmp_path / "run.trec", "".join(f"q{i % 3} Q0 d{i // 3} 1 {i % 5}.5 t\n" for i in range(90)))
    q = write(tmp_path / "q.trec", "q1 0 d1 1\nq2 0 d5 2\n")
    code = ("import sys, contextlib, io\nimport rankgate.cli\nfrom rankgate.core.formats import trec_fast\n"
            "trec_fast.MIN_BYTES = 0\nseen = []\nreal = trec_fast.read_lean_run\n"
            "trec_fast.read_lean_run = lambda *a, **k: seen.append(real(*a, **k)) or seen[-1]\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    rc = rankgate.cli.main(['score', '--qrels', {str(q)!r}, '--runs', {str(run)!r}, '-m', 'AP',"
            " '--short-rankings', 'allow', '--missing-queries', 'zero'])\n"
            "assert rc == 0 and seen and seen[0] is not None, (rc, seen)\n"
            "print('pandas' in sys.modules, 'pyarrow' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "True"]


def test_a_run_parsed_early_and_never_read_is_stopped_before_the_interpreter_ends(tmp_path):
    """A command that stops before reading its runs (the qrels refused) leaves no thread parsing a run's first
    blocks while the interpreter shuts down (pyarrow then crashed it: exit 134 or 139 instead of 2). The check
    registered first runs last at exit. Fresh interpreter; each block's parse made slow."""
    import subprocess
    import sys

    run = write(tmp_path / "run.trec", "".join(f"q{i % 3} Q0 d{i} 1 {i % 5}.5 t\n" for i in range(400)))
    code = ("import atexit, sys, time\nfrom rankgate.core.formats import trec_fast\n"
            "trec_fast.MIN_BYTES, trec_fast.BLOCK = 0, 256\n"
            "atexit.register(lambda: print([e.thread.is_alive() for e in trec_fast._EARLY.values()]))\n"
            "real = trec_fast._Reader._lean_table\n"
            "trec_fast._Reader._lean_table = lambda self, block: time.sleep(0.1) or real(self, block)\n"
            f"trec_fast.read_early({str(run)!r})\nsys.exit(2)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 2, out.stderr
    assert out.stdout.split() == ["[False]"]


@pytest.mark.parametrize("scattered", [False, True])
@pytest.mark.parametrize("keep_top", [0, 5])
def test_a_second_read_without_looking_for_duplicates_keeps_the_same_rows(tmp_path, scattered, keep_top):
    """watch_top_k's second read of a run skips the (query, document) repeats the first read listed: the
    judged rows, their ranks and the top rows are the same, grouped file or scattered."""
    from rankgate.core.formats import read_qrels
    from rankgate.core.formats.trec_fast import read_lean_run

    lines = [f"q{i % 4} Q0 d{(i * 7) % 23} 1 {(i * 13) % 9}.5 t\n" for i in range(160)]  # documents repeat
    if not scattered:
        lines.sort(key=lambda line: line.split()[0])
    run = write(tmp_path / "run.trec", "".join(lines))
    q = read_qrels(str(write(tmp_path / "q.trec", "".join(f"q{i} 0 d{j} 1\n" for i in range(4)
                                                          for j in range(0, 23, 3)))))
    full, second = (read_lean_run(str(run), "r", q, keep_top=keep_top, duplicates=d) for d in (True, False))
    assert full.n_duplicates > 0 and second.n_duplicates == 0 and second.duplicates == []
    for field in ("num_ret", "jq", "jdoc", "jrank", "top_q", "top_rank"):
        assert getattr(full, field).tolist() == getattr(second, field).tolist(), field
    assert full.top_docs == second.top_docs and full.qnames == second.qnames


def test_the_gate_with_whole_ranking_measures_on_the_fast_path_does_not_import_pandas(tmp_path):
    """The gate with AP and nDCG looks the unjudged top rows of both runs up among the reader's Arrow
    names and sorts them by pyarrow: from buffers, with no pandas import (0.7 s). Fresh interpreter."""
    import subprocess
    import sys

    base = write(tmp_path / "base.trec", "".join(f"q{i % 3} Q0 d{i // 3} 1 {i % 5}.5 t\n" for i in range(90)))
    cand = write(tmp_path / "cand.trec", "".join(f"q{i % 3} Q0 e{i // 2} 1 {i % 7}.5 t\n" for i in range(90)))
    q = write(tmp_path / "q.trec", "".join(f"q{i} 0 d{j} {j % 3}\n" for i in range(3) for j in range(0, 30, 4)))
    code = ("import sys, contextlib, io\nimport rankgate.cli\nfrom rankgate.core.formats import trec_fast\n"
            "trec_fast.MIN_BYTES = 0\nseen = []\nreal = trec_fast.read_lean_run\n"
            "trec_fast.read_lean_run = lambda *a, **k: seen.append(real(*a, **k)) or seen[-1]\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    rc = rankgate.cli.main(['gate', '--qrels', {str(q)!r}, '--runs', 'b=' + {str(base)!r}, '--runs',"
            f" 'c=' + {str(cand)!r}, '--baseline', 'b', '--candidate', 'c', '-m', 'AP', '-m', 'ndcg', '--quiet',"
            " '--short-rankings', 'allow', '--missing-queries', 'zero'])\n"
            "assert rc in (0, 3) and len(seen) >= 2 and None not in seen, (rc, seen)\n"
            "print('pandas' in sys.modules, 'pyarrow' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "True"]


@pytest.mark.parametrize("spill", [False, True])
def test_long_scattered_rankings_sort_as_the_general_path(tmp_path, capsys, monkeypatch, spill):
    """Rankings of hundreds of rows, their lines shuffled, with tied scores: each query's rows are
    sorted on their own (the way taken for long rankings) and must give what the general path gives."""
    import random

    from rankgate.core.formats import trec_fast as fast

    monkeypatch.setattr(fast, "BLOCK", 4096)
    monkeypatch.setattr(fast, "SPILL_AT", 0 if spill else 1 << 40)
    monkeypatch.setattr(fast, "HOLD_AT", 0 if spill else 1 << 40)
    lines = [f"q{q} Q0 d{d} 1 {(d * 7919) % 97 / 4} t\n" for q in range(3) for d in range(400)]
    random.Random(3).shuffle(lines)
    run = write(tmp_path / "run.trec", "".join(lines))
    q = write(tmp_path / "q.trec", "".join(f"q{q} 0 d{d} {1 + d % 2}\n" for q in range(3) for d in range(0, 400, 9)))
    argv = ["score", "--qrels", q, "--runs", run, "--format", "trec", "-q", "-m", "AP,nDCG@10,RR,P@20,R@100",
            "--missing-queries", "zero", "--short-rankings", "allow"]
    used = spy_lean_reads(monkeypatch)
    fast_ = score(capsys, monkeypatch, True, *argv)
    assert used and used[0] is not None and fast_[0] == 0
    assert fast_ == score(capsys, monkeypatch, False, *argv)


@pytest.mark.parametrize("gz", [False, True])
def test_the_apps_full_reader_gives_the_general_readers_run(tmp_path, monkeypatch, gz):
    """read_full_run (the review app's cold cache) keeps every row: the same Run as read_trec_run,
    codes, rows, line numbers and query order included; a file that is not plain gives None."""
    import gzip

    import numpy as np

    from rankgate.core.formats import read_runs
    from rankgate.core.formats import trec_fast as fast
    from rankgate.core.model import Catalog

    monkeypatch.setattr(fast, "BLOCK", 128)
    text = "".join(f"q{(i * 7) % 5} Q0 d{i % 23}-{i} {i} {(i * 13) % 7}.5 t\n" for i in range(200))
    run = write(tmp_path / ("run.trec.gz" if gz else "run.trec"), gzip.compress(text.encode()) if gz else text)
    a = read_runs(str(run), "auto", Catalog())[0]
    b = fast.read_full_run(str(run), None, Catalog())
    for f in ("q", "doc", "score", "where"):
        assert np.array_equal(getattr(a, f), getattr(b, f)), f
    assert (a.query_codes, a.name, a.catalog.docs.names, a.catalog.queries.names) == \
        (b.query_codes, b.name, b.catalog.docs.names, b.catalog.queries.names)
    assert fast.read_full_run(str(write(tmp_path / "tab.trec", "q1\tQ0 d1 1 2 t\n")), None, Catalog()) is None


@pytest.mark.parametrize("text", [
    "q1 0 d1 1\nq1 0 d2 0\nq2 0 d1 -1\nq10 0 é 2\n",
    "q1 0 d1 +1\nq2 Q0 d2 3\n",
    "q1 0 d1 1\n# a comment\nq2 0 d2 1\n",  # comments: the general reader (it keeps their meta)
    "q1 0 d1 1.5\n",  # not a whole number
    "q1 0 d1 1\nq1 0 d1 2\n",  # judged twice
    "q1 0 d1 99999999999999999999\n",  # out of range
    "q1 0 d1 007\nq1 0 d2 -0\nq2 0 d3 123456789012345\nq2 0 d4 -10\n",  # read from the bytes, a digit at a time
    "q1 0 d1 1234567890123456\n",  # 16 digits: the general reader says
    "q1 0 d1 0x10\n",  # pyarrow's integer parser takes hexadecimal; a grade is decimal
    "q1 0 d1 +\nq1 0 d2 -\n",
    "q1 0  d1 1\n",  # an empty field
    "q1\t0 d1 1\n",
    "q1 0 d1 1",  # no line break at the end
])
def test_large_qrels_through_pyarrow_equal_the_general_reader(tmp_path, monkeypatch, text):
    """Plain qrels of 1 MB or more are read through pyarrow; the result is the general reader's, and
    anything else (comments, odd grades, pairs judged twice, empty fields) is left to it."""
    import numpy as np

    from rankgate.core.errors import InputError
    from rankgate.core.formats import read_qrels

    path = write(tmp_path / "q.trec", text)

    def read(fast: bool):
        monkeypatch.setenv("RANKGATE_FAST", "1" if fast else "0")
        try:
            got = read_qrels(path, "trec")
        except InputError as e:
            return str(e)
        return ([got.catalog.queries.names[c] for c in got.q], [got.catalog.docs.names[c] for c in got.doc],
                got.grade.tolist(), got.query_ids, got.meta, got.q.dtype == np.int32, got.doc.dtype == np.int32)

    assert read(True) == read(False)


scattered_st = st.lists(st.tuples(st.sampled_from(["q1", "q2", "q3", "q10"]),
                                  st.sampled_from(["d1", "d2", "d10", "a-much-longer-document-id", "é", "d2x"]),
                                  st.sampled_from([0.5, 1.0, -0.0, 0.0, 2.5])), min_size=1, max_size=60)


@pytest.mark.slow
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=scattered_st, judged=st.sets(st.sampled_from(["d1", "d2", "d10", "a-much-longer-document-id", "é"]),
                                         min_size=1), spill=st.booleans(), block=st.sampled_from([16 << 20, 40, 97]),
       gz=st.booleans(), few=st.sampled_from([0, 3, 2000]), window=st.sampled_from([3, 12, 96]))
def test_scattered_rows_are_ranked_by_counting_as_by_sorting(tmp_path, monkeypatch, rows, judged, spill, block, gz,
                                                            few, window):
    """A scattered file's judged rows are ranked by counting (`_settle_unsorted`, no sort of the rows),
    in memory or through temporary partitions: the same ranks, counts and duplicates as sorting
    every query's rows (the way taken when the gate keeps each ranking's top), ties, IDs of several
    lengths, duplicates and documents judged for other queries included; a plain file's document
    IDs found again in the file (line by line, or a block parsed again: `few`), a gzipped one's in a
    temporary file."""
    import gzip

    from rankgate.core.formats import read_qrels
    from rankgate.core.formats import trec_fast as fast

    monkeypatch.setattr(fast, "BLOCK", block)
    monkeypatch.setattr(fast, "SPILL_AT", 0 if spill else 1 << 40)
    monkeypatch.setattr(fast, "HOLD_AT", 0 if spill else 1 << 40)
    monkeypatch.setattr(fast, "SPILL_BUCKET", 64)
    monkeypatch.setattr(fast, "FEW_LINES", few)
    monkeypatch.setattr(fast, "WINDOW", window)
    path = tmp_path / ("run.trec.gz" if gz else "run.trec")
    text = "".join(f"{q} Q0 {d} 0 {s} t\n" for q, d, s in rows).encode()
    path.write_bytes(gzip.compress(text) if gz else text)
    qrels = read_qrels(write(tmp_path / "q.trec", "".join(f"q1 0 {d} 1\n" for d in sorted(judged))))
    stores = []
    real = getattr(fast._doc_store, "real", fast._doc_store)  # hypothesis runs this many times in one test

    def doc_store(*a):
        store = real(*a)
        stores.append(type(store).__name__)
        return store

    doc_store.real = real
    monkeypatch.setattr(fast, "_doc_store", doc_store)
    counted = fast.read_lean_run(str(path), "run", qrels)
    assert set(stores) <= {"_DocStore" if gz else "_Reread"}
    sorted_ = fast.read_lean_run(str(path), "run", qrels, keep_top=1)
    assert counted is not None and sorted_ is not None
    key = lambda r: sorted(zip(r.jq.tolist(), r.jdoc.tolist(), r.jrank.tolist()))  # noqa: E731
    assert key(counted) == key(sorted_)
    assert counted.qnames == sorted_.qnames and counted.num_ret.tolist() == sorted_.num_ret.tolist()
    assert counted.duplicates == sorted_.duplicates and counted.n_duplicates == sorted_.n_duplicates


shuffled_st = st.lists(st.tuples(st.sampled_from(["q1", "q2", "q3", "q-unjudged"]),
                                 st.sampled_from(["d1", "d2", "d3", "d10", "a-much-longer-document-id", "é"]),
                                 st.sampled_from([0.5, 1.0, 1.0, 2.5, -0.0])), min_size=1, max_size=50)


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=shuffled_st, qrels=st.dictionaries(st.sampled_from(["q1", "q2", "q3", "q9"]),
                                               st.dictionaries(st.sampled_from(["d1", "d2", "d3", "d10", "é"]),
                                                               st.integers(0, 3), min_size=1, max_size=3),
                                               min_size=1, max_size=4),
       seed=st.integers(0, 2**16), block=st.sampled_from([16 << 20, 48, 101]),
       hold=st.sampled_from(["memory", "just over", "half", "none"]))
def test_a_shuffled_run_scores_as_the_general_reader(tmp_path, capsys, monkeypatch, rows, qrels, seed, block, hold):
    """A run whose queries' lines are shuffled through the file, read by counting (`score`):
    every measure equals the general reader's, ties, duplicate (query, document) pairs, a query
    nobody judged and documents judged only for other queries included, whether its rows are
    kept in memory, go to partitions on disk when HOLD_AT is passed by the last block (`just
    over`) or halfway (`half`), or from the first block (`none`)."""
    import random

    from rankgate.core.formats import trec_fast as fast

    random.Random(seed).shuffle(rows)
    rows = [("q1", "d1", 1.0), ("q2", "d2", 1.0)] + rows + [("q1", "d3", 1.0)]  # q1 in two places: scattered
    limits = {"memory": 1 << 40, "just over": fast.ROW_BYTES * len(rows) - 1,
              "half": fast.ROW_BYTES * len(rows) // 2, "none": 0}
    monkeypatch.setattr(fast, "BLOCK", block)
    monkeypatch.setattr(fast, "HOLD_AT", limits[hold])
    monkeypatch.setattr(fast, "SPILL_BUCKET", 64)
    spills, counted = [], []
    real_spill, real_counted = fast._spill, fast._counted
    monkeypatch.setattr(fast, "_spill", lambda *a, **kw: spills.append(1) or real_spill(*a, **kw))
    monkeypatch.setattr(fast, "_counted", lambda *a, **kw: counted.append(1) or real_counted(*a, **kw))
    run = write(tmp_path / "run.trec", "".join(f"{q} Q0 {d} 0 {s} t\n" for q, d, s in rows))
    q = write(tmp_path / "q.trec", "".join(f"{qid} 0 {d} {g}\n" for qid, ds in qrels.items() for d, g in ds.items()))
    argv = ["score", "--qrels", q, "--runs", run, "--format", "json", "-m", every_measure(),
            "--missing-queries", "zero", "--short-rankings", "allow", "--k", "2"]
    assert score(capsys, monkeypatch, True, *argv) == score(capsys, monkeypatch, False, *argv)
    assert counted == [1] and len(spills) == (hold != "memory")


def test_a_shuffled_run_just_over_the_limit_keeps_its_duplicates_and_ranks(tmp_path, monkeypatch):
    """The rows kept in memory handed to partitions (HOLD_AT passed by the last block): the same
    ranks, counts and duplicates, named in file order, as all in memory."""
    import random

    from rankgate.core.formats import read_qrels
    from rankgate.core.formats import trec_fast as fast

    rng = random.Random(11)
    lines = [f"q{q} Q0 d{d} 0 {rng.choice([1, 2, 3])} t\n" for q in range(30) for d in range(20)]
    lines += [lines[7], lines[300], lines[7]]  # duplicates, one of them twice
    rng.shuffle(lines)
    run = write(tmp_path / "run.trec", "".join(lines))
    qrels = read_qrels(write(tmp_path / "q.trec", "".join(f"q{q} 0 d{(3 * q) % 20} 1\n" for q in range(25))))
    monkeypatch.setattr(fast, "BLOCK", 700)
    monkeypatch.setattr(fast, "HOLD_AT", 1 << 40)
    whole = fast.read_lean_run(str(run), "run", qrels)
    monkeypatch.setattr(fast, "HOLD_AT", fast.ROW_BYTES * len(lines) - 1)
    monkeypatch.setattr(fast, "SPILL_BUCKET", 2000)
    spills = []
    real = fast._spill
    monkeypatch.setattr(fast, "_spill", lambda *a, **kw: spills.append(1) or real(*a, **kw))
    over = fast.read_lean_run(str(run), "run", qrels)
    key = lambda r: sorted(zip(r.jq.tolist(), r.jdoc.tolist(), r.jrank.tolist()))  # noqa: E731
    assert spills == [1] and key(over) == key(whole) and over.num_ret.tolist() == whole.num_ret.tolist()
    assert over.n_duplicates == whole.n_duplicates == 3 and over.duplicates == whole.duplicates
    assert [d[0] for d in over.duplicates] == sorted(d[0] for d in over.duplicates)


@pytest.mark.parametrize("hold", [1 << 40, 0])
def test_shuffled_rows_whose_hashes_collide_are_told_apart_exactly(tmp_path, monkeypatch, hold):
    """The duplicate check of a scattered file sorts the top 32 bits of each row's hash; rows that
    share them are compared by query and document. With only 4 values of it (every row a
    candidate), the same duplicates as with the whole hash."""
    import numpy as np

    from rankgate.core.formats import read_qrels
    from rankgate.core.formats import trec_fast as fast

    lines = [f"q{i % 7} Q0 d{(i * 5) % 11} 0 {i % 3} t\n" for i in range(60)]  # each pair once...
    lines.insert(40, lines[3])  # ...but these two
    lines.insert(50, lines[12])
    lines += ["qx Q0 dz 0 1 t\n", "qy Q0 dz 0 1 t\n"]  # one document, two queries: no duplicate
    run = write(tmp_path / "run.trec", "".join(lines))
    qrels = read_qrels(write(tmp_path / "q.trec", "q1 0 d1 1\nq2 0 d2 1\n"))
    monkeypatch.setattr(fast, "BLOCK", 300)
    monkeypatch.setattr(fast, "HOLD_AT", hold)
    exact = fast.read_lean_run(str(run), "run", qrels)
    monkeypatch.setattr(fast, "_top", lambda key: (key >> np.uint64(62)).astype(np.uint32))
    coarse = fast.read_lean_run(str(run), "run", qrels)
    assert exact.n_duplicates == coarse.n_duplicates == 2
    assert exact.duplicates == coarse.duplicates == [(41, "q3", "d4"), (51, "q5", "d5")]
    key = lambda r: sorted(zip(r.jq.tolist(), r.jdoc.tolist(), r.jrank.tolist()))  # noqa: E731
    assert key(exact) == key(coarse)


@pytest.mark.parametrize("hold", [1 << 40, 0])
def test_shuffled_rows_whose_whole_hashes_collide_are_told_apart_exactly(tmp_path, monkeypatch, hold):
    """Every document given one hash, so every row of a query shares its (query, document) hash with the
    query's other rows: only true duplicates are named, compared by their document IDs (found again
    in the file), and the ranks are those of the real hash."""
    import numpy as np

    from rankgate.core.formats import read_qrels
    from rankgate.core.formats import trec_fast as fast

    lines = [f"q{i % 7} Q0 d{(i * 5) % 11} 0 {i % 3} t\n" for i in range(60)]
    lines.insert(40, lines[3])
    lines.insert(50, lines[12])
    run = write(tmp_path / "run.trec", "".join(lines))
    qrels = read_qrels(write(tmp_path / "q.trec", "q1 0 d1 1\nq2 0 d2 1\nq3 0 d4 2\n"))
    monkeypatch.setattr(fast, "BLOCK", 300)
    monkeypatch.setattr(fast, "HOLD_AT", hold)
    exact = fast.read_lean_run(str(run), "run", qrels)
    monkeypatch.setattr(fast, "hash_strings", lambda d: np.full(len(d), 12345, np.uint64))
    forced = fast.read_lean_run(str(run), "run", qrels)
    assert forced.n_duplicates == exact.n_duplicates == 2
    assert forced.duplicates == exact.duplicates == [(41, "q3", "d4"), (51, "q5", "d5")]
    key = lambda r: sorted(zip(r.jq.tolist(), r.jdoc.tolist(), r.jrank.tolist()))  # noqa: E731
    assert key(forced) == key(exact) and len(key(exact)) >= 3


@pytest.mark.parametrize("change", ["append", "rewrite", "rewrite, time put back", "renamed over", "a fifo now",
                                    "append, same stat", "append, same stat, parsed"])
def test_a_scattered_file_changed_while_read_is_refused(tmp_path, capsys, monkeypatch, change):
    """Its document IDs are found again in the file (for a duplicate here): a file that changed since it
    was read is refused in one line, exit 2, not misread or waited on; seen by its size or times (a
    modification time put back, as `cp -p` does, still moves the change time), or (when those look
    the same) by the block's count of lines."""
    import os

    from rankgate.core.formats import trec_fast as fast

    if "same stat" in change:
        monkeypatch.setattr(fast, "_identity", lambda f: "the same")
    if "parsed" in change:
        monkeypatch.setattr(fast, "FEW_LINES", 0)

    lines = [f"q{i % 5} Q0 d{i % 13} 0 {i % 4} t\n" for i in range(50)]
    lines.insert(30, lines[2])
    run = write(tmp_path / "run.trec", "".join(lines))
    q = write(tmp_path / "q.trec", "q1 0 d1 1\n")
    monkeypatch.setattr(fast, "BLOCK", 200)
    real = fast._settle_unsorted

    def settle_after_a_change(*a, **kw):
        text = run.read_bytes()
        if change.startswith("append"):  # a line in every block: the one asked for again has one more line
            run.write_bytes(text.replace(b"\n", b"\nq9 Q0 d9 0 1 t\n", 1).replace(b"t\nq0", b"t\nq9 Q0 d8 0 1 t\nq0"))
        elif change == "renamed over":
            (tmp_path / "new.trec").write_bytes(text.replace(b"d1 ", b"d7 "))
            os.replace(tmp_path / "new.trec", run)
        elif change == "a fifo now":
            run.unlink()
            os.mkfifo(run)
        else:  # same size, other bytes, a later time or the same
            st = os.stat(run)
            run.write_bytes(text.replace(b"d1 ", b"d7 "))
            later = st.st_mtime_ns + (0 if "put back" in change else 10**9)
            os.utime(run, ns=(st.st_atime_ns, later))
        return real(*a, **kw)

    monkeypatch.setattr(fast, "_settle_unsorted", settle_after_a_change)
    code, out, err = score(capsys, monkeypatch, True, "score", "--qrels", q, "--runs", run)
    assert code == 2 and "Traceback" not in err
    assert "run.trec: the file changed while rankgate was reading it" in err and len(err.strip().splitlines()) == 1


def test_a_scattered_file_past_the_limit_reads_each_block_again_once(tmp_path, monkeypatch):
    """Rows kept in memory handed to partitions (HOLD_AT passed): the kept blocks' document IDs are read
    again once each, into a file the partitions share, not once per partition; every score tied, so
    every partition asks for IDs; the same ranks and duplicates as all in memory."""
    import random

    from rankgate.core.formats import read_qrels
    from rankgate.core.formats import trec_fast as fast

    rng = random.Random(5)
    lines = [f"q{q} Q0 d{d} 0 {rng.choice([1, 2])} t\n" for q in range(40) for d in range(30)]
    lines += [lines[3], lines[500]]
    rng.shuffle(lines)
    run = write(tmp_path / "run.trec", "".join(lines))
    qrels = read_qrels(write(tmp_path / "q.trec", "".join(f"q{q} 0 d{q % 30} 1\n" for q in range(40))))
    monkeypatch.setattr(fast, "BLOCK", 2000)
    monkeypatch.setattr(fast, "HOLD_AT", 1 << 40)
    whole = fast.read_lean_run(str(run), "run", qrels)
    reads, real = [], fast._Reread._read
    monkeypatch.setattr(fast._Reread, "_read", lambda self, i: reads.append(i) or real(self, i))
    monkeypatch.setattr(fast, "HOLD_AT", fast.ROW_BYTES * len(lines) // 2)
    monkeypatch.setattr(fast, "SPILL_BUCKET", 3000)
    over = fast.read_lean_run(str(run), "run", qrels)
    key = lambda r: sorted(zip(r.jq.tolist(), r.jdoc.tolist(), r.jrank.tolist()))  # noqa: E731
    assert key(over) == key(whole) and over.duplicates == whole.duplicates and over.n_duplicates == 2
    assert reads and sorted(reads) == sorted(set(reads)) == list(range(len(reads)))  # the kept blocks, once each


@pytest.mark.parametrize("forced", [False, True])
def test_a_grouped_duplicate_is_found_when_a_colliding_document_sits_between(tmp_path, capsys, monkeypatch,
                                                                             forced):
    """X, Y, X in one query where X and Y share a hash (a real 64-bit collision of hash_strings, or every
    document forced to one hash): the repeat of X is refused as the general reader refuses it (it was
    missed: only neighbours in hash order were compared, and Y sat between)."""
    import numpy as np

    from rankgate.core.formats import trec_fast as fast

    x, y = "DOCAAAAABBBBBBBB", "GFfslsqxkxo++^|y"  # found by the red team's search: same hash_strings value
    if forced:
        monkeypatch.setattr(fast, "hash_strings", lambda d: np.full(len(d), 12345, np.uint64))
    lines = [f"q0 Q0 {x} 1 9 t\n", f"q0 Q0 {y} 2 8 t\n", f"q0 Q0 {x} 3 7 t\n", f"q1 Q0 {x} 1 9 t\n"]
    run = write(tmp_path / "run.trec", "".join(lines))
    qrels = write(tmp_path / "q.trec", f"q0 0 {x} 1\nq1 0 {y} 1\n")
    got = [score(capsys, monkeypatch, fast_, "score", "--qrels", qrels, "--runs", run) for fast_ in (True, False)]
    assert got[0] == got[1]
    assert got[0][0] == 2 and f"run.trec:3: run 'run' ranks document '{x}' twice for query 'q0'" in got[0][2]


def test_a_line_too_long_is_refused_in_the_same_words_by_both_readers(tmp_path, capsys, monkeypatch):
    """One limit and one message for a line over 32 MiB (the fast path said '16 MB', yet took 20 MiB lines
    by falling back)."""
    from rankgate.core.formats import textio

    run = tmp_path / "run.trec"
    with open(run, "w") as f:
        f.write("q1 Q0 d1 1 2.0 t\n" * 1000)
        f.write("q1 Q0 " + "x" * (textio.MAX_LINE + 10) + " 2 1.0 t\n")
    qrels = write(tmp_path / "q.trec", "q1 0 d1 1\n")
    got = [score(capsys, monkeypatch, fast_, "score", "--qrels", qrels, "--runs", run) for fast_ in (True, False)]
    assert got[0] == got[1]
    assert got[0][0] == 2 and "run.trec:1001: a line longer than 32 MiB" in got[0][2]


@settings(max_examples=200, deadline=None)
@given(text=st.text(alphabet=" \nab", max_size=40))
def test_an_empty_field_is_seen_at_any_byte_offset(text):
    """The lean parse's check (two spaces in a row, or a space before a line break) finds the pair
    wherever it sits, at an even or an odd offset of the block, and at either end of a stretch it looks at."""
    from rankgate.core.formats import trec_fast as fast

    block = bytearray(text.encode())
    saved = fast.EMPTY_STEP
    try:
        for fast.EMPTY_STEP in (saved, 1, 3):
            assert fast._empty_field(memoryview(block)) == ("  " in text or " \n" in text)
    finally:
        fast.EMPTY_STEP = saved


@pytest.mark.parametrize("bad", ["q1 Q0 d2 2 1.5 \n", "q1 Q0  2 1.5 t\n", "q1 Q0 d2  1.5 t\n", "q1  d2 2 1.5 t\n"])
def test_an_empty_field_deep_in_a_large_file_sends_it_to_the_general_reader(tmp_path, monkeypatch, bad):
    from rankgate.core.formats import read_qrels
    from rankgate.core.formats import trec_fast as fast

    monkeypatch.setattr(fast, "BLOCK", 64)
    lines = [f"q1 Q0 d{i} {i} {100 - i} t\n" for i in range(1, 40)]
    lines[23] = bad
    run = write(tmp_path / "run.trec", "".join(lines))
    qrels = read_qrels(write(tmp_path / "q.trec", "q1 0 d1 1\n"))
    assert fast.read_lean_run(str(run), "run", qrels) is None


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(groups=st.lists(st.lists(st.integers(0, 6), min_size=1, max_size=9), min_size=1, max_size=6),
       rows=st.lists(st.tuples(st.integers(0, 5), st.integers(0, 6)), max_size=30))
def test_counting_below_a_row_equals_a_sorted_search(groups, rows):
    """_count_below (one comparison where a query has one judged score, a search where it has more)
    counts the judged scores below each row's score as searchsorted does."""
    from rankgate.core.formats import trec_fast as fast

    js = np.concatenate([np.sort(np.array(g, np.float64)) for g in groups])
    first = np.cumsum([0] + [len(g) for g in groups])
    rows = [(g % len(groups), v) for g, v in rows]
    lo = np.array([first[g] for g, _ in rows], np.int32)
    m = np.array([len(groups[g]) for g, _ in rows], np.int32)
    s = np.array([v for _, v in rows], np.float64)
    want = [int(np.searchsorted(js[first[g]:first[g + 1]], v, "left")) for g, v in rows]
    assert fast._count_below(js, lo, m, s).tolist() == want



@pytest.mark.slow
def test_the_judged_documents_hash_table_finds_every_key_and_nothing_else():
    """Keys whose top bits are all equal (one long run of probes), and keys spread out: each found at
    its own position, absent ones not found."""
    from rankgate.core.formats.trec_fast import _HashTable

    rng = np.random.default_rng(0)
    for h in (np.arange(1, 3000, dtype=np.uint64) * np.uint64(7),
              rng.integers(0, 2**63, size=50_000, dtype=np.uint64) * np.uint64(2)):
        table = _HashTable(h)
        assert np.array_equal(table.find(h), np.arange(len(h)))
        assert (table.find(h + np.uint64(1)) == -1).all()  # odd or between: never a key
        shuffled = rng.permutation(len(h))
        assert np.array_equal(table.find(h[shuffled]), shuffled)


def test_a_hash_table_of_repeated_keys_says_so():
    from rankgate.core.formats.trec_fast import _HashTable

    assert _HashTable(np.array([5, 9, 5], np.uint64)).repeated
    assert _HashTable(np.full(3, 12345, np.uint64)).repeated  # alike keys wanting one slot at once
    assert _HashTable(np.array([1 << 60, 7, (1 << 60) + 1, 1 << 60], np.uint64)).repeated  # after probing on
    assert not _HashTable(np.array([5, 9, 6], np.uint64)).repeated


def test_a_fresh_interner_filled_with_distinct_names_builds_its_dictionary_when_asked():
    from rankgate.core.model import Interner

    i = Interner()
    assert i.extend(["b", "a", "c"], distinct=True).tolist() == [0, 1, 2]
    assert i._codes is None  # no dictionary yet
    assert i.get("a") == 1 and i.code("d") == 3 and i.extend(["c", "e", "d"]).tolist() == [2, 4, 3]
    assert i.names == ["b", "a", "c", "d", "e"] and i.codes == {"b": 0, "a": 1, "c": 2, "d": 3, "e": 4}
    assert i.order().tolist() == [1, 0, 2, 3, 4]
    j = Interner()
    j.code("x")
    assert j.extend(["y", "x"], distinct=True).tolist() == [1, 0]  # not fresh: the usual way


def test_names_looked_up_in_a_fast_readers_documents_get_the_codes_extend_gives():
    """Interner.extend_looked_up (the gate's unjudged top rows) finds known names through the reader's Arrow
    names and adds new ones in order, as `extend` does, without building the name -> code dictionary."""
    import pyarrow as pa

    from rankgate.core.model import Interner

    known = [f"doc_{i:04d}" for i in range(0, 2000, 3)]
    asked = ["doc_0003", "new_b", "doc_1998", "new_a", "new_b", "doc_0000", "new_c"]
    fast, plain = Interner(), Interner()
    fast.extend(known, distinct=True)
    fast.arrow = pa.array(known, pa.string())
    plain.extend(known)
    got = fast.extend_looked_up(asked)
    assert fast._codes is None  # no dictionary built
    assert got.tolist() == plain.extend(asked).tolist() and fast.names == plain.names
    assert fast.extend_looked_up(["new_a", "doc_0006"]).tolist() == plain.extend(["new_a", "doc_0006"]).tolist()


def test_a_second_runs_names_are_looked_up_without_the_dictionary_or_python_names():
    """The gate's second run: names an earlier run added after the reader's Arrow names are found again,
    new ones added in order, and neither the name -> code dictionary nor the Arrow names' Python strings are
    made (a million judged documents: 1.5 CPU s); codes and order as `extend` gives them."""
    import pyarrow as pa

    from rankgate.core.model import Interner

    known = [f"doc_{i:04d}" for i in range(0, 3000, 2)]
    fast, plain = Interner(), Interner()
    fast.adopt(pa.array(known, pa.string()))
    plain.extend(known)
    runs = [["new_b", "doc_0002", "new_a", "new_b"], ["new_a", "new_c", "doc_2998", "new_b", "new_d", "new_c"],
            ["doc_0001", "new_d", "doc_0000"], [], ["\u00e9t\u00e9", "new_a"]]
    for asked in runs:
        assert fast.extend_looked_up(asked).tolist() == plain.extend(asked).tolist()
        assert fast._codes is None and fast._lazy is not None  # no dictionary, no Python string of the known
        assert len(fast) == len(plain)
    assert fast.order().tolist() == plain.order().tolist()
    assert fast.names == plain.names and fast.codes == plain.codes
    assert fast.extend_looked_up(["bad\udcff", "new_c"]).tolist() == plain.extend(["bad\udcff", "new_c"]).tolist()


def test_a_fast_readers_documents_sort_by_arrow_as_by_numpy():
    """Interner.order from the Arrow names (and the names added after them) is numpy's code-point order."""
    import pyarrow as pa

    from rankgate.core.model import Interner

    known = ["b", "a\u00e9", "a", "Z", "\u4e2d", "a\U0001f600", "ab", ""]
    fast = Interner()
    fast.extend(known, distinct=True)
    fast.arrow = pa.array(known, pa.string())
    fast.extend_looked_up(["zz", "a", "\u00e9", "A"])
    plain = Interner()
    plain.extend(fast.names)
    assert fast._arrow_order() is not None
    assert fast.order().tolist() == plain.order().tolist()
    fast.extend(["bad\udcff"])  # a surrogate-escaped byte: not UTF-8, numpy's path
    plain.extend(["bad\udcff"])
    assert fast.order().tolist() == plain.order().tolist()


pair_rows_st = st.lists(st.tuples(st.sampled_from(["q1", "q2", "q3", "q-unjudged"]),
                                  st.sampled_from(["d1", "d2", "d3", "a-much-longer-document-id", "é", "q1"]),
                                  st.sampled_from([0.5, 1.0, 2.5])), min_size=1, max_size=50)
pair_qrels_st = st.dictionaries(st.sampled_from(["q1", "q2", "q3", "q9", "d1"]),
                                st.dictionaries(st.sampled_from(["d1", "d2", "d3", "é", "q1"]), st.integers(0, 3),
                                                min_size=1, max_size=3), min_size=1, max_size=4)


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=pair_rows_st, qrels=pair_qrels_st, grouped=st.booleans(), block=st.sampled_from([16 << 20, 40, 97]),
       jobs=st.sampled_from([1, 2]), hold=st.booleans(), weak=st.booleans(), local=st.sampled_from([0, 1 << 40]),
       merge=st.sampled_from([0, 1 << 40]))
def test_judged_rows_looked_up_by_pair_are_those_judged_for_their_query(tmp_path, monkeypatch, rows, qrels, grouped,
                                                                       block, jobs, hold, weak, local, merge):
    """`by_pair` (score and compare): the judged rows kept are exactly the rows, of those kept when a
    document judged for any query counts, whose document is judged for their own query, with the same
    ranks; the engine's Prepared is the same. Grouped or scattered files, in memory or partitioned,
    one thread or two, queries and documents nobody judged, a query named as a document, and (`weak`)
    a hash under which every (query, document) collides, so each hit is told apart exactly; each block's
    queries' entries looked up alone (`local` 0), matched with the block's rows by one sort (`merge`), or
    among all."""
    from rankgate.core import engine
    from rankgate.core.formats import read_qrels
    from rankgate.core.formats import trec_fast as fast

    monkeypatch.setattr(fast, "BLOCK", block)
    monkeypatch.setattr(fast, "HOLD_AT", 1 << 40 if hold else 0)
    monkeypatch.setattr(fast, "SPILL_BUCKET", 64)
    monkeypatch.setattr(fast, "LOCAL_ROWS", local)
    monkeypatch.setattr(fast, "MERGE_ENTRIES", merge)
    if weak:
        monkeypatch.setattr(fast, "_mix", lambda x: np.zeros(len(x), np.uint64))
        monkeypatch.setattr(fast, "hash_strings", lambda d: np.zeros(len(d), np.uint64))
    fast._LOOKUP.clear()
    if grouped:
        rows = sorted(rows, key=lambda r: r[0])
    run = write(tmp_path / "run.trec", "".join(f"{q} Q0 {d} 0 {s} t\n" for q, d, s in rows))
    q = read_qrels(str(write(tmp_path / "q.trec", "".join(f"{qid} 0 {d} {g}\n" for qid, ds in qrels.items()
                                                          for d, g in ds.items()))))
    by_doc, by_pair = (fast.read_lean_run(str(run), "r", q, jobs=jobs, by_pair=p) for p in (False, True))
    fast._LOOKUP.clear()
    names = q.catalog.docs.names
    judged = {(q.catalog.queries.names[a], names[b]) for a, b in zip(q.q.tolist(), q.doc.tolist())}
    triples = lambda r: sorted(zip(r.jq.tolist(), r.jdoc.tolist(), r.jrank.tolist()))  # noqa: E731
    want = [t for t in triples(by_doc) if (by_doc.qnames[t[0]], names[t[1]]) in judged]
    assert triples(by_pair) == want
    assert by_pair.qnames == by_doc.qnames and by_pair.num_ret.tolist() == by_doc.num_ret.tolist()
    assert by_pair.duplicates == by_doc.duplicates and by_pair.n_duplicates == by_doc.n_duplicates
    assert by_doc.jentry is None and by_pair.jentry is not None  # by pair, each pair judged once: the entries
    assert [(q.q[e], q.doc[e]) for e in by_pair.jentry.tolist()] == [
        (q.catalog.queries.codes[by_pair.qnames[a]], b) for a, b in zip(by_pair.jq.tolist(), by_pair.jdoc.tolist())]
    a, b = (engine.prepare_lean(q, r, rel_level=1, missing="zero") for r in (by_doc, by_pair))  # search, entries
    for field in ("qp", "rank", "grade", "doc", "num_ret"):
        assert getattr(a, field).tolist() == getattr(b, field).tolist(), field


@pytest.mark.parametrize("window", [1, 5, 96])
def test_document_ids_found_again_in_a_block_are_each_lines_third_field(monkeypatch, window):
    """_docs_in_lines: any lines asked for, in any order and more than once, long fields past the window
    included; a block with another number of lines is refused (None)."""
    from rankgate.core.formats import trec_fast as fast

    monkeypatch.setattr(fast, "WINDOW", window)
    rng = np.random.default_rng(3)
    lines = [f"{'q' * int(rng.integers(1, 40))} Q0 {'d' * int(rng.integers(1, 30))}{i} {i} 1.5 tag\n".encode()
             for i in range(300)]
    block = b"".join(lines)
    local = np.r_[rng.integers(0, 300, 200), 0, 299, 0]
    assert fast._docs_in_lines(block, local, 300) == [lines[i].split(b" ")[2] for i in local.tolist()]
    assert fast._docs_in_lines(block, local[:0], 300) == []
    assert fast._docs_in_lines(block, local, 299) is None
    short = b"q Q0 d\n" + b"".join(lines[1:])  # a line of three fields: not the file that was read
    assert fast._docs_in_lines(short, np.array([0]), 300) is None
    assert fast._docs_in_lines(short, np.array([1]), 300) == [lines[1].split(b" ")[2]]


@pytest.mark.parametrize("local, merge", [(0, 0), (1 << 40, 0), (1 << 40, 1 << 40)])
@pytest.mark.parametrize("block", [16 << 20, 3000])
@pytest.mark.parametrize("mixed", [False, True])
def test_many_judged_pairs_a_block_are_each_found_for_their_query(tmp_path, monkeypatch, local, merge, block, mixed):
    """By pair, with many entries a block (40 queries, 25 judged each, in blocks of a few queries or
    one): every row judged for its query is found with its code and rank, none judged for another;
    qrels grouped by query or (`mixed`) not; the block's entries searched alone, matched with its rows
    by one sort (`merge`), or looked up among all."""
    from rankgate.core.formats import read_qrels
    from rankgate.core.formats import trec_fast as fast

    monkeypatch.setattr(fast, "LOCAL_ROWS", local)
    monkeypatch.setattr(fast, "MERGE_ENTRIES", merge)
    monkeypatch.setattr(fast, "BLOCK", block)
    rng = np.random.default_rng(7)
    judged = {f"q{i}": {f"d{j}" for j in rng.choice(200, 25, replace=False).tolist()} for i in range(40)}
    qlines = [f"{qid} 0 {d} 1\n" for qid, ds in judged.items() for d in sorted(ds)]
    if mixed:
        qlines = [qlines[i] for i in rng.permutation(len(qlines))]
    q = read_qrels(str(write(tmp_path / "q.trec", "".join(qlines))))
    lines, want = [], set()
    for i in range(45):  # q40-q44: nobody judged them
        for rank, j in enumerate(rng.choice(200, 60, replace=False).tolist()):
            lines.append(f"q{i} Q0 d{j} {rank} {100 - rank} t\n")
            if f"d{j}" in judged.get(f"q{i}", ()):
                want.add((f"q{i}", f"d{j}", rank))
    run = fast.read_lean_run(str(write(tmp_path / "run.trec", "".join(lines))), "r", q, by_pair=True)
    names = q.catalog.docs.names
    got = {(run.qnames[a], names[b], c) for a, b, c in zip(run.jq.tolist(), run.jdoc.tolist(), run.jrank.tolist())}
    assert got == want and len(run.jq) == len(want) > 100
    fast._LOOKUP.clear()


def test_a_runs_qrels_entries_give_grades_only_for_the_qrels_it_was_read_against(tmp_path):
    """A run read by pair carries each judged row's qrels entry, and prepare_lean takes the grade from it
    (no search) only for those same qrels, each pair judged once: qrels with the same judgments in
    another order, or with a pair judged twice (built by hand: the readers refuse it), go through the
    search, so the values are those of the run read against them."""
    import dataclasses

    from rankgate.core import engine
    from rankgate.core.formats import read_qrels
    from rankgate.core.formats import trec_fast as fast

    rng = np.random.default_rng(11)
    judged = [(f"q{i}", f"d{j}", int(rng.integers(0, 4))) for i in range(30) for j in rng.choice(80, 20, replace=False)]
    q = read_qrels(str(write(tmp_path / "q.trec", "".join(f"{a} 0 {b} {g}\n" for a, b, g in judged))))
    flipped = read_qrels(str(write(tmp_path / "r.trec", "".join(f"{a} 0 {b} {g}\n" for a, b, g in judged[::-1]))),
                         catalog=q.catalog)  # the same judgments, rows reversed (q's entries point elsewhere in it)
    lines = "".join(f"q{i} Q0 d{j} {r} {100 - r} t\n" for i in range(32) for r, j in
                    enumerate(rng.choice(80, 50, replace=False).tolist()))
    path = str(write(tmp_path / "run.trec", lines))
    fast._LOOKUP.clear()
    run = fast.read_lean_run(path, "r", q, by_pair=True)
    assert run.jentry is not None and len(run.jentry) == len(run.jq) > 100
    fast._LOOKUP.clear()
    fresh = fast.read_lean_run(path, "r", flipped, by_pair=True)
    at = int(run.jentry[0])  # a pair the run holds, judged again below with another grade
    twice = dataclasses.replace(q, q=np.r_[q.q, q.q[at]], doc=np.r_[q.doc, q.doc[at]],
                                grade=np.r_[q.grade, (q.grade[at] + 1) % 4])
    fast._LOOKUP.clear()
    doubled = fast.read_lean_run(path, "r", twice, by_pair=True)
    assert doubled.jentry is None  # a pair judged twice: no entries
    doubled_by_doc = fast.read_lean_run(path, "r", twice, by_pair=False)
    fast._LOOKUP.clear()
    by_doc = fast.read_lean_run(path, "r", q, by_pair=False)
    fast._LOOKUP.clear()

    def prepared(qrels, r):
        p = engine.prepare_lean(qrels, r, rel_level=1, missing="zero")
        return [getattr(p, f).tolist() for f in ("qp", "rank", "grade", "doc", "num_ret")]

    want = prepared(q, by_doc)
    assert prepared(q, run) == want
    assert prepared(flipped, run) == prepared(flipped, fresh) == want  # not q's entries read in flipped's rows
    assert prepared(twice, doubled) == prepared(twice, run) == prepared(twice, doubled_by_doc)
    assert sorted(prepared(flipped, dataclasses.replace(run, entries_of=(flipped, flipped.q, flipped.doc)))[2]) \
        != sorted(want[2])  # (were q's entries taken for flipped's, the grades would differ)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=pair_rows_st, qrels=pair_qrels_st, grouped=st.booleans(), keep_top=st.sampled_from([1, 2, 5]),
       jobs=st.sampled_from([1, 2]))
def test_the_gates_runs_read_by_pair_give_the_prepared_read_by_document_gives(tmp_path, monkeypatch, rows, qrels,
                                                                              grouped, keep_top, jobs):
    """The gate's runs without a measure that sees whole rankings (`keep_top`, not deep) are read by pair: a
    top row whose document is judged for another query only comes with the unjudged top rows, not with the
    judged ones, and the engine's Prepared (rows, ranks, grades, the documents' codes and names, the codes
    given to documents nobody judged) is the one reading by document gives."""
    from rankgate.core import engine
    from rankgate.core.formats import read_qrels
    from rankgate.core.formats import trec_fast as fast

    monkeypatch.setattr(fast, "BLOCK", 97)
    if grouped:
        rows = sorted(rows, key=lambda r: r[0])
    run = write(tmp_path / "run.trec", "".join(f"{q} Q0 {d} 0 {s} t\n" for q, d, s in rows))
    qpath = write(tmp_path / "q.trec", "".join(f"{qid} 0 {d} {g}\n" for qid, ds in qrels.items() for d, g in ds.items()))
    got = []
    for by_pair in (False, True):
        fast._LOOKUP.clear()
        q = read_qrels(str(qpath))  # a catalog each: the codes given to unjudged documents are compared too
        r = fast.read_lean_run(str(run), "r", q, keep_top=keep_top, jobs=jobs, by_pair=by_pair)
        p = engine.prepare_lean(q, r, rel_level=1, missing="zero")
        got.append((p, q.catalog.docs.names))
    fast._LOOKUP.clear()
    (a, names_a), (b, names_b) = got
    for field in ("qp", "rank", "grade", "doc", "num_ret"):
        assert getattr(a, field).tolist() == getattr(b, field).tolist(), field
    assert a.qids == b.qids and list(names_a) == list(names_b)
