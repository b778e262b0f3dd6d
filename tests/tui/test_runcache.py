"""The parsed-run cache gives the same runs as the core reader, and notices a changed file."""

from __future__ import annotations

import os

import numpy as np
import pytest

from rankgate.core.errors import InputError

from rankgate.core.formats import read_runs
from rankgate.core.model import Catalog
from rankgate.tui.runcache import read_runs_cached


def _same(a, b):
    assert a.name == b.name and a.format == b.format and a.meta == b.meta
    for x, y in ((a.q, b.q), (a.doc, b.doc)):
        np.testing.assert_array_equal([a.catalog.queries.names[c] for c in x] if x is a.q else
                                      [a.catalog.docs.names[c] for c in x],
                                      [b.catalog.queries.names[c] for c in y] if y is b.q else
                                      [b.catalog.docs.names[c] for c in y])
    np.testing.assert_array_equal(a.score, b.score)
    np.testing.assert_array_equal(a.where, b.where)  # (each row's source line)
    assert a.query_ids == b.query_ids and a.path == b.path


def test_cache_hit_equals_reader(tmp_path):
    run = tmp_path / "run.trec"
    run.write_text("".join(f"q{q} Q0 d{(q * 7 + r) % 50} {r + 1} {10 - r}.5 t\n" for q in range(20) for r in range(8)))
    expected = read_runs(str(run), "auto", Catalog())[0]
    hits = []
    first = read_runs_cached(str(run), Catalog(), min_bytes=0, folder=tmp_path, on_hit=hits.append)[0]
    cat = Catalog()
    cat.docs.code("d-other")  # a catalog that already holds other IDs
    second = read_runs_cached(str(run), cat, min_bytes=0, folder=tmp_path, on_hit=hits.append)[0]
    assert len(hits) == 1
    _same(first, expected)
    _same(second, expected)
    # A changed file is read again.
    run.write_text("q1 Q0 dx 1 1.0 t\n")
    os.utime(run, ns=(1, 1))
    third = read_runs_cached(str(run), Catalog(), min_bytes=0, folder=tmp_path, on_hit=hits.append)[0]
    assert len(hits) == 1 and third.query_ids == ["q1"]


def test_a_file_modified_a_moment_ago_is_not_kept_so_an_edit_in_place_is_never_served_stale(tmp_path, monkeypatch):
    """An edit in place within the file system's clock tick keeps the size, the modification time and the inode
    (the key): a file modified less than RACY_S before its key is taken gets no entry and is read again next
    time; once settled, it is kept, and an edit after that has a new modification time."""
    monkeypatch.setenv("RANKGATE_RACY_S", "2")
    run = tmp_path / "run.trec"
    text = "".join(f"q{q} Q0 d{(q * 7 + r) % 50} {r + 1} {10 - r}.5 t\n" for q in range(20) for r in range(8))
    run.write_text(text)
    hits = []
    first = read_runs_cached(str(run), Catalog(), min_bytes=0, folder=tmp_path, on_hit=hits.append)[0]
    assert not list(tmp_path.glob("*.npz")) and first.catalog.docs.names[first.doc[0]] == "d0"
    st = os.stat(run)
    run.write_text(text.replace("d0 ", "d9 ", 1))  # the same size, the same time and inode: the key is the same
    os.utime(run, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert os.stat(run).st_size == st.st_size and os.stat(run).st_ino == st.st_ino
    again = read_runs_cached(str(run), Catalog(), min_bytes=0, folder=tmp_path, on_hit=hits.append)[0]
    assert not hits and again.catalog.docs.names[again.doc[0]] == "d9"  # the file as it is now
    os.utime(run, ns=(st.st_atime_ns, st.st_mtime_ns - 3_000_000_000))  # settled: kept, then a hit
    read_runs_cached(str(run), Catalog(), min_bytes=0, folder=tmp_path, on_hit=hits.append)
    third = read_runs_cached(str(run), Catalog(), min_bytes=0, folder=tmp_path, on_hit=hits.append)[0]
    assert len(hits) == 1 and len(list(tmp_path.glob("*.npz"))) >= 1
    _same(third, read_runs(str(run), "auto", Catalog())[0])


def test_an_entry_left_for_later_is_written_when_asked(tmp_path):
    """With `later` (the app's first open) a new entry is not written while the run is read, but when the
    app runs what was left for after its first frame; the next read is a hit, the same run."""
    run = tmp_path / "run.trec"
    run.write_text("".join(f"q{q} Q0 d{(q * 3 + r) % 40} {r + 1} {9 - r}.5 t\n" for q in range(30) for r in range(9)))
    expected = read_runs(str(run), "auto", Catalog())[0]
    later, hits = [], []
    first = read_runs_cached(str(run), Catalog(), min_bytes=0, folder=tmp_path, later=later)[0]
    assert len(later) == 1 and not list(tmp_path.glob("*.npz"))
    later.pop()()
    again = read_runs_cached(str(run), Catalog(), min_bytes=0, folder=tmp_path, on_hit=hits.append)[0]
    assert hits
    _same(first, expected)
    _same(again, expected)


def test_ids_with_a_line_break_survive_the_cache(tmp_path):
    """IDs are stored as one text split on line breaks; a JSONL run's IDs may hold one: those are
    stored as JSON instead, and come back the same."""
    import json

    run = tmp_path / "run.jsonl"
    rows = [{"query": "q1", "ranking": [{"doc": "a\nb", "score": 2.0}, {"doc": "c", "score": 1.0}]},
            {"query": "q\n2", "ranking": [{"doc": "a\nb", "score": 3.0}, {"doc": "é", "score": 1.5}]}]
    run.write_text("".join(json.dumps(r) + "\n" for r in rows))
    expected = read_runs(str(run), "auto", Catalog())[0]
    read_runs_cached(str(run), Catalog(), min_bytes=0, folder=tmp_path)
    hits = []
    again = read_runs_cached(str(run), Catalog(), min_bytes=0, folder=tmp_path, on_hit=hits.append)[0]
    assert hits and again.catalog.docs.names[again.doc[0]] in ("a\nb", "c", "é")
    _same(again, expected)


def test_qrels_labels_cache_reads_the_file_once_while_it_is_unchanged(tmp_path):
    """The workspace comparison's file labels (tui/screens/sync.py) come from the cache while the folder's
    qrels file is unchanged; the same dict as the reader's; a changed file is read again."""
    from types import SimpleNamespace

    from rankgate.store.sync import read_file_labels
    from rankgate.tui.runcache import file_grades

    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 3\nq1 0 d2 0\nq\u00e92 0 d1 1\n")
    manifest = SimpleNamespace(qrels=qrels)
    reads = []

    def read(m):
        reads.append(m)
        return read_file_labels(m)

    expected, _ = read_file_labels(manifest)
    cache = tmp_path / "cache"
    cache.mkdir()
    assert file_grades(manifest, read, min_bytes=0, folder=cache) == expected
    assert file_grades(manifest, read, min_bytes=0, folder=cache) == expected
    assert len(reads) == 1 and expected[("q1", "d1")] == 3
    qrels.write_text("q1 0 d1 1\n")
    os.utime(qrels, ns=(1, 1))
    assert file_grades(manifest, read, min_bytes=0, folder=cache) == {("q1", "d1"): 1}
    assert len(reads) == 2
    qrels.write_text("q1 0 d1 x\n")  # no longer reads: refused every time, never answered from the cache
    os.utime(qrels, ns=(2, 2))
    for _ in range(2):
        with pytest.raises(InputError):
            file_grades(manifest, read, min_bytes=0, folder=cache)


def test_trec_order_of_a_grouped_run_sorts_only_its_broken_blocks_to_the_same_order():
    """in_trec_order sorts a run whose queries come in blocks block by block (ties broken by document ID
    descending, byte-wise; equal rows keep their order): the same rows as one sort of every row."""
    import random

    from rankgate.core.model import Run
    from rankgate.tui.runcache import _grouped_order, in_trec_order

    rng = random.Random(3)
    grouped = 0
    for _ in range(200):
        cat = Catalog()
        rows = []
        for qi in range(rng.randint(1, 12)):
            for _ in range(rng.randint(0, 20)):
                doc = rng.choice(["a", "b", "\u00e9", "Z", "d1", "d10", "d2", "\U0001F600", "aa"]) + str(rng.randint(0, 3))
                rows.append((f"q{qi}", doc, rng.choice([1.0, 2.0, 3.0, rng.random()])))
        if rng.random() < 0.7:  # blocks per query, scores mostly descending
            rows.sort(key=lambda x: (int(x[0][1:]), -x[2] if rng.random() < 0.9 else 0))
        else:
            rng.shuffle(rows)
        q = np.array([cat.queries.code(a) for a, _, _ in rows], np.int32)
        d = np.array([cat.docs.code(b) for _, b, _ in rows], np.int32)
        s = np.array([c for _, _, c in rows], np.float64)
        run = Run("r", "", cat, q, d, s, np.arange(len(rows), dtype=np.int64))
        full = np.lexsort((-cat.docs.order()[d], -s, q)) if len(rows) else np.zeros(0, np.int64)
        perm = _grouped_order(run)
        if perm is not None:
            grouped += 1
            np.testing.assert_array_equal(perm, full)
        np.testing.assert_array_equal(in_trec_order(run).where, run.where[full])
    assert grouped > 100


def test_old_entries_are_pruned_the_most_recently_used_kept(tmp_path, monkeypatch):
    import rankgate.tui.runcache as runcache

    monkeypatch.setattr(runcache, "KEEP_RUNS", 2)
    files = []
    for i in range(3):
        run = tmp_path / f"run{i}.trec"
        run.write_text(f"q1 Q0 d{i} 1 1.0 t\n")
        files.append(run)
    cache = tmp_path / "cache"
    cache.mkdir()
    read_runs_cached(str(files[0]), Catalog(), min_bytes=0, folder=cache)
    read_runs_cached(str(files[1]), Catalog(), min_bytes=0, folder=cache)
    for p in cache.glob("*.npz"):
        os.utime(p, ns=(1, 1))  # both entries old ...
    hits = []
    read_runs_cached(str(files[0]), Catalog(), min_bytes=0, folder=cache, on_hit=hits.append)  # ... run0 used now
    read_runs_cached(str(files[2]), Catalog(), min_bytes=0, folder=cache)  # a third entry: the oldest goes
    assert len(hits) == 1 and len([p for p in cache.glob("*.npz") if not p.name.endswith("-map.npz")]) == 2
    read_runs_cached(str(files[0]), Catalog(), min_bytes=0, folder=cache, on_hit=hits.append)
    read_runs_cached(str(files[1]), Catalog(), min_bytes=0, folder=cache, on_hit=hits.append)
    assert len(hits) == 2  # run0 kept (used), run1 read again


def test_a_reopen_takes_the_codes_of_last_time_while_the_catalog_is_the_same(tmp_path):
    """The entry's map (its codes in the review's catalog) is used when the catalog holds the same names as
    last time, and the runs equal the reader's; another catalog ignores the map, with the same runs."""
    import rankgate.tui.runcache as runcache

    run = tmp_path / "run.trec"
    run.write_text("".join(f"q{q} Q0 d{(q * 7 + r) % 50} {r + 1} {10 - r}.5 t\n" for q in range(20) for r in range(8)))
    expected = read_runs(str(run), "auto", Catalog())[0]
    cache = tmp_path / "cache"
    cache.mkdir()

    def catalog(*docs):
        cat = Catalog()
        for d in docs:
            cat.docs.code(d)
        return cat

    read_runs_cached(str(run), catalog("d7", "x"), min_bytes=0, folder=cache)  # writes the entry
    used = []
    real = runcache._mapped

    def spy(*args):
        got = real(*args)
        used.append(got is not None)
        return got

    runcache._mapped = spy
    try:
        for cat in (catalog("d7", "x"), catalog("d7", "x"), catalog("x", "d7", "y"), catalog("x", "d7", "y")):
            _same(read_runs_cached(str(run), cat, min_bytes=0, folder=cache)[0], expected)
            assert cat.docs.names[:2] in (["d7", "x"], ["x", "d7"]) and len(cat.docs.names) == len(set(cat.docs.names))
    finally:
        runcache._mapped = real
    assert used == [False, True, False, True]  # the map is written, used; another catalog: again


def test_a_hit_maps_the_entry_writable_and_a_cut_entry_is_read_again(tmp_path):
    """An entry's arrays are mapped from the file (no copy, no CRC pass): the run is the reader's, its arrays
    can be changed as np.load's can without the entry changing, and an entry cut short is not trusted: the
    file is read again and the entry written anew."""
    run = tmp_path / "run.trec"
    run.write_text("".join(f"q{q} Q0 d{(q * 5 + r) % 60} {r + 1} {9 - r}.25 t\n" for q in range(25) for r in range(7)))
    expected = read_runs(str(run), "auto", Catalog())[0]
    read_runs_cached(str(run), Catalog(), min_bytes=0, folder=tmp_path)
    (entry,) = [p for p in tmp_path.glob("*.npz") if not p.name.endswith("-map.npz")]
    written = entry.read_bytes()
    hits = []
    got = read_runs_cached(str(run), Catalog(), min_bytes=0, folder=tmp_path, on_hit=hits.append)[0]
    assert hits
    _same(got, expected)
    got.score[:] = -1.0  # a private map: the entry on disk is untouched
    assert entry.read_bytes() == written
    _same(read_runs_cached(str(run), Catalog(), min_bytes=0, folder=tmp_path)[0], expected)
    entry.write_bytes(written[: len(written) // 2])
    hits.clear()
    again = read_runs_cached(str(run), Catalog(), min_bytes=0, folder=tmp_path, on_hit=hits.append)[0]
    assert not hits
    _same(again, expected)
    _same(read_runs_cached(str(run), Catalog(), min_bytes=0, folder=tmp_path, on_hit=hits.append)[0], expected)
    assert hits  # written anew, whole


def test_runs_parsed_ahead_are_the_runs_read_in_place(tmp_path, monkeypatch):
    """A first open parses its run files ahead, in a thread, while the labels are read (ReadAhead); taken
    into a catalog that the labels filled meanwhile, each is the run the reader gives, in that catalog's
    codes, and its cache entry is written as without. A file with an entry is not parsed ahead, and a
    file changed after it was parsed ahead is read again as it is now."""
    import threading

    import rankgate.tui.runcache as runcache
    from rankgate.tui.runcache import ReadAhead

    files = []
    for i in range(3):
        f = tmp_path / f"run{i}.trec"
        f.write_text("".join(f"q{q} Q0 d{(q * (5 + i) + r) % 60} {r + 1} {9 - r}.5 r{i}\n"
                             for q in range(25) for r in range(7)))
        files.append(str(f))
    threads = []
    real = runcache._read_columns

    def noted(*args):
        threads.append(threading.current_thread().name)
        return real(*args)

    monkeypatch.setattr(runcache, "_read_columns", noted)
    cache = tmp_path / "cache"
    cache.mkdir()
    ahead = ReadAhead(files, min_bytes=0, folder=cache)
    cat = Catalog()
    cat.docs.code("d59"), cat.docs.code("d-label-only")  # the labels took the first codes meanwhile
    got = [read_runs_cached(f, cat, min_bytes=0, folder=cache, ahead=ahead)[0] for f in files]
    ahead.close()
    assert threads and all(t.startswith("rankgate-read-ahead") for t in threads)
    assert cat.docs.names[:2] == ["d59", "d-label-only"]
    for f, run in zip(files, got):
        _same(run, read_runs(f, "auto", Catalog())[0])
    assert len(list(cache.glob("*.npz"))) >= 3  # their entries, as a read in place writes them

    threads.clear()
    assert not ReadAhead(files, min_bytes=0, folder=cache)._early and not threads  # entries: nothing ahead

    fresh = tmp_path / "fresh"
    fresh.mkdir()
    ahead = ReadAhead(files[:1], min_bytes=0, folder=fresh)
    ahead._early[files[0]].future.result()
    with open(files[0], "a") as f:
        f.write("q99 Q0 dnew 1 1.0 r0\n")
    run = read_runs_cached(files[0], Catalog(), min_bytes=0, folder=fresh, ahead=ahead)[0]
    ahead.close()
    assert "q99" in run.query_ids


def _qrels_as_data(qrels):
    names_q, names_d = qrels.catalog.queries.names, qrels.catalog.docs.names
    rows = [(names_q[q], names_d[d], g) for q, d, g in zip(qrels.q.tolist(), qrels.doc.tolist(), qrels.grade.tolist())]
    details = {(q, d): (qrels.details[(q, d)] if (q, d) in qrels.details else None) for q, d, _ in rows}
    return (list(names_q), list(names_d), rows, [names_q[c] for c in qrels.query_codes], dict(qrels.meta), details,
            qrels.details.versions_by_query())


def test_the_store_labels_of_last_open_equal_a_fresh_read_and_follow_every_edit(tmp_path, monkeypatch):
    """`store_qrels`: the labels of a store as the review's first catalog, from the entry of the last open while
    the store's files are unchanged; equal to `to_qrels` into a fresh catalog (names, codes, grades, details),
    with imported queries read from their columns and edited or adjudicated ones record by record; an edit, a
    fold or a second reviewer changes the files, and the labels are read afresh (never the entry's)."""
    import rankgate.tui.runcache as runcache
    from rankgate.store.workspace import Workspace

    monkeypatch.setenv("RANKGATE_HOME", str(tmp_path / "home"))
    qrels_file = tmp_path / "qrels.txt"
    qrels_file.write_text("".join(f"q{q} 0 d{(q * 5 + r) % 40} {r % 3}\n" for q in range(30) for r in range(6)))
    cache = tmp_path / "cache"
    cache.mkdir()
    db = tmp_path / "work.json"
    with Workspace.open(db, reviewer="ana") as ws:
        ws.import_files([qrels_file], collection_version="v1")
        ws.fold_if_due(1)
    hits = []
    real = runcache._load_known
    monkeypatch.setattr(runcache, "_load_known", lambda where: hits.append(where) or real(where))

    def check(expect_hit: bool):
        with Workspace.open(db, reviewer="ana") as ws:
            n = len(hits)
            got = runcache.store_qrels(ws, Catalog(), folder=cache)
            assert (len(hits) > n) == expect_hit
            assert _qrels_as_data(got) == _qrels_as_data(ws.to_qrels(Catalog()))
            got.catalog.docs.code("d-new")  # the catalog's dictionary, made when first asked, holds every name
            assert [got.catalog.docs.code(n) for n in got.catalog.docs.names] == list(range(len(got.catalog.docs)))
            return _qrels_as_data(got)

    first = check(False)
    assert check(True) == first and check(True) == first
    with Workspace.open(db, reviewer="ana") as ws:  # an edit, in the journal
        ws.set_judgment("q3", "d15", 2, reason="changed")
        ws.set_judgment("q4", "d-added", 1, reason="new doc")
    edited = check(False)
    assert edited != first and ("q3", "d15", 2) in edited[2] and ("q4", "d-added", 1) in edited[2]
    assert check(True) == edited
    with Workspace.open(db, reviewer="bo") as ws:  # another reviewer disagrees, then an adjudication
        ws.set_judgment("q5", "d25", 2, reason="bo's")
        ws.adjudicate("q5", "d25", 1, reason="final")
        ws.fold_if_due(1)
    adjudicated = check(False)
    assert ("q5", "d25", 1) in adjudicated[2] and check(True) == adjudicated
    with Workspace.open(db, reviewer="ana", blind=True) as ws:  # blind: never from an entry
        n = len(hits)
        runcache.store_qrels(ws, Catalog(), folder=cache)
        assert len(hits) == n


def test_a_map_hit_into_a_catalog_without_its_dictionary_yet_gives_every_name_its_code(tmp_path):
    """A re-open's catalog takes the labels' documents without a name -> code dictionary (store_qrels); the
    run entry's map appends its new names as they are, and the dictionary made later knows each at its code."""
    run = tmp_path / "run.trec"
    run.write_text("".join(f"q{q} Q0 d{(q * 7 + r) % 50} {r + 1} {10 - r}.5 t\n" for q in range(20) for r in range(8)))
    expected = read_runs(str(run), "auto", Catalog())[0]
    cache = tmp_path / "cache"
    cache.mkdir()

    def catalog():
        cat = Catalog()
        cat.docs.extend(["d7", "x", "d3"], distinct=True)  # (no dictionary made)
        return cat

    for _ in range(3):  # the entry written, its map written, the map used
        cat = catalog()
        got = read_runs_cached(str(run), cat, min_bytes=0, folder=cache)[0]
        _same(got, expected)
        names = list(cat.docs.names)
        assert names[:3] == ["d7", "x", "d3"] and len(set(names)) == len(names)
        assert [cat.docs.code(n) for n in names] == list(range(len(names)))
        assert cat.docs.code("new") == len(names)


def test_the_corpus_reader_wants_the_catalogs_documents_those_added_later_too():
    from rankgate.tui.loader import CatalogDocs

    cat = Catalog()
    cat.docs.extend(["a", "b"], distinct=True)
    wanted = CatalogDocs(cat.docs)
    cat.docs.code("c")
    assert "a" in wanted and "c" in wanted and "z" not in wanted
    cat.docs.code("z")  # after the first look
    assert "z" in wanted and sorted(wanted) == ["a", "b", "c", "z"] and len(wanted) == 4


@pytest.mark.parametrize("odd", ["", "surrogate"])
def test_a_fast_readers_documents_looked_up_by_arrow_get_the_dictionarys_codes(tmp_path, monkeypatch, odd):
    """Runs read by the fast reader look their documents up among an Arrow copy of the catalog's names
    (runcache._codes with `arrow`): every code, every name the catalog gains and its order are those the
    dictionary's probes give, with names not all ASCII, a catalog the labels filled first (one of its
    names not UTF-8: the dictionary's way), and names interned between two runs."""
    import rankgate.tui.runcache as runcache

    files = []
    for i in range(3):
        f = tmp_path / f"run{i}.trec"
        f.write_text("".join(f"q{q} Q0 d{(q * (5 + i) + r) % 70}{'é' if r % 3 == 0 else ''} {r + 1} {9 - r}.5 r{i}\n"
                             for q in range(30) for r in range(9)), encoding="utf-8")
        files.append(str(f))

    def read(limit):
        monkeypatch.setattr(runcache, "ARROW_LOOKUP", limit)
        runcache._arrow_copies.clear()
        cat = Catalog()
        for name in ("d5", "d-label-only", "d7é") + (("d\udcff",) if odd else ()):  # the labels' codes first
            cat.docs.code(name)
        runs = []
        for i, f in enumerate(files):
            runs += read_runs_cached(f, cat, min_bytes=0, folder=tmp_path / f"cache-{limit}", later=[])
            cat.docs.code(f"d-added-{i}")  # (an edit's new document, between two runs)
        return cat, runs

    by_dict, by_arrow = read(1 << 40), read(0)
    assert by_arrow[0].docs.names == by_dict[0].docs.names
    assert by_arrow[0].queries.names == by_dict[0].queries.names
    for a, b in zip(by_arrow[1], by_dict[1]):
        np.testing.assert_array_equal(a.doc, b.doc)
        np.testing.assert_array_equal(a.q, b.q)
        _same(a, b)
    if not odd:  # the Arrow copy followed the catalog: it holds every name, in code order
        (_, n, copy), = runcache._arrow_copies.values()
        assert n == len(by_arrow[0].docs) - 1 and copy.to_pylist() == by_arrow[0].docs.names[:n]
