"""trec_eval 10, line for line: its files read with its meaning, its `-m` names, its output.

`rankgate trec_eval` (cli/trec_eval.py) is a thin face on this module; the measures themselves are the
engine's (core/measures.py + core/engine.py), so `rankgate score` and `rankgate trec_eval` never disagree.

Reading as trec_eval reads:
- IDs are bytes: a file is decoded as Latin-1, one character per byte, so that sorting by code point is
  trec_eval's strcmp order and no byte is refused; output turns them back into the same bytes (escaped
  by `core.text.visible` where they are not printable UTF-8).
- fields are split on ASCII whitespace; a run line needs six fields (more are ignored), a qrels line four;
  `#` starts a comment at the start of a qrels line, or after leading blanks in a run.
- a score is C's atof (`inf`, `1e5`, `0x1p3`, leading garbage ends the number), a grade C's atol
  (`1.5` is 1, `0x37` is 0): both said on stderr once, with the first line where it happened.
- the run's tag is the runid of its last line; gzip files are read as they are.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from rankgate.core.errors import InputError
from rankgate.core.measures import Measure
from rankgate.core.model import Catalog, Qrels, Run, grade_problem
from rankgate.core.text import visible

# ---- reading ----------------------------------------------------------------------------------

_NOT_C_SPACE = re.compile("[\x1c-\x1f\x85\xa0]")  # str.split() splits there, C's isspace does not
_ATOL = re.compile(r"[ \t\n\r\v\f]*([+-]?\d+)")
_ATOF = re.compile(r"[ \t\n\r\v\f]*([+-]?(?:0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?\d+)?"
                   r"|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf(?:inity)?|nan))", re.IGNORECASE)


def atol(text: str) -> int:
    m = _ATOL.match(text)
    return int(m.group(1)) if m else 0


def atof(text: str) -> float:
    m = _ATOF.match(text)
    if not m:
        return 0.0
    t = m.group(1)
    low = t.lower().lstrip("+-")
    if low.startswith("0x"):
        v = float.fromhex(t if "p" in low else t + "p0")
        return v
    return float(t)


def _read_bytes(path: str, notes: list[str] | None = None) -> str:
    """The file as trec_eval reads it (textio.read_whole_latin1: gzip bounded, BOM dropped, CR-only line ends
    made LF); a NUL byte is read as trec_eval reads it, and said once in `notes`."""
    from rankgate.core.formats.textio import read_whole_latin1

    text = read_whole_latin1(path)
    if notes is not None and "\x00" in text:
        at = text.index("\x00")
        notes.append(f"warning: {visible(path)}: {text.count(chr(0))} NUL byte(s) (first at line "
                     f"{text.count(chr(10), 0, at) + 1}); read as part of the text, as trec_eval reads them")
    return text


def _splitter(text: str):
    if _NOT_C_SPACE.search(text):
        return lambda line: [t.decode("latin-1") for t in line.encode("latin-1").split()]
    return str.split


def read_qrels(path: str, catalog: Catalog, notes: list[str]) -> Qrels:
    """The qrels; `meta["ascii"]` tells whether every byte of the file is ASCII."""
    text = _read_bytes(path, notes)
    split = _splitter(text)
    qs, ds, gs, where = [], [], [], []
    odd = []
    for lineno, line in enumerate(text.split("\n"), 1):
        if line.startswith("#"):
            continue
        parts = split(line)
        if not parts:
            continue
        if len(parts) != 4:
            from rankgate.core.formats.trec import qrels_line_hint

            raise InputError(path, f"{len(parts)} fields, expected 4: query iteration document grade (as trec_eval "
                             "reads qrels)" + qrels_line_hint(parts).replace("the qrels and the run", "QRELS and RUN"),
                             line=lineno)
        g = parts[3]
        try:
            grade = int(g)
        except ValueError:
            grade = atol(g)
            odd.append((lineno, g))
        if (why := grade_problem(grade)) is not None:  # trec_eval's atol would overflow: said, not guessed
            raise InputError(path, why, line=lineno)
        qs.append(parts[0])
        ds.append(parts[2])
        gs.append(grade)
        where.append(lineno)
    if not qs:
        raise InputError(path, "no judgments (trec_eval cannot read an empty qrels file)")
    if odd:
        line, g = odd[0]
        notes.append(f"warning: {visible(path)}: {len(odd)} grade(s) are not whole numbers (first at line {line}: "
                     f"{_shown(g)}); read as trec_eval reads them, by their leading digits")
    q = catalog.queries.extend(qs)
    d = catalog.docs.extend(ds)
    grade = np.array(gs, np.int64)
    _no_duplicates(path, q, d, np.array(where, np.int64), catalog, "judged twice")
    codes = list(dict.fromkeys(q.tolist()))
    return Qrels(path, catalog, q, d, grade, codes, format="trec", meta={"ascii": text.isascii()})


def read_run(path: str, catalog: Catalog, notes: list[str]) -> tuple[Run, str]:
    """The run and its runid (the tag of its last line)."""
    text = _read_bytes(path, notes)
    split = _splitter(text)
    fast = _regular(text) if split is str.split else None
    if fast is not None:
        qs, ds, ss, runid = fast
        where = np.arange(1, len(qs) + 1, dtype=np.int64)
        scores = _scores(ss, where, path, notes)
    else:
        qs, ds, raw, wl = [], [], [], []
        runid = ""
        for lineno, line in enumerate(text.split("\n"), 1):
            if line.lstrip(" \t\r\v\f").startswith("#"):
                continue
            parts = split(line)
            if not parts:
                continue
            if len(parts) < 6:
                from rankgate.core.formats.trec import run_line_hint

                raise InputError(path, f"{len(parts)} fields, expected 6: query Q0 document rank score tag (as "
                                 "trec_eval reads runs)" + run_line_hint(parts).replace("the qrels and the run",
                                                                                    "QRELS and RUN"), line=lineno)
            qs.append(parts[0])
            ds.append(parts[2])
            raw.append(parts[4])
            wl.append(lineno)
            runid = parts[5]
        where = np.array(wl, np.int64)
        scores = _scores(raw, where, path, notes)
    if not qs:
        raise InputError(path, "no ranked documents (trec_eval cannot read an empty run)")
    q = catalog.queries.extend(qs)
    d = catalog.docs.extend(ds)
    _no_duplicates(path, q, d, where, catalog, "ranked twice for the same query")
    codes = list(dict.fromkeys(q.tolist()))
    return Run(runid, path, catalog, q, d, scores, where, format="trec", query_codes=codes), runid


def read_run_fast(path: str, qrels: Qrels, qrels_ascii: bool):
    """A large, plain run through the compiled reader (core/formats/trec_fast.py: pyarrow, only the judged
    rows kept), with its runid; None when that reader does not apply (no pyarrow, RANKGATE_FAST=0, a small,
    gzipped, tabbed or non-UTF-8 file, a score such as inf): then `read_run` reads it. Its IDs are UTF-8
    text, so it is used only when the qrels IDs are ASCII (then both readers see the same names)."""
    import os

    from rankgate.core.formats import trec_fast

    if not qrels_ascii or os.environ.get("RANKGATE_FAST", "1") == "0" or not trec_fast.available():
        return None
    try:
        if os.path.getsize(path) < trec_fast.MIN_BYTES:
            return None
        with open(path, "rb") as f:
            if f.read(2) == b"\x1f\x8b":
                return None
            f.seek(max(os.path.getsize(path) - 65536, 0))
            tail = f.read().split(b"\n")
    except OSError:
        return None
    last = next((ln.split() for ln in reversed(tail) if ln.strip()), [])
    if len(last) != 6:
        return None
    run = trec_fast.read_lean_run(path, path, qrels)
    if run is None:
        return None
    if run.n_duplicates:
        line, q, d = run.duplicates[0]
        raise InputError(path, f"document {_shown(d)} is ranked twice for the same query (query {_shown(q)}); "
                         "trec_eval stops here too", line=line)
    return run, last[5].decode("latin-1")


def _regular(text: str):
    """Every line six fields, no blank line and no comment: the columns by slicing (the common, large
    case); else None. A short line next to a long one would shift the columns: constant iteration and
    tag columns rule that out."""
    if "#" in text:
        return None
    toks = text.split()
    n = len(toks) // 6
    lines = text.count("\n") + (0 if text.endswith("\n") else 1)
    if not n or len(toks) != 6 * n or lines != n:
        return None
    iters, tags = toks[1::6], toks[5::6]
    if iters.count(iters[0]) != n or tags.count(tags[0]) != n:
        return None
    return toks[0::6], toks[2::6], toks[4::6], toks[-1]


def _scores(raw: list[str], where: np.ndarray, path: str, notes: list[str]) -> np.ndarray:
    try:
        out = np.fromiter(map(float, raw), np.float64, count=len(raw))
        if not any("_" in t for t in raw):  # Python reads 1_0 as 10, C's atof as 1
            _note_not_finite(out, where, raw, path, notes)
            return out
    except ValueError:
        pass
    out = np.empty(len(raw), np.float64)
    odd = None
    count = 0
    for i, t in enumerate(raw):
        try:
            out[i] = float(t)
            if "_" in t:
                raise ValueError
        except ValueError:
            out[i] = atof(t)
            count += 1
            odd = odd or (int(where[i]), t)
    if odd:
        notes.append(f"warning: {visible(path)}: {count} score(s) are not plain numbers (first at line {odd[0]}: "
                     f"{_shown(odd[1])}); read as trec_eval reads them (C's atof: the leading number, else 0)")
    _note_not_finite(out, where, raw, path, notes)
    return out


def _note_not_finite(out: np.ndarray, where: np.ndarray, raw: list[str], path: str, notes: list[str]) -> None:
    """NaN and infinite scores rank as trec_eval ranks them; said once, with the first line."""
    bad = np.flatnonzero(~np.isfinite(out))
    if len(bad):
        i = int(bad[0])
        notes.append(f"warning: {visible(path)}: {len(bad)} score(s) are NaN or infinite (first at line "
                     f"{int(where[i])}: {_shown(raw[i])}); ranked as trec_eval ranks them")


def _no_duplicates(path, q, d, where, catalog, what) -> None:
    if not len(q):
        return
    key = q.astype(np.int64) * max(len(catalog.docs), 1) + d
    order = np.argsort(key, kind="stable")
    same = np.flatnonzero(key[order][1:] == key[order][:-1])
    if len(same):
        i = order[same[0] + 1]
        raise InputError(path, f"document {_shown(catalog.docs.names[d[i]])} is {what} (query "
                         f"{_shown(catalog.queries.names[q[i]])}); trec_eval stops here too", line=int(where[i]))


def shown(name: str) -> str:
    """An ID read as bytes, as text for a terminal: its UTF-8 when it is, escapes for the rest."""
    return visible(name.encode("latin-1").decode("utf-8", "surrogateescape"))


def _shown(name: str) -> str:
    return repr(shown(name))


# ---- which measures: trec_eval's -m ------------------------------------------------------------

LONG, FLOAT, TEXT = "long", "float", "text"


@dataclass(frozen=True)
class Root:
    """One entry of trec_eval's measure table."""

    name: str
    family: str | None  # the engine's family; None for runid, num_q, relstring
    params: str = ""  # "cuts" (a sorted list of ranks), "levels" (of floats), "raw" (kept as written), ""
    kind: str = FLOAT  # how a value is printed: %ld, %6.4f, or a quoted string
    per_query: bool = True  # printed for each query (gm_map and gm_bpref are not)
    summary: bool = True  # printed for `all` (relstring is not)


TABLE = (
    Root("runid", None, kind=TEXT, per_query=False), Root("num_q", None, kind=LONG, per_query=False),
    Root("num_ret", "NumRet", kind=LONG), Root("num_rel", "NumRel", kind=LONG),
    Root("num_rel_ret", "NumRelRet", kind=LONG), Root("map", "AP"), Root("gm_map", "gmAP", per_query=False),
    Root("Rprec", "Rprec"), Root("bpref", "bpref"), Root("recip_rank", "RR"),
    Root("iprec_at_recall", "IPrec", "levels"), Root("P", "P", "cuts"),
    Root("relstring", None, "raw", kind=TEXT, summary=False), Root("recall", "R", "cuts"),
    Root("infAP", "infAP"), Root("gm_bpref", "gmBpref", per_query=False),
    Root("Rprec_mult", "RprecMult", "levels"), Root("utility", "Utility", "raw"), Root("11pt_avg", "IPrecAvg", "raw"),
    Root("binG", "binG"), Root("G", "G", "raw"), Root("ndcg", "nDCG", "raw"), Root("ndcg_rel", "nDCGRel", "raw"),
    Root("Rndcg", "Rndcg", "raw"), Root("ndcg_cut", "nDCG", "cuts"), Root("map_cut", "AP", "cuts"),
    Root("relative_P", "RelP", "cuts"), Root("success", "Success", "cuts"), Root("set_P", "SetP"),
    Root("set_relative_P", "SetRelP"), Root("set_recall", "SetR"), Root("set_map", "SetAP"),
    Root("set_F", "SetF", "raw"), Root("num_nonrel_judged_ret", "NumNonrelJudgedRet", kind=LONG),
    Root("rbp", "RBP", "raw"), Root("rbp_resid", "RBPResid"), Root("unj", "Unjudged", "cuts"),
)
ROOTS = {r.name: r for r in TABLE}
DEFAULT_CUTS = {"P": (5, 10, 15, 20, 30, 100, 200, 500, 1000), "recall": (5, 10, 15, 20, 30, 100, 200, 500, 1000),
                "ndcg_cut": (5, 10, 15, 20, 30, 100, 200, 500, 1000),
                "map_cut": (5, 10, 15, 20, 30, 100, 200, 500, 1000),
                "relative_P": (5, 10, 15, 20, 30, 100, 200, 500, 1000), "success": (1, 5, 10), "unj": (5, 10, 20),
                "iprec_at_recall": tuple(i / 10 for i in range(11)),
                "Rprec_mult": (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)}
NICKNAMES = {
    "official": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
                 "recip_rank", "iprec_at_recall", "P"),
    "set": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P", "set_recall",
            "set_relative_P", "set_map", "set_F"),
    "all_trec": tuple(r.name for r in TABLE),
}
# trec_eval's measures that rankgate does not compute, and why: refused by name, never dropped.
NOT_SUPPORTED = {
    **{n: "it reads trec_eval's preference files (-R prefs / qrels_prefs)" for n in (
        "prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret", "prefs_simp", "prefs_pair",
        "prefs_avgjg", "prefs_avgjg_Rnonrel", "prefs_simp_ret", "prefs_pair_ret", "prefs_avgjg_ret",
        "prefs_avgjg_Rnonrel_ret", "prefs_simp_imp", "prefs_pair_imp", "prefs_avgjg_imp", "all_prefs", "prefs")},
    **{n: "it reads several judges' qrels (-R qrels_jg)" for n in (
        "map_avgjg", "P_avgjg", "Rprec_mult_avgjg", "qrels_jg")},
    "yaap": "rankgate does not compute it yet", "dcg": "rankgate does not compute it yet (ndcg does)",
    "ideal_dcg": "rankgate does not compute it yet (ndcg does)", "ndcg_p": "rankgate does not compute it yet",
}


@dataclass
class Request:
    """The measures asked for, in trec_eval's table order, with the parameters given to each."""

    roots: list[str]
    params: dict[str, str]

    def measures(self) -> list[tuple[Root, list[tuple[str, Measure | None]]]]:
        """Per root: (printed name, engine measure) of each value it prints."""
        out = []
        for name in self.roots:
            root = ROOTS[name]
            given = self.params.get(name, "")
            out.append((root, _expand(root, given)))
        return out


NEW_IN_10 = ("rbp", "rbp_resid", "unj")  # not in trec_eval 9.0.7's all_trec


def parse_request(args: list[str], version: str = "10") -> Request:
    """trec_eval's `-m` words: names, nicknames, NAME.PARAMS. None given means `official`."""
    marked: set[str] = set()
    params: dict[str, str] = {}
    for arg in args or ["official"]:
        name, dot, given = arg.partition(".")
        if dot and not given:
            raise InputError("-m", f"{arg!r}: nothing after the dot (expected e.g. P.5,10)")
        if name in NOT_SUPPORTED:
            raise InputError("-m", f"trec_eval's measure {name!r} is not supported: {NOT_SUPPORTED[name]}")
        if name in NICKNAMES:
            if dot:
                raise InputError("-m", f"{arg!r}: a group of measures takes no parameters")
            marked.update(n for n in NICKNAMES[name] if version != "9" or n not in NEW_IN_10)
            continue
        if name not in ROOTS:
            raise InputError("-m", f"{arg!r}: not a trec_eval measure (trec_eval: illegal measure); see "
                             "`rankgate trec_eval --list-measures`")
        root = ROOTS[name]
        if dot:
            if not root.params:
                raise InputError("-m", f"{arg!r}: {name} takes no parameters")
            _expand(root, given)  # refuse bad parameters now, naming them
            params[name] = given
        marked.add(name)
    return Request([r.name for r in TABLE if r.name in marked], params)


def _expand(root: Root, given: str) -> list[tuple[str, Measure | None]]:
    if root.family is None:
        if root.name == "relstring":
            return [(f"relstring_{given}" if given else "relstring", None)]
        return [(root.name, None)]
    if root.params == "cuts":
        if given:
            try:
                cuts = sorted({atol(x) for x in given.split(",")})
            except ValueError:
                cuts = []
            if not cuts or cuts[0] < 1:
                raise InputError("-m", f"{root.name}.{given}: cutoffs must be whole numbers of 1 or more")
        else:
            cuts = DEFAULT_CUTS[root.name]
        return [(f"{root.name}_{k}", Measure(root.family, int(k))) for k in cuts]
    if root.params == "levels":
        if given:
            levels = sorted({round(atof(x), 4) for x in given.split(",")})
            if not all(math.isfinite(x) for x in levels):
                raise InputError("-m", f"{root.name}.{given}: levels must be finite numbers")
            if levels[0] < 0 or (root.name == "iprec_at_recall" and levels[-1] > 1):
                raise InputError("-m", f"{root.name}.{given}: levels must be between 0 and 1"
                                 if root.name == "iprec_at_recall" else f"{root.name}.{given}: must be 0 or more")
        else:
            levels = DEFAULT_CUTS[root.name]
        return [(f"{root.name}_{x:3.2f}", Measure(root.family, float(x))) for x in levels]
    if root.params == "raw" and given:
        _check_raw(root, given)
        return [(f"{root.name}_{given}", Measure(root.family, None, None, given))]
    return [(root.name, Measure(root.family))]


_DECIMAL = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?\Z")


def _finite(text: str) -> float:
    """A measure parameter as a number: ASCII decimal syntax only (Python's float would take 1_5, a
    non-ASCII digit, nan and inf); 1e400 is refused too (ValueError), as words are."""
    value = float(text) if _DECIMAL.match(text.strip()) else math.nan
    if not math.isfinite(value):
        raise ValueError(text)
    return value


def _check_raw(root: Root, given: str) -> None:
    parts = given.split(",")
    try:
        if root.name == "utility":
            if len(parts) != 4:
                raise ValueError
            vals = [_finite(x) for x in parts]
            if vals[3] != 0:
                raise InputError("-m", f"utility.{given}: rankgate does not compute the d coefficient (non-relevant "
                                 "not retrieved needs the collection's size); give 0")
        elif root.name == "11pt_avg":
            if any(not 0 <= _finite(x) <= 1 for x in parts):
                raise ValueError
        elif root.name == "set_F":
            _finite(given)
        elif root.name == "rbp":
            for part in parts:
                key, eq, value = part.partition("=")
                if eq:
                    _finite(value)
        elif root.name == "relstring":
            atol(given)
        else:  # level=gain pairs
            for part in parts:
                level, eq, gain = part.partition("=")
                if not eq:
                    raise ValueError
                _finite(gain)
    except ValueError:
        raise InputError("-m", f"{root.name}.{given}: parameters not understood (see trec_eval -h -m "
                         f"{root.name})") from None


# ---- output ------------------------------------------------------------------------------------

def value_text(kind: str, value: float) -> str:
    if kind == LONG:
        return f"{int(value)}" if math.isfinite(value) else f"{value}"
    return f"{value:6.4f}"


def line(name: str, qid: str, text: str) -> str:
    return f"{name:<22}\t{qid}\t{text}"


def relstrings(p, length: int) -> list[str]:
    """trec_eval's relstring per query: the grades of the first N ranks, '-' unjudged, '.' pooled but
    unjudged (a grade below 0), '>' above 9."""
    from rankgate.core.engine import UNJUDGED

    out = [["-"] * int(min(length, n)) for n in p.num_ret.tolist()]  # a lean run holds only judged rows
    rows = np.flatnonzero(p.rank < length)
    for q, r, g in zip(p.qp[rows].tolist(), p.rank[rows].tolist(), p.grade[rows].tolist()):
        out[q][r] = "-" if g == UNJUDGED else "." if g < 0 else ">" if g > 9 else str(g)
    return ["".join(x) for x in out]


def format_lines(request: Request, scores, runid: str, *, per_query: bool, summary: bool,
                 num_rel_all: float | None = None, quiet: frozenset = frozenset()) -> list[str]:
    """trec_eval's lines: per query (grouped by query, in qid order), then the summary. `quiet`: query IDs
    whose per-query lines are left out (trec_eval 9 prints none for the queries -c adds)."""
    from rankgate.core.engine import summarise

    plan = request.measures()
    qids = [shown(q) for q in scores.qids]
    p = scores.prepared
    rels = {}
    for root, items in plan:
        if root.name == "relstring":
            given = request.params.get("relstring", "")
            rels[items[0][0]] = relstrings(p, atol(given) if given else 10)
    out: list[str] = []
    if per_query:
        cols = []
        for root, items in plan:
            if not root.per_query:
                continue
            for name, m in items:
                if m is None:
                    cols.append((name, [f"'{s}'" for s in rels[name]]))
                else:
                    cols.append((name, [value_text(root.kind, v) for v in scores.values[m].tolist()]))
        for i, q in enumerate(qids):
            if scores.qids[i] not in quiet:
                out.extend(line(name, q, vals[i]) for name, vals in cols)
    if summary:
        for root, items in plan:
            if not root.summary:
                continue
            for name, m in items:
                if root.name == "runid":
                    out.append(line(name, "all", shown(runid)))
                elif root.name == "num_q":
                    out.append(line(name, "all", str(len(qids))))
                else:
                    v = summarise(m, scores.values[m])
                    if root.name == "num_rel" and num_rel_all is not None:
                        v = num_rel_all
                    out.append(line(name, "all", value_text(root.kind, v)))
    return out

