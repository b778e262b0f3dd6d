"""A prototype of a lean score path, to show what a whole process can take (not the engine).

    /work/bench-venv/bin/python bench/experiments/fast_score.py QRELS RUN [--reader pyarrow-path|...] --compact --times

The same summary lines as `rankgate score --format trec -m AP,ndcg_cut_10,RR@10,
R@100,P@10 --missing-queries zero`; per-query values equal pytrec_eval's (--dump,
checked bit for bit on msmarco's sorted and shuffled runs). What it does, and what
src/rankgate/core/formats/trec_fast.py took from it:

1. reads the run with pyarrow.csv after a memchr prescan (pyarrow-path; the other
   readers are the variants measured on the way: pyarrow on the bytes, pyarrow per
   block, and the numpy byte tokeniser of parse_trec.py);
2. interns only the query IDs; a document is looked up only among the judged ones
   (pyarrow index_in), never interned;
3. checks for duplicate (query, document) rows with a vectorised FNV-1a hash, a sort
   and an exact check of the candidates, as rankgate's validation requires;
4. sorts only when the rows are not in trec_eval order, and breaks score ties by
   document ID bytes only among the tied rows (pyarrow sort_indices);
5. with --compact, hands rankgate.core.engine.per_query only the judged rows (plus
   num_ret), so the measures are the engine's own and their temporaries small.

Stage times and peak RSS so far go to stderr with --times.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

T = {}
_t = [time.perf_counter()]


PEAK = {}


def lap(name):
    import resource

    now = time.perf_counter()
    T[name] = T.get(name, 0.0) + now - _t[0]
    PEAK[name] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    _t[0] = now


def read_qrels(path):
    q, d, g = [], [], []
    with open(path, encoding="utf-8") as f:
        for line in f:
            p = line.split()
            if not p or p[0].startswith("#"):
                continue
            q.append(p[0])
            d.append(p[2])
            g.append(int(p[3]))
    return q, d, np.array(g, np.int64)


def canonical(data: bytes) -> bool:
    """Single spaces between fields, \\n line ends, no comment lines: what pyarrow can take."""
    return not (b"\t" in data or b"  " in data or b"\r" in data or b"\v" in data or b"\f" in data
                or data.startswith((b"#", b" ")) or b"\n#" in data or b"\n " in data or b" \n" in data)


def read_run_pyarrow(path, judged_docs):
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pcsv

    lap("import pyarrow")
    with open(path, "rb") as f:
        data = f.read()
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    if not canonical(data):
        raise SystemExit("not canonical: the slow path would take it")
    lap("read + check bytes")
    tbl = pcsv.read_csv(
        pa.py_buffer(data),
        read_options=pcsv.ReadOptions(column_names=["q", "i", "d", "r", "s", "t"]),
        parse_options=pcsv.ParseOptions(delimiter=" ", quote_char=False, double_quote=False),
        convert_options=pcsv.ConvertOptions(column_types={"q": pa.string(), "d": pa.string(), "s": pa.float64()},
                                            include_columns=["q", "d", "s"], strings_can_be_null=False))
    del data
    lap("pyarrow read_csv")
    qenc = tbl["q"].combine_chunks().dictionary_encode()
    qcode = qenc.indices.to_numpy()
    qnames = qenc.dictionary.to_pylist()
    lap("queries: dictionary_encode")
    d = tbl["d"].combine_chunks()
    jd = pc.index_in(d, value_set=pa.array(judged_docs, pa.string())).fill_null(-1).to_numpy()
    lap("docs: index_in judged")
    score = tbl["s"].combine_chunks().to_numpy()
    lap("scores to numpy")

    def doc_take(rows):
        return d.take(pa.array(rows))

    doc_take.column = d
    return qcode, qnames, score, jd, doc_take


def canonical_block(block: bytes) -> bool:
    """Single spaces between fields, one \\n per line end, no blank, indented or comment
    lines: what pyarrow's one-byte delimiter reads exactly as str.split() would."""
    if not block or block.find(b"\t") >= 0 or block.find(b"\r") >= 0 or block.find(b"\v") >= 0 \
            or block.find(b"\f") >= 0 or block[0] in b" \n#":
        return False
    buf = np.frombuffer(block, np.uint8)
    nl = np.flatnonzero(buf == 10)
    after = nl[:-1] + 1 if len(nl) and nl[-1] == len(buf) - 1 else nl + 1
    if np.isin(buf[after], (32, 10, 35)).any() or (buf[nl - 1] == 32).any():
        return False
    sp = buf == 32
    return not (sp[1:] & sp[:-1]).any()


def read_run_pyarrow_blocks(path, judged_docs, block_size=64 << 20):
    """pyarrow per block of the file (bounded memory, a per-block slow path possible)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pcsv

    lap("import pyarrow")
    value_set = pa.array(judged_docs, pa.string())
    opts = dict(read_options=pcsv.ReadOptions(column_names=["q", "i", "d", "r", "s", "t"], use_threads=True),
                parse_options=pcsv.ParseOptions(delimiter=" ", quote_char=False, double_quote=False),
                convert_options=pcsv.ConvertOptions(column_types={"q": pa.string(), "d": pa.string(),
                                                                  "s": pa.float64()},
                                                    include_columns=["q", "d", "s"], strings_can_be_null=False))
    qs, ds, ss, js = [], [], [], []
    rest = b""
    with open(path, "rb") as f:
        while True:
            data = f.read(block_size)
            if not data:
                break
            data = rest + data
            cut = data.rfind(b"\n") + 1
            block, rest = data[:cut], data[cut:]
            t = time.perf_counter()
            ok = canonical_block(block)
            T["  canonical check"] = T.get("  canonical check", 0.0) + time.perf_counter() - t
            if not ok:
                raise SystemExit("not canonical: the slow path would take this block")
            tbl = pcsv.read_csv(pa.py_buffer(block), **opts)
            d = tbl["d"]
            qs.extend(tbl["q"].chunks)
            ds.extend(d.chunks)
            ss.append(tbl["s"].to_numpy())
            js.append(pc.index_in(d, value_set=value_set).to_numpy(zero_copy_only=False))
    if rest:
        raise SystemExit("no final newline: left to the slow path in this prototype")
    lap("read + check + pyarrow read_csv + index_in, per block")
    q = pa.chunked_array(qs, pa.string()).combine_chunks()
    n = len(q)
    change = np.r_[True, ~pc.equal(q.slice(1), q.slice(0, n - 1)).to_numpy(zero_copy_only=False)] if n else \
        np.zeros(0, bool)
    heads = np.flatnonzero(change)
    enc = q.take(pa.array(heads)).dictionary_encode()
    qnames = enc.dictionary.to_pylist()
    qcode = np.repeat(enc.indices.to_numpy().astype(np.int32), np.diff(np.r_[heads, n]))
    lap("queries: run heads + dictionary_encode")
    score = np.concatenate(ss)
    jd = np.concatenate(js)
    jd = np.where(np.isnan(jd), -1, jd).astype(np.int64) if jd.dtype.kind == "f" else jd.astype(np.int64)
    lap("concatenate")
    d = pa.chunked_array(ds, pa.string())

    def doc_take(rows):
        return d.take(pa.array(rows))

    doc_take.column = d
    return qcode, qnames, score, jd, doc_take


def prescan(path, block_size=16 << 20) -> bool:
    """No byte that str.split() would split on but a one-space delimiter would not
    (tab, CR, VT, FF), and no NUL: one pass with memchr, into one reused buffer."""
    buf = bytearray(block_size)
    with open(path, "rb") as f:
        while True:
            n = f.readinto(buf)
            if not n:
                return True
            view = buf if n == block_size else buf[:n]
            if any(view.find(c) >= 0 for c in (b"\t", b"\r", b"\v", b"\f", b"\x00")):
                return False


def read_run_pyarrow_path(path, judged_docs):
    """pyarrow reads the file itself (no Python copy of it); every column is read so that
    a missing or empty field shows; anything unusual means the exact slow path."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pcsv

    lap("import pyarrow")
    if not prescan(path):
        raise SystemExit("tabs, CRs or NULs: the slow path would take it")
    lap("prescan (memchr)")
    dict_t = pa.dictionary(pa.int32(), pa.string())
    try:
        tbl = pcsv.read_csv(
            path,
            read_options=pcsv.ReadOptions(column_names=["q", "i", "d", "r", "s", "t"]),
            parse_options=pcsv.ParseOptions(delimiter=" ", quote_char=False, double_quote=False),
            convert_options=pcsv.ConvertOptions(
                column_types={"q": dict_t, "i": dict_t, "d": pa.string(), "r": dict_t, "s": pa.float64(),
                              "t": dict_t}, strings_can_be_null=False))
    except pa.ArrowInvalid as e:  # a row with other than 6 fields, a score that is no number, bad UTF-8
        raise SystemExit(f"pyarrow refused ({str(e)[:80]}): the slow path names the line")
    lap("pyarrow read_csv(path)")
    # an empty field (two spaces, a leading or trailing space) or a comment line: slow path
    small = [tbl[c].unify_dictionaries() if hasattr(tbl[c], "unify_dictionaries") else tbl[c] for c in "qirt"]
    vals = [v for col in small for ch in col.chunks for v in [ch.dictionary]]
    if any(pc.min(pc.binary_length(v)).as_py() == 0 for v in vals if len(v)) \
            or pc.min(pc.binary_length(tbl["d"])).as_py() == 0 \
            or any(pc.any(pc.starts_with(ch.dictionary, "#")).as_py() for ch in tbl["q"].chunks):
        raise SystemExit("empty field or comment line: the slow path would take it")
    lap("checks: no empty field, no comment")
    q = tbl["q"].unify_dictionaries()
    d, s_col = tbl["d"], tbl["s"]
    del tbl, small, vals  # the Q0, rank and tag columns are not needed any more
    qnames = q.chunk(0).dictionary.to_pylist() if q.num_chunks else []
    qcode = np.concatenate([ch.indices.to_numpy() for ch in q.chunks]) if q.num_chunks else np.zeros(0, np.int32)
    lap("queries: unify dictionaries")
    jd = pc.index_in(d, value_set=pa.array(judged_docs, pa.string())).fill_null(-1).to_numpy().astype(np.int64)
    lap("docs: index_in judged")
    score = s_col.to_numpy()
    lap("scores to numpy")

    def doc_take(rows):
        return d.take(pa.array(rows))

    doc_take.column = d
    return qcode, qnames, score, jd, doc_take


def read_run_numpy(path, judged_docs):
    sys.path.insert(0, __file__.rsplit("/", 1)[0])
    from parse_trec import BLOCK, numpy_block, s_first_seen_codes, s_judged

    qp, dp, sp = [], [], []
    rest = b""
    with open(path, "rb") as f:
        while True:
            data = f.read(BLOCK)
            if not data:
                break
            data = rest + data
            cut = data.rfind(b"\n") + 1
            block, rest = data[:cut], data[cut:]
            cols = numpy_block(block)
            if cols is None:
                raise SystemExit("irregular block: the slow path would take it")
            qp.append(cols[0])
            dp.append(cols[1])
            sp.append(cols[2])
    wq, wd = max(a.dtype.itemsize for a in qp), max(a.dtype.itemsize for a in dp)
    q = np.concatenate([a.astype(f"S{wq}") for a in qp])
    d = np.concatenate([a.astype(f"S{wd}") for a in dp])
    score = np.concatenate(sp)
    lap("numpy tokenise")
    qcode, qnames = s_first_seen_codes(q)
    lap("queries: run heads + unique")
    jd = s_judged(d, judged_docs)
    lap("docs: searchsorted judged")
    return qcode, qnames, score, jd, lambda rows: d[rows]


def fnv1a64(d) -> np.ndarray:
    """The 64-bit hash of every document ID that core/formats/trec_fast.py uses (hash_strings; FNV-1a in
    this prototype's day)."""
    from rankgate.core.formats.trec_fast import hash_strings as core_fnv1a64

    return core_fnv1a64(d)


def duplicate_rows(qcode, d) -> np.ndarray:
    """Rows whose (query, document) came earlier: hash, sort, confirm candidates exactly."""
    key = fnv1a64(d)
    key ^= qcode.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    srt = np.sort(key)
    if not (srt[1:] == srt[:-1]).any():
        return np.zeros(0, np.int64)
    del srt
    order = np.argsort(key)
    k = key[order]
    cand = np.flatnonzero(k[1:] == k[:-1])
    import pyarrow as pa

    a, b = order[cand], order[cand + 1]
    docs_a = d.take(pa.array(a)).to_pylist()
    docs_b = d.take(pa.array(b)).to_pylist()
    same = (qcode[a] == qcode[b]) & np.array([x == y for x, y in zip(docs_a, docs_b)], bool)
    return np.maximum(a, b)[same]


def trec_order(qp, score, doc_take):
    """A permutation putting rows in trec_eval order (None when they already are).

    doc_take(rows) gives those rows' document IDs (a pyarrow array or a numpy bytes
    array): only rows whose score ties a neighbour's in the same query are looked at."""
    n = len(qp)
    same = qp[1:] == qp[:-1]
    present = int(np.count_nonzero(np.bincount(qp))) if n else 0
    grouped = int(np.count_nonzero(~same)) + 1 == present if n else True
    perm = None
    if not grouped or bool((same & (score[1:] > score[:-1])).any()):
        perm = np.lexsort((-score, qp))  # query, score descending; ties settled below
        qp, score = qp[perm], score[perm]
        same = qp[1:] == qp[:-1]
    tie = same & (score[1:] == score[:-1])
    del same
    if tie.any():
        # rows in tie groups: order each group by document ID bytes, descending
        in_grp = np.r_[tie, False] | np.r_[False, tie]
        rows = np.flatnonzero(in_grp)
        grp = np.cumsum(np.r_[True, ~tie])[rows]
        src = rows if perm is None else perm[rows]
        docs = doc_take(src)
        if isinstance(docs, np.ndarray):  # fixed-width bytes: sort ascending, then reverse each group
            o = np.lexsort((docs, -grp))[::-1]
        else:
            import pyarrow as pa
            import pyarrow.compute as pc

            o = pc.sort_indices(pa.table({"g": grp, "d": docs}),
                                sort_keys=[("g", "ascending"), ("d", "descending")]).to_numpy()
        if perm is None:
            perm = np.arange(n)
        perm[rows] = src[o]
    return perm


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("qrels")
    ap.add_argument("run")
    ap.add_argument("--reader", choices=("pyarrow-path", "pyarrow", "pyarrow-blocks", "numpy"),
                    default="pyarrow-path")
    ap.add_argument("--times", action="store_true")
    ap.add_argument("--no-dup-check", dest="dup_check", action="store_false",
                    help="skip the duplicate (query, document) check that rankgate's validation makes")
    ap.add_argument("--compact", action="store_true", help="measures over judged rows only")
    ap.add_argument("--dump", help="write per-query values (JSON) here")
    args = ap.parse_args(argv)
    from rankgate.core.engine import Prepared, per_query
    from rankgate.core.measures import parse_measures

    lap("import rankgate engine")
    qq, qd, qg = read_qrels(args.qrels)
    judged_docs = sorted(set(qd))
    lap("read qrels")
    reader = {"pyarrow-path": read_run_pyarrow_path, "pyarrow": read_run_pyarrow, "pyarrow-blocks": read_run_pyarrow_blocks,
              "numpy": read_run_numpy}[args.reader]
    qcode, qnames, score, jd, doc_take = reader(args.run, judged_docs)
    if not np.isfinite(score).all():
        raise SystemExit("non-finite score: the slow path names the line")
    if args.dup_check and hasattr(doc_take, "column"):
        dup = duplicate_rows(qcode, doc_take.column)
        if len(dup):
            raise SystemExit(f"duplicate document for a query at line {int(dup[0]) + 1}")
        lap("duplicate (query, doc) check: hash + sort")

    # Evaluated queries: every qrels query (-c), sorted by ID bytes.
    qids = sorted(set(qq), key=str.encode)
    qpos = {q: i for i, q in enumerate(qids)}
    run_pos = np.array([qpos.get(n, -1) for n in qnames], np.int64)
    qp = run_pos[qcode]
    keep = qp >= 0
    if not keep.all():
        idx = np.flatnonzero(keep)
        qp, score, jd = qp[idx], score[idx], jd[idx]
        base = doc_take
        doc_take = lambda rows: base(idx[rows])  # noqa: E731
    lap("evaluated queries")
    perm = trec_order(qp, score, doc_take)
    if perm is not None:
        qp, jd = qp[perm], jd[perm]
    lap("trec order (sort only if needed, ties by doc)")
    n, nq = len(qp), len(qids)
    starts = np.flatnonzero(np.r_[True, qp[1:] != qp[:-1]]) if n else np.zeros(0, np.int64)
    rank = np.arange(n) - np.repeat(starts, np.diff(np.r_[starts, n]))
    num_ret = np.bincount(qp, minlength=nq).astype(np.float64)
    # join: (query position, judged doc code) -> grade
    dcode = {d: i for i, d in enumerate(judged_docs)}
    nd = max(len(judged_docs), 1)
    qrels_qp = np.array([qpos[q] for q in qq], np.int64)
    jkeys = qrels_qp * nd + np.array([dcode[d] for d in qd], np.int64)
    order = np.argsort(jkeys)
    jkeys, jgrades = jkeys[order], qg[order]
    grade = np.full(n, np.iinfo(np.int64).min, np.int64)
    hit = np.flatnonzero(jd >= 0)
    rk = qp[hit] * nd + jd[hit]
    at = np.minimum(np.searchsorted(jkeys, rk), len(jkeys) - 1)
    found = jkeys[at] == rk
    grade[hit[found]] = jgrades[at[found]]
    lap("rank + join grades")
    if args.compact:
        # every measure here reads judged rows only (plus num_ret): drop the rest
        judged_rows = grade != np.iinfo(np.int64).min
        qp, rank, grade = qp[judged_rows], rank[judged_rows], grade[judged_rows]
        lap("keep judged rows only")
    p = Prepared(qids, nq, qp, rank, grade, None, num_ret, qrels_qp, qg, 1)
    measures = parse_measures("AP,ndcg_cut_10,RR@10,R@100,P@10")
    values = {m: per_query(p, m) for m in measures}
    lap("measures (engine.per_query)")
    print(f"{'num_q':<22}\tall\t{nq}")
    for m in measures:
        print(f"{m.trec_name:<22}\tall\t{values[m].mean():.4f}")
    if args.dump:
        import json

        with open(args.dump, "w") as f:
            json.dump({m.name: dict(zip(qids, values[m].tolist())) for m in measures}, f)
    if args.times:
        for k, v in T.items():
            print(f"  {k:45s} {v:6.2f} s   peak so far {PEAK.get(k, 0):5.0f} MB", file=sys.stderr)
        print(f"  {'total (after interpreter start)':45s} {sum(T.values()):6.2f}", file=sys.stderr)


if __name__ == "__main__":
    main()
