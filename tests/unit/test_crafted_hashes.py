"""Document IDs crafted to share one 64-bit hash (hash_strings is unkeyed: anyone can make them) cost
the lookups no more than other IDs, and are told apart exactly."""

import numpy as np
import pytest

from tests.conftest import write

pytest.importorskip("pyarrow")

_PRIME = 0x100000001B3


def crafted_ids(n: int, seed: int = 1) -> list[str]:
    """n distinct 24-character printable IDs whose hash_strings are all one value: 16 random characters,
    then the 8 that bring the hash to a chosen value (the multiply is undone with its inverse)."""
    rng = np.random.default_rng(seed)
    target = np.uint64(0x0123456789ABCDEF * pow(_PRIME, -1, 1 << 64) % (1 << 64))
    found: set[bytes] = set()
    with np.errstate(over="ignore"):
        while len(found) < n:
            head = rng.integers(0x21, 0x7F, size=(1 << 18, 16), dtype=np.uint8)
            words = head.view("<u8")
            h = (np.uint64(0xCBF29CE484222325) ^ np.uint64(24)) * np.uint64(_PRIME)
            for j in range(2):
                h = (h ^ words[:, j]) * np.uint64(_PRIME)
            tail = (target ^ h).view(np.uint8).reshape(-1, 8)
            ok = ((tail >= 0x21) & (tail <= 0x7E) & (tail != ord("#"))).all(axis=1)
            found.update(bytes(head[i]) + bytes(tail[i]) for i in np.flatnonzero(ok))
    return sorted(x.decode() for x in found)[:n]


def test_the_crafted_ids_share_one_hash():
    import pyarrow as pa

    from rankgate.core.formats.trec_fast import hash_strings

    ids = crafted_ids(40)
    assert len(set(ids)) == 40 and len(set(hash_strings(pa.array(ids)).tolist())) == 1


@pytest.mark.parametrize("scattered", [False, True])
def test_gate_compare_score_and_validate_on_crafted_ids_agree_with_the_general_reader(tmp_path, capsys, monkeypatch,
                                                                                    scattered):
    """Every judged document and most retrieved ones share one hash (a run of 160 entries alike, where
    `gate`'s by-document lookup tried each in turn for every row: minutes on 20k such IDs): every
    command says what the general reader (no hashes) says."""
    import json
    import random

    from rankgate.cli import main
    from rankgate.core.formats import trec_fast as fast

    monkeypatch.setattr(fast, "MIN_BYTES", 0)
    ids = crafted_ids(160)
    rng = random.Random(4)
    qrels, runs = [], {"a": [], "b": []}
    for i in range(20):
        judged = ids[i * 8:(i + 1) * 8]
        qrels += [f"q{i} 0 {d} {rng.choice([0, 1, 2])}\n" for d in judged]
        for lines in runs.values():
            docs = list(dict.fromkeys(judged[:rng.randint(2, 8)] + rng.sample(ids, 20) + [f"plain{k}" for k in range(5)]))
            rng.shuffle(docs)
            lines += [f"q{i} Q0 {d} {r + 1} {50 - r} t\n" for r, d in enumerate(docs)]
    for lines in runs.values():
        if scattered:
            rng.shuffle(lines)
    q = write(tmp_path / "q.trec", "".join(qrels))
    paths = [f"{n}={write(tmp_path / f'{n}.trec', ''.join(lines))}" for n, lines in runs.items()]
    common = ["--qrels", str(q), "--runs", paths[0], "--runs", paths[1], "--short-rankings", "allow"]
    said = {}
    for way in ("1", "0"):
        monkeypatch.setenv("RANKGATE_FAST", way)
        for argv in (["gate", *common, "--baseline", "a", "--candidate", "b", "--as-of", "2026-06-01", "-m", "AP,nDCG@5"],
                     ["compare", *common, "--baseline", "a", "-m", "AP,nDCG@5,RR"],
                     ["score", *common, "-m", "all_trec", "-q", "--format", "trec"],
                     ["validate", *common, "--format", "json"]):
            code = main(argv)
            said[way, argv[0]] = code, capsys.readouterr().out
    for command in ("gate", "compare", "score", "validate"):
        assert said["1", command] == said["0", command], command
    scores = said["1", "score"][1]
    assert said["1", "gate"][0] in (0, 3) and json.loads(said["1", "compare"][1])
    maps = [line.split("\t") for line in scores.splitlines() if line.startswith("map ")]
    assert len(maps) == 2 * 21 and sum(float(x[2]) > 0 for x in maps) > 20  # judged documents found, by name


def test_a_row_among_many_entries_of_one_hash_is_matched_by_name_not_tried_against_each():
    """_each_match: rows whose hash SHARED or fewer entries share try each; past that, one match by name
    (by_name), so the pairs confirmed stay near the rows', not rows x entries; the matches are the same."""
    from rankgate.core.formats.trec_fast import SHARED, _each_match

    rng = np.random.default_rng(8)
    names = np.array([f"n{i}" for i in range(600)])
    keys = np.r_[np.full(300, 77, np.uint64), np.arange(1000, 1300, dtype=np.uint64) // np.uint64(3)]  # 300 alike
    order = np.argsort(keys, kind="stable")
    keys, entry = keys[order], order
    row_entry = rng.integers(0, 600, 2000)
    rows = np.arange(2000)
    hr = np.r_[keys, np.uint64(5)][np.argsort(order)][row_entry]  # each row: its entry's hash
    row_names = names[row_entry].astype(object)
    row_names[::7] = "nobody"  # the hash, not the name
    got, tried = [], []

    def confirm(r, j):
        tried.append(len(r))
        same = row_names[r] == names[j]
        got.extend(zip(r[same].tolist(), j[same].tolist()))

    def by_name(r, j):
        at = {n: e for e, n in zip(j.tolist(), names[j].tolist())}
        e = np.array([at.get(n, -1) for n in row_names[r]])
        return r[e >= 0], e[e >= 0]

    _each_match(keys, entry, rows, hr, confirm, by_name)
    want = [(r, int(e)) for r, e in zip(rows.tolist(), row_entry.tolist()) if row_names[r] != "nobody"]
    assert sorted(got) == sorted(want)
    assert sum(tried) <= len(rows) * SHARED  # trying each of 300 alike: about 1,000 rows x 300


def test_a_crowded_stretch_of_the_hash_table_is_searched_not_probed_slot_by_slot(monkeypatch):
    """3,000 keys of one slot make one stretch of full slots: a search that passes PROBES slots is ended
    by a binary search, with the same positions, and a key that is not there is still not found."""
    from rankgate.core.formats import trec_fast as fast

    h = (np.arange(1, 3001, dtype=np.uint64) * np.uint64(7)) | np.uint64(0xFFF << 52)
    table = fast._HashTable(h)
    assert not table.repeated and table.by_key is None
    monkeypatch.setattr(fast, "PROBES", 4)
    assert table.find(h[:3]).tolist() == [0, 1, 2] and table.by_key is None  # settled within 4 slots
    shuffled = np.random.default_rng(3).permutation(len(h))
    assert table.find(h[shuffled]).tolist() == shuffled.tolist() and table.by_key is not None
    assert (table.find(h + np.uint64(1)) == -1).all()


def test_the_duplicate_check_of_crafted_ids_makes_no_python_object_a_row():
    """Rows of one query whose documents share a hash all share their (query, document) key, so every row
    is a candidate duplicate (_duplicates): they are sorted by Arrow, not as a Python tuple each (two 16 MB
    grouped runs of crafted IDs: gate 2.9 -> 2.3 s, ordinary IDs 1.9 s), and the duplicates are the true ones."""
    import tracemalloc

    import pyarrow as pa

    from rankgate.core.formats import trec_fast as fast

    ids = crafted_ids(500)
    rng = np.random.default_rng(5)
    n = 100_000
    gid = np.repeat(np.arange(n // 100), 100)
    pick = rng.integers(0, len(ids), n)  # 100 of 500 a query: some twice
    docs = pa.array([ids[i] for i in pick.tolist()])
    key = fast.hash_strings(docs) ^ (gid.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15))
    rows = rng.permutation(n)  # each row's line - 1: not in row order (a scattered file, sorted by query)
    seen, want = set(), []
    for i in np.argsort(rows).tolist():
        (want.append(i) if (gid[i], pick[i]) in seen else seen.add((gid[i], pick[i])))
    tracemalloc.start()
    got = fast._duplicates(gid, key, fast._Docs(docs), rows)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert len(want) > 1000 and got.tolist() == sorted(want)
    assert peak < 12 << 20, peak  # a tuple, a string and three ints a row: 30 MB


def test_a_crowd_of_judged_documents_of_one_hash_is_named_once_not_for_every_block():
    """The lookup by document (the gate's review queue, trec_eval) matches a row among a crowd of judged
    documents of one hash by name: the crowd's names are taken once for all blocks, not once a block (a
    block of few rows cost the whole crowd: 300k crafted judged IDs, two 12 MB runs read 1.44 -> 0.96 s);
    the rows found are the same."""
    import pyarrow as pa

    from rankgate.core.formats.trec_fast import _JudgedLookup, hash_strings

    ids = crafted_ids(1500)
    judged = ids[:1200]

    class Counted:
        def __init__(self, names):
            self.names, self.taken = names, 0

        def take(self, at):
            self.taken += len(at)
            return self.names.take(at)

    lookup = _JudgedLookup(pa.array(judged), np.arange(len(judged)))
    lookup.names = names = Counted(lookup.names)
    rng = np.random.default_rng(2)
    for _ in range(20):
        rows = [ids[i] for i in rng.integers(0, len(ids), 40).tolist()] + ["plain"]
        docs = pa.array(rows)
        want = [judged.index(d) if d in judged else -1 for d in rows]
        assert lookup.codes(docs, hash_strings(docs)).tolist() == want
    assert names.taken <= len(judged) + 20 * 41 * 2  # once a block: 24,000
