"""Ways to read a TREC run into columns, timed on one file, each in a fresh process.

    /work/bench-venv/bin/python bench/experiments/parse_trec.py bench/data/msmarco/run.txt
    ... parse_trec.py RUN --options numpy,pyarrow --rounds 3

Every option goes from the file on disk to the same result and reports its stages:

- tokenise: the file's bytes to a query column, a document column and float64 scores;
- queries:  query codes (int32), the IDs as strings, first-seen order;
- docs:     document codes (int32) whose order is the byte (strcmp) order of the IDs,
            which is what the engine needs for trec_eval's tie-break (the current model
            interns every document, then sorts the names);
- judged:   the lean alternative to `docs`: which rows hold a judged document (a code
            into the qrels' documents, or -1), the only join the measures need.

Reported per option: median wall seconds of each stage and in total (tokenise +
queries + docs), total with `judged` in place of `docs` ("lean"), and the process's
peak RSS (wait4). A checksum (rows, queries, documents, sum of scores, judged
rows) shows the options agree. Options whose library is missing are skipped.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

OPTIONS = ["pysplit", "rankgate", "blocksplit", "numpy", "numpy_canonical", "pandas", "pyarrow_buffer", "pyarrow",
           "polars"]
BLOCK = 16 << 20


# ---- shared pieces -----------------------------------------------------------------------------

def read_bytes(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def qrels_docs(path: str) -> list[str]:
    """The judged document IDs of the qrels beside the run (sorted, unique)."""
    out = set()
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) == 4 and not parts[0].startswith("#"):
                out.add(parts[2])
    return sorted(out)


def intern_list(names: list) -> tuple[np.ndarray, list]:
    """Python dict interning, codes in first-seen order."""
    codes: dict = {}
    for n in dict.fromkeys(names):
        codes[n] = len(codes)
    return np.fromiter(map(codes.__getitem__, names), np.int32, count=len(names)), list(codes)


def byte_order_codes(codes: np.ndarray, names: list) -> np.ndarray:
    """Re-code so that code order is byte order of the names (what Interner.order gives)."""
    keys = np.array([n.encode() if isinstance(n, str) else n for n in names], dtype=object)
    perm = np.argsort(keys, kind="stable")
    rank = np.empty(len(perm), np.int32)
    rank[perm] = np.arange(len(perm), dtype=np.int32)
    return rank[codes]


def s_first_seen_codes(col: np.ndarray) -> tuple[np.ndarray, list]:
    """Codes for a fixed-width bytes column whose equal values mostly come in runs (queries)."""
    n = len(col)
    if not n:
        return np.zeros(0, np.int32), []
    head = np.flatnonzero(np.r_[True, col[1:] != col[:-1]])
    uniq, first, inv = np.unique(col[head], return_index=True, return_inverse=True)
    # first-seen order of the distinct values
    order = np.argsort(first, kind="stable")
    rank = np.empty(len(uniq), np.int32)
    rank[order] = np.arange(len(uniq), dtype=np.int32)
    lengths = np.diff(np.r_[head, n])
    return np.repeat(rank[inv], lengths), [u.decode() for u in uniq[order]]


def s_byte_order_codes(col: np.ndarray) -> np.ndarray:
    """Codes in byte order for a fixed-width bytes column: ids of at most 8 bytes sort as
    big-endian uint64 (NUL padding = strcmp order); longer ones as bytes."""
    w = col.dtype.itemsize
    if w <= 8:
        pad = np.zeros((len(col), 8), np.uint8)
        pad[:, :w] = col.view(np.uint8).reshape(len(col), w)
        keys = pad.view(">u8").ravel().astype(np.uint64)
        _, inv = np.unique(keys, return_inverse=True)
    else:
        _, inv = np.unique(col, return_inverse=True)
    return inv.astype(np.int32)


def s_judged(col: np.ndarray, judged: list[str]) -> np.ndarray:
    ref = np.array([d.encode() for d in judged], dtype=col.dtype if judged else "S1")
    ref_sorted = np.sort(ref)
    idx = np.searchsorted(ref_sorted, col)
    idx = np.minimum(idx, len(ref_sorted) - 1)
    return np.where(ref_sorted[idx] == col, idx, -1).astype(np.int32)


def list_judged(names: list, judged: list[str]) -> np.ndarray:
    ref = {d: i for i, d in enumerate(judged)}
    return np.fromiter((ref.get(n, -1) for n in names), np.int32, count=len(names))


# ---- the options -------------------------------------------------------------------------------
# Each returns a dict of stage -> callable chain; run() times them in order.

def opt_pysplit(path, judged):
    st = {}

    def tokenise():
        qs, ds, ss = [], [], []
        with open(path) as f:
            for line in f:
                p = line.split()
                if not p or p[0].startswith("#"):
                    continue
                qs.append(p[0])
                ds.append(p[2])
                ss.append(float(p[4]))
        st["q"], st["d"], st["s"] = qs, ds, np.array(ss)

    def queries():
        st["qc"], st["qn"] = intern_list(st["q"])

    def docs():
        codes, names = intern_list(st["d"])
        st["dc"] = byte_order_codes(codes, names)

    def lean():
        st["j"] = list_judged(st["d"], judged)

    return st, tokenise, queries, docs, lean


def opt_rankgate(path, judged):
    """The current reader (block split, _fast_block, Interner) and Interner.order()."""
    from rankgate.core.formats.trec import read_trec_run

    st = {}

    def tokenise():
        st["run"] = read_trec_run(path)  # tokenises and interns both columns at once
        st["s"] = st["run"].score

    def queries():
        r = st["run"]
        st["qc"], st["qn"] = r.q, r.catalog.queries.names

    def docs():
        r = st["run"]
        st["dc"] = r.catalog.docs.order()[r.doc].astype(np.int32)

    def lean():
        r = st["run"]
        codes = r.catalog.docs.codes
        m = np.full(len(r.catalog.docs), -1, np.int32)
        for i, d in enumerate(judged):
            c = codes.get(d)
            if c is not None:
                m[c] = i
        st["j"] = m[r.doc]

    return st, tokenise, queries, docs, lean


def opt_blocksplit(path, judged):
    """bytes.split() per block (no str objects), columns as fixed-width numpy bytes."""
    st = {}

    def tokenise():
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
                toks = block.split()
                if len(toks) % 6 or len(set(toks[1::6])) != 1 or len(set(toks[5::6])) != 1:
                    raise SystemExit("irregular block: the slow path would take it")
                qp.append(np.array(toks[0::6]))
                dp.append(np.array(toks[2::6]))
                sp.append(np.array(toks[4::6]).astype(np.float64))
        wq, wd = max(a.dtype.itemsize for a in qp), max(a.dtype.itemsize for a in dp)
        st["q"] = np.concatenate([a.astype(f"S{wq}") for a in qp])
        st["d"] = np.concatenate([a.astype(f"S{wd}") for a in dp])
        st["s"] = np.concatenate(sp)

    def queries():
        st["qc"], st["qn"] = s_first_seen_codes(st["q"])

    def docs():
        st["dc"] = s_byte_order_codes(st["d"])

    def lean():
        st["j"] = s_judged(st["d"], judged)

    return st, tokenise, queries, docs, lean


# numpy tokeniser: whitespace as C's isspace (space, \t \n \v \f \r), one line = 6 tokens.

def _gather(buf: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Tokens [start, end) of buf as a fixed-width bytes array (NUL padded)."""
    n = len(start)
    if not n:
        return np.zeros(0, "S1")
    lens = end - start
    w = int(lens.max())
    idx = start[:, None] + np.arange(w)
    np.minimum(idx, len(buf) - 1, out=idx)
    out = buf[idx]
    out[np.arange(w) >= lens[:, None]] = 0
    return out.view(f"S{w}").ravel()


def _parse_scores(buf: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    return _gather(buf, start, end).astype(np.float64)


def numpy_block(block: bytes):
    buf = np.frombuffer(block, np.uint8)
    sep = (buf == 32) | ((buf >= 9) & (buf <= 13))
    edge = np.flatnonzero(np.diff(sep.view(np.int8), prepend=np.int8(1), append=np.int8(1)))
    # edge alternates: token start (sep -> non-sep), token end (non-sep -> sep)
    start, end = edge[0::2], edge[1::2]
    nl = np.flatnonzero(buf == 10)
    line_of = np.searchsorted(nl, start)  # 0-based line of each token
    per_line = np.bincount(line_of, minlength=len(nl) + 1)
    if (per_line[per_line > 0] != 6).any() or len(start) % 6:
        return None  # a short/long line: the slow path names it
    first = start[0::6]
    if (buf[first] == 35).any():  # '#': a comment line
        return None
    q = _gather(buf, start[0::6], end[0::6])
    d = _gather(buf, start[2::6], end[2::6])
    s = _parse_scores(buf, start[4::6], end[4::6])
    return q, d, s


def opt_numpy(path, judged):
    st = {}

    def tokenise():
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
        st["q"] = np.concatenate([a.astype(f"S{wq}") for a in qp])
        st["d"] = np.concatenate([a.astype(f"S{wd}") for a in dp])
        st["s"] = np.concatenate(sp)

    def queries():
        st["qc"], st["qn"] = s_first_seen_codes(st["q"])

    def docs():
        st["dc"] = s_byte_order_codes(st["d"])

    def lean():
        st["j"] = s_judged(st["d"], judged)

    return st, tokenise, queries, docs, lean


def canonical(data: bytes) -> bool:
    """Single spaces between fields, \\n line ends, no blank or comment lines."""
    return not (b"\t" in data or b"  " in data or b"\r" in data or b"\v" in data or b"\f" in data
                or data.startswith((b"#", b" ", b"\n")) or b"\n#" in data or b"\n " in data or b" \n" in data
                or b"\n\n" in data)


def numpy_block_canonical(block: bytes):
    """A canonical block: every separator is one space or one newline, so the separators'
    positions, six to a line, give every token's bounds without a search."""
    buf = np.frombuffer(block, np.uint8)
    pos = np.flatnonzero((buf == 32) | (buf == 10))
    if len(pos) % 6:
        return None
    pos = pos.reshape(-1, 6)
    if (buf[pos[:, 5]] != 10).any() or (buf[pos[:, :5]] != 32).any():
        return None  # a line with more or fewer than six fields
    start = np.empty_like(pos)
    start[:, 1:] = pos[:, :5] + 1
    start[0, 0] = 0
    start[1:, 0] = pos[:-1, 5] + 1
    q = _gather(buf, start[:, 0], pos[:, 0])
    d = _gather(buf, start[:, 2], pos[:, 2])
    s = _gather(buf, start[:, 4], pos[:, 4]).astype(np.float64)
    return q, d, s


def opt_numpy_canonical(path, judged):
    st, tokenise, queries, docs, lean = opt_numpy(path, judged)

    def tokenise_canonical():
        data = read_bytes(path)
        if not data.endswith(b"\n"):
            data += b"\n"
        if not canonical(data):
            raise SystemExit("not canonical: the general path would take it")
        qp, dp, sp = [], [], []
        at = 0
        while at < len(data):
            cut = data.rfind(b"\n", at, at + BLOCK) + 1 or data.find(b"\n", at) + 1
            cols = numpy_block_canonical(data[at:cut])
            if cols is None:
                raise SystemExit("irregular block: the slow path would take it")
            qp.append(cols[0])
            dp.append(cols[1])
            sp.append(cols[2])
            at = cut
        wq, wd = max(a.dtype.itemsize for a in qp), max(a.dtype.itemsize for a in dp)
        st["q"] = np.concatenate([a.astype(f"S{wq}") for a in qp])
        st["d"] = np.concatenate([a.astype(f"S{wd}") for a in dp])
        st["s"] = np.concatenate(sp)

    return st, tokenise_canonical, queries, docs, lean


def opt_pandas(path, judged):
    import csv

    import pandas as pd

    st = {}

    def tokenise():
        df = pd.read_csv(path, sep=r"\s+", header=None, usecols=[0, 2, 4], names=list("qidrst"),
                         dtype={"q": str, "d": str, "s": np.float64}, engine="c", quoting=csv.QUOTE_NONE,
                         na_filter=False)
        st["df"] = df
        st["s"] = df["s"].to_numpy()

    def queries():
        codes, uniques = pd.factorize(st["df"]["q"], sort=False)
        st["qc"], st["qn"] = codes.astype(np.int32), list(uniques)

    def docs():
        codes, uniques = pd.factorize(st["df"]["d"], sort=False)
        st["dc"] = byte_order_codes(codes, list(uniques))

    def lean():
        ref = pd.Index(judged)
        st["j"] = ref.get_indexer(st["df"]["d"]).astype(np.int32)

    return st, tokenise, queries, docs, lean


def opt_pyarrow_buffer(path, judged):
    """pyarrow on the file's bytes, read into Python first and checked with `in`."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pcsv

    st = {}

    def tokenise():
        data = read_bytes(path)
        # The fast path's precondition, checked on the bytes: single spaces only, no
        # comment lines (pyarrow takes one delimiter byte and has no comment option).
        if b"\t" in data or b"  " in data or b"\r" in data or data.startswith(b"#") or b"\n#" in data \
                or data.startswith(b" ") or b"\n " in data or b" \n" in data:
            raise SystemExit("not single-space separated: the numpy/slow path would take it")
        tbl = pcsv.read_csv(
            pa.py_buffer(data),
            read_options=pcsv.ReadOptions(column_names=list("qidrst")),
            parse_options=pcsv.ParseOptions(delimiter=" ", quote_char=False, double_quote=False),
            convert_options=pcsv.ConvertOptions(column_types={"q": pa.string(), "d": pa.string(), "s": pa.float64()},
                                                include_columns=["q", "d", "s"], strings_can_be_null=False,
                                                quoted_strings_can_be_null=False))
        del data
        st["q"], st["d"] = tbl["q"].combine_chunks(), tbl["d"].combine_chunks()
        st["s"] = tbl["s"].to_numpy()

    def queries():
        enc = st["q"].dictionary_encode()
        st["qc"], st["qn"] = enc.indices.to_numpy().astype(np.int32), enc.dictionary.to_pylist()

    def docs():
        enc = st["d"].dictionary_encode()
        order = pc.array_sort_indices(enc.dictionary).to_numpy()  # byte order of the names
        rank = np.empty(len(order), np.int32)
        rank[order] = np.arange(len(order), dtype=np.int32)
        st["dc"] = rank[enc.indices.to_numpy()]

    def lean():
        idx = pc.index_in(st["d"], value_set=pa.array(judged, pa.string()))
        st["j"] = idx.fill_null(-1).to_numpy().astype(np.int32)

    return st, tokenise, queries, docs, lean


def opt_pyarrow(path, judged):
    """The recommended fast path: a memchr prescan for tab/CR/VT/FF/NUL, then pyarrow reads
    the file itself with all six columns (the small ones dictionary-encoded) so that an
    empty field or a comment line shows; queries come dictionary-encoded from the reader."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pcsv

    sys.path.insert(0, str(Path(__file__).parent))
    from fast_score import prescan

    st = {}

    def tokenise():
        if not prescan(path):
            raise SystemExit("tabs, CRs or NULs: the slow path would take it")
        dict_t = pa.dictionary(pa.int32(), pa.string())
        tbl = pcsv.read_csv(
            path,
            read_options=pcsv.ReadOptions(column_names=list("qidrst")),
            parse_options=pcsv.ParseOptions(delimiter=" ", quote_char=False, double_quote=False,
                                            ignore_empty_lines=False),
            convert_options=pcsv.ConvertOptions(
                column_types={"q": dict_t, "i": dict_t, "d": pa.string(), "r": dict_t, "s": pa.float64(), "t": dict_t},
                strings_can_be_null=False, null_values=[]))
        small = {c: tbl[c].unify_dictionaries() for c in "qirt"}
        if any(pc.min(pc.binary_length(col.chunk(0).dictionary)).as_py() == 0 for col in small.values()) \
                or pc.min(pc.binary_length(tbl["d"])).as_py() == 0 \
                or pc.any(pc.starts_with(small["q"].chunk(0).dictionary, "#")).as_py():
            raise SystemExit("empty field or comment line: the slow path would take it")
        st["qdict"], st["d"] = small["q"], tbl["d"]
        st["s"] = tbl["s"].to_numpy()

    def queries():
        q = st["qdict"]
        st["qn"] = q.chunk(0).dictionary.to_pylist()
        st["qc"] = np.concatenate([c.indices.to_numpy() for c in q.chunks])

    def docs():
        enc = st["d"].combine_chunks().dictionary_encode()
        order = pc.array_sort_indices(enc.dictionary).to_numpy()
        rank = np.empty(len(order), np.int32)
        rank[order] = np.arange(len(order), dtype=np.int32)
        st["dc"] = rank[enc.indices.to_numpy()]

    def lean():
        idx = pc.index_in(st["d"], value_set=pa.array(judged, pa.string()))
        st["j"] = idx.fill_null(-1).to_numpy().astype(np.int32)

    return st, tokenise, queries, docs, lean


def opt_polars(path, judged):
    import polars as pl

    st = {}

    def tokenise():
        df = pl.read_csv(path, separator=" ", has_header=False, quote_char=None, comment_prefix="#",
                         columns=[0, 2, 4],
                         schema_overrides={"column_0": pl.String, "column_2": pl.String, "column_4": pl.Float64})
        df.columns = ["q", "d", "s"]
        st["df"] = df
        st["s"] = df["s"].to_numpy()

    def queries():
        q = st["df"]["q"]
        uniq = q.unique(maintain_order=True)
        codes = q.replace_strict(uniq, pl.int_range(len(uniq), eager=True, dtype=pl.Int32), return_dtype=pl.Int32)
        st["qc"], st["qn"] = codes.to_numpy(), uniq.to_list()

    def docs():
        st["dc"] = (st["df"]["d"].rank("dense").to_numpy() - 1).astype(np.int32)  # rank: byte order

    def lean():
        ref = pl.DataFrame({"d": judged, "j": np.arange(len(judged), dtype=np.int32)})
        st["j"] = st["df"].select("d").join(ref, on="d", how="left", maintain_order="left")["j"] \
            .fill_null(-1).to_numpy().astype(np.int32)

    return st, tokenise, queries, docs, lean


# ---- driver ------------------------------------------------------------------------------------

def child(option: str, mode: str, path: str, qrels: str) -> None:
    """mode full: tokenise, queries, docs; mode lean: tokenise, queries, judged."""
    judged = qrels_docs(qrels)
    st, tokenise, queries, docs, lean = globals()[f"opt_{option}"](path, judged)
    times, cpu = {}, {}
    for name, fn in (("tokenise", tokenise), ("queries", queries), ("docs", docs) if mode == "full" else ("judged", lean)):
        t, c = time.perf_counter(), time.process_time()
        fn()
        times[name] = time.perf_counter() - t
        cpu[name] = time.process_time() - c
    check = dict(rows=int(len(st["s"])), queries=len(st["qn"]), score_sum=float(np.sum(st["s"])), q0=st["qn"][0])
    if mode == "full":
        check.update(docs=int(st["dc"].max()) + 1, dc_head=st["dc"][:3].tolist())
    else:
        check.update(judged_rows=int((st["j"] >= 0).sum()), judged_sum=int(st["j"][st["j"] >= 0].sum()))
    print(json.dumps(dict(times=times, cpu=cpu, check=check)))


def run_child(option: str, mode: str, path: str, qrels: str, python: str):
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t = time.perf_counter()
        p = subprocess.Popen([python, __file__, "--child", option, "--mode", mode, path, "--qrels", qrels],
                             stdout=out, stderr=err)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t
        out.seek(0)
        err.seek(0)
        if os.waitstatus_to_exitcode(status):
            return None, err.read().decode().strip().splitlines()[-1:]
        res = json.loads(out.read().decode().strip().splitlines()[-1])
    res["wall"] = wall
    res["peak_mb"] = ru.ru_maxrss / 1024
    return res, None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run")
    ap.add_argument("--qrels", help="qrels for the `judged` stage (default: qrels.txt beside the run)")
    ap.add_argument("--options", default=",".join(OPTIONS))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--mode", default="full", help=argparse.SUPPRESS)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    qrels = args.qrels or str(Path(args.run).with_name("qrels.txt"))
    if args.child:
        child(args.child, args.mode, args.run, qrels)
        return 0
    results = {}
    lines = sum(1 for _ in open(args.run, "rb"))
    print(f"{args.run}: {lines:,} lines, {os.path.getsize(args.run) / 1e6:.0f} MB; {args.rounds} rounds; "
          f"python {sys.version.split()[0]}, numpy {np.__version__}")
    for opt in args.options.split(","):
        runs: dict[str, list] = {"full": [], "lean": []}
        skipped = None
        for _ in range(args.rounds):
            for mode in runs:
                res, err = run_child(opt, mode, args.run, qrels, sys.executable)
                if res is None:
                    skipped = " ".join(err)
                    break
                runs[mode].append(res)
            if skipped:
                break
        if skipped:
            print(f"{opt}: skipped ({skipped})", flush=True)
            continue
        r = {}
        for mode, rs in runs.items():
            r[mode] = dict(times={k: statistics.median(x["times"][k] for x in rs) for k in rs[0]["times"]},
                           cpu=statistics.median(sum(x["cpu"].values()) for x in rs),
                           wall=statistics.median(x["wall"] for x in rs), peak_mb=max(x["peak_mb"] for x in rs),
                           check=rs[0]["check"])
        results[opt] = r
        f, l = r["full"], r["lean"]
        print(f"{opt}: full {sum(f['times'].values()):.2f} s, cpu {f['cpu']:.2f} s ({f['peak_mb']:.0f} MB), "
              f"lean {sum(l['times'].values()):.2f} s, cpu {l['cpu']:.2f} s ({l['peak_mb']:.0f} MB)", flush=True)
    print()
    print("| option | tokenise s | queries s | docs: all, byte order s | full s | full cpu s | full peak MB "
          "| judged only s | lean s | lean cpu s | lean peak MB | lean process s |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for opt, r in results.items():
        f, l = r["full"], r["lean"]
        print(f"| {opt} | {f['times']['tokenise']:.2f} | {f['times']['queries']:.2f} | {f['times']['docs']:.2f} | "
              f"{sum(f['times'].values()):.2f} | {f['cpu']:.2f} | {f['peak_mb']:.0f} | {l['times']['judged']:.2f} | "
              f"{sum(l['times'].values()):.2f} | {l['cpu']:.2f} | {l['peak_mb']:.0f} | {l['wall']:.2f} |")
    for mode in ("full", "lean"):
        checks = {opt: r[mode]["check"] for opt, r in results.items()}
        ref = next(iter(checks.values()), None)
        for opt, c in checks.items():
            if c != ref:
                print(f"checksum ({mode}) differs: {opt}: {c} vs {ref}")
        if ref:
            print(f"checksum ({mode}): {ref}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
