"""The compiled fast path for large TREC runs (`rankgate score`), used when pyarrow is installed.

What it does differently from the general reader, with the same results:
- pyarrow's CSV reader parses the file (one space between fields, no tabs, CRs,
  comment or blank lines: a prescan checks; anything else takes the general path);
- only query IDs are interned; a document is looked up among the judged ones only,
  never interned, so memory stays near the size of the columns;
- duplicates are found by a 64-bit hash of (query, document), confirmed exactly;
- rows are sorted only when not already in trec_eval order, and score ties are
  settled by document ID bytes, descending, among the tied rows only.
The measures are the engine's own (`engine.per_query` on a `Prepared`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from rankgate.core.engine import UNJUDGED, Prepared
from rankgate.core.errors import Problem
from rankgate.core.model import Qrels

PRESCAN_BLOCK = 16 << 20


def available() -> bool:
    try:
        import pyarrow.csv  # noqa: F401
    except ImportError:
        return False
    return True


# Bytes str.split() treats as separators but a one-space delimiter does not.
_NOT_PLAIN = (b"\t", b"\r", b"\v", b"\f", b"\x00")


def prescan(path: str) -> bool:
    """True when no byte would split differently under a one-space delimiter (tab, CR, VT,
    FF, NUL), the file is not gzipped, has no byte-order mark and ends with a line break.
    Empty fields (two spaces, a leading or trailing space) are caught after parsing: no
    column may hold an empty string, so a five-field line can never pass as six."""
    with open(path, "rb") as f:
        head = f.read(3)
        if head[:2] == b"\x1f\x8b" or head == b"\xef\xbb\xbf":
            return False
        f.seek(0)
        last = b""
        while True:
            data = f.read(PRESCAN_BLOCK)
            if not data:
                return last == b"\n"
            if any(data.find(c) >= 0 for c in _NOT_PLAIN):  # memchr per byte
                return False
            last = data[-1:]


@dataclass
class LeanRun:
    """A TREC run read by the fast path: columns, with documents looked up, not interned."""

    name: str
    path: str
    qcode: np.ndarray  # per row: index into qnames
    qnames: list[str]
    score: np.ndarray
    judged: np.ndarray  # per row: the qrels catalog's doc code, or -1 when nobody judged it
    docs: object  # the pyarrow string column, for tie-breaks and messages
    format: str = "trec"
    lean: bool = True
    meta: dict = field(default_factory=dict)
    latency_ms: dict = field(default_factory=dict)
    context_tokens: dict = field(default_factory=dict)

    @property
    def query_ids(self) -> list[str]:
        present = np.flatnonzero(np.bincount(self.qcode, minlength=len(self.qnames)))
        return [self.qnames[i] for i in present]


def read_lean_run(path: str, name: str, qrels: Qrels) -> LeanRun | None:
    """The run, or None when the file is not regular enough for the fast path."""
    if not prescan(path):
        return None
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pcsv

    dict_t = pa.dictionary(pa.int32(), pa.string())
    try:
        tbl = pcsv.read_csv(
            path,
            read_options=pcsv.ReadOptions(column_names=["q", "i", "d", "r", "s", "t"]),
            parse_options=pcsv.ParseOptions(delimiter=" ", quote_char=False, double_quote=False,
                                            ignore_empty_lines=False),
            convert_options=pcsv.ConvertOptions(
                column_types={"q": dict_t, "i": pa.string(), "d": pa.string(), "r": pa.string(),
                              "s": pa.float64(), "t": pa.string()}, strings_can_be_null=False))
    except (pa.ArrowInvalid, pa.ArrowTypeError, UnicodeDecodeError):
        return None  # other than six fields, a score that is no number, bad UTF-8: the general path names it
    # An empty field means two spaces, or a leading or trailing one: the general reader decides.
    for col in ("i", "d", "r", "t"):
        if len(tbl[col]) and pc.min(pc.binary_length(tbl[col])).as_py() == 0:
            return None
    q = tbl["q"].unify_dictionaries()
    if q.num_chunks == 0:
        return None
    qnames = q.chunk(0).dictionary.to_pylist()
    if any(not n or n.startswith("#") for n in qnames):
        return None
    qcode = np.concatenate([ch.indices.to_numpy() for ch in q.chunks])
    d = tbl["d"]
    score = tbl["s"].to_numpy()
    if not np.isfinite(score).all():
        return None
    names = qrels.catalog.docs.names
    judged_codes = np.unique(qrels.doc)
    value_set = pa.array([names[c] for c in judged_codes.tolist()], pa.string())
    idx = pc.index_in(d, value_set=value_set).fill_null(-1).to_numpy()
    judged = np.where(idx >= 0, judged_codes[np.maximum(idx, 0)], -1)
    return LeanRun(name, path, qcode, qnames, score, judged, d)


def _take(docs, rows: np.ndarray) -> list[str]:
    import pyarrow as pa

    return docs.take(pa.array(rows)).to_pylist()


def fnv1a64(d) -> np.ndarray:
    """64-bit FNV-1a of every string of a pyarrow string array, one pass per byte position."""
    import pyarrow as pa

    if isinstance(d, pa.ChunkedArray):
        return np.concatenate([fnv1a64(c) for c in d.chunks]) if d.num_chunks else np.zeros(0, np.uint64)
    offs = np.frombuffer(d.buffers()[1], np.int32)[d.offset:d.offset + len(d) + 1]
    data = np.frombuffer(d.buffers()[2], np.uint8) if d.buffers()[2] is not None else np.zeros(1, np.uint8)
    n = len(d)
    h = np.full(n, 0xCBF29CE484222325, np.uint64)
    if not n:
        return h
    start = offs[:-1].astype(np.int64)
    lens = np.diff(offs)
    prime = np.uint64(0x100000001B3)
    pos, byte = np.empty(n, np.int64), np.empty(n, np.uint8)
    for j in range(int(lens.min())):
        np.add(start, j, out=pos)
        np.take(data, pos, out=byte)
        h ^= byte
        h *= prime
    for j in range(int(lens.min()), int(lens.max())):
        rows = np.flatnonzero(lens > j)
        h[rows] = (h[rows] ^ data[start[rows] + j]) * prime
    return h


def duplicate_rows(run: LeanRun) -> np.ndarray:
    """Rows whose (query, document) appeared earlier in the file."""
    key = fnv1a64(run.docs)
    key ^= run.qcode.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    srt = np.sort(key)
    if not (srt[1:] == srt[:-1]).any():  # the usual case: no candidate at all
        return np.zeros(0, np.int64)
    del srt
    order = np.argsort(key, kind="stable")
    k = key[order]
    cand = np.flatnonzero(k[1:] == k[:-1])
    if not len(cand):
        return np.zeros(0, np.int64)
    a, b = order[cand], order[cand + 1]
    same = (run.qcode[a] == run.qcode[b]) & np.array(
        [x == y for x, y in zip(_take(run.docs, a), _take(run.docs, b))], bool)
    return np.sort(np.maximum(a, b)[same])


def validate_lean(run: LeanRun, qrels_queries: set[str], no_answer: set[str], checks) -> list[Problem]:
    """The run-level rules of core.validate, for a lean run."""
    from rankgate.core.validate import MAX_PER_RULE, query_set_problems

    problems = query_set_problems(run.name, run.path, set(run.query_ids), qrels_queries, no_answer, checks)
    dups = duplicate_rows(run)
    for row in dups[:MAX_PER_RULE].tolist():
        doc = _take(run.docs, np.array([row]))[0]
        problems.append(Problem(f"{run.path}:{row + 1}", f"run {run.name!r} ranks document {doc!r} twice for "
                                f"query {run.qnames[run.qcode[row]]!r}", "duplicate-ranked"))
    if len(dups) > MAX_PER_RULE:
        problems.append(Problem(run.path, f"... and {len(dups) - MAX_PER_RULE} more like this", "duplicate-ranked"))
    if checks.short_rankings == "error":
        counts = np.bincount(run.qcode, minlength=len(run.qnames))
        short = [i for i in np.flatnonzero((counts > 0) & (counts < checks.k)).tolist()]
        for i in short[:MAX_PER_RULE]:
            problems.append(Problem(run.path, f"run {run.name!r} ranks {int(counts[i])} document"
                                    f"{'' if counts[i] == 1 else 's'} for query {run.qnames[i]!r}, fewer than "
                                    f"k={checks.k} (use --short-rankings allow to accept)", "short-ranking"))
        if len(short) > MAX_PER_RULE:
            problems.append(Problem(run.path, f"... and {len(short) - MAX_PER_RULE} more like this",
                                    "short-ranking"))
    return problems


def _trec_order(qp: np.ndarray, score: np.ndarray, docs) -> np.ndarray | None:
    """A permutation into trec_eval order, or None when the rows already are in it."""
    n = len(qp)
    if not n:
        return None
    same = qp[1:] == qp[:-1]
    grouped = int(np.count_nonzero(~same)) + 1 == int(np.count_nonzero(np.bincount(qp)))
    perm = None
    if not grouped or bool((same & (score[1:] > score[:-1])).any()):
        perm = np.lexsort((-score, qp))
        qp, score = qp[perm], score[perm]
        same = qp[1:] == qp[:-1]
    tie = same & (score[1:] == score[:-1])
    if tie.any():
        import pyarrow as pa
        import pyarrow.compute as pc

        in_group = np.r_[tie, False] | np.r_[False, tie]
        rows = np.flatnonzero(in_group)
        group = np.cumsum(np.r_[True, ~tie])[rows]
        src = rows if perm is None else perm[rows]
        tied_docs = docs.take(pa.array(src))
        o = pc.sort_indices(pa.table({"g": group, "d": tied_docs}),
                            sort_keys=[("g", "ascending"), ("d", "descending")]).to_numpy()
        if perm is None:
            perm = np.arange(n)
        perm[rows] = src[o]
    return perm


def prepare_lean(qrels: Qrels, run: LeanRun, *, rel_level: int, missing: str,
                 queries: list[str] | None = None) -> Prepared:
    """The same Prepared as engine.prepare builds, from a lean run."""
    cat = qrels.catalog
    names = cat.queries.names
    judged = sorted({names[c] for c in np.unique(qrels.q).tolist()}, key=str.encode)
    present = set(run.query_ids)
    if queries is not None:
        wanted = set(queries)
        qids = [q for q in judged if q in wanted]
    elif missing == "zero":
        qids = judged
    else:
        qids = [q for q in judged if q in present]
    qpos = {q: i for i, q in enumerate(qids)}
    nq = len(qids)
    run_pos = np.array([qpos.get(n, -1) for n in run.qnames], np.int64)
    qp = run_pos[run.qcode]
    keep = np.flatnonzero(qp >= 0)
    qp, score, jd = qp[keep], run.score[keep], run.judged[keep]
    docs = run.docs.take(__import__("pyarrow").array(keep)) if len(keep) != len(run.qcode) else run.docs
    perm = _trec_order(qp, score, docs)
    if perm is not None:
        qp, jd = qp[perm], jd[perm]
    n = len(qp)
    starts = np.flatnonzero(np.r_[True, qp[1:] != qp[:-1]]) if n else np.zeros(0, np.int64)
    num_ret = np.bincount(qp, minlength=nq).astype(np.float64)
    pos = np.full(len(cat.queries), -1, np.int64)
    if nq:
        pos[np.fromiter(map(cat.queries.codes.__getitem__, qids), np.int64, count=nq)] = np.arange(nq)
    qqp = pos[qrels.q] if len(qrels.q) else np.zeros(0, np.int64)
    D = max(len(cat.docs), 1)
    jkeys = qqp * D + qrels.doc
    order = np.argsort(jkeys, kind="stable")
    jkeys, jgrades = jkeys[order], qrels.grade[order]
    # Only rows judged for their query matter to any measure (num_ret is counted above), so
    # rank and grade are built for those rows alone: a few thousand out of millions.
    rows = np.flatnonzero(jd >= 0)
    grade = np.zeros(0, np.int64)
    if len(rows) and len(jkeys):
        rk = qp[rows] * D + jd[rows]
        at = np.minimum(np.searchsorted(jkeys, rk), len(jkeys) - 1)
        found = jkeys[at] == rk
        rows, grade = rows[found], jgrades[at[found]]
    else:
        rows = rows[:0]
    rank = rows - starts[np.searchsorted(starts, rows, side="right") - 1] if len(rows) else rows
    return Prepared(qids, nq, qp[rows], rank, grade, jd[rows].astype(np.int64), num_ret, qqp, qrels.grade,
                    rel_level)


def lean_reader(path: str, name: str | None, qrels: Qrels) -> list[LeanRun] | None:
    """For load_bundle: a TREC run through the fast path, or None for the usual reader."""
    from rankgate.core.formats import _sniff
    from rankgate.core.formats.trec import run_name_from_path

    try:
        if _sniff(path) != "trec":
            return None
        run = read_lean_run(path, name or run_name_from_path(path), qrels)
    except OSError:
        return None  # the usual reader says what is wrong with the file
    return [run] if run is not None else None
