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

from typing import TYPE_CHECKING

from rankgate.core.errors import InputError
from rankgate.core.text import visible
from rankgate.core.trec_eval_kernel import atof, atol  # noqa: F401 (C's number parsing lives with the measures)

if TYPE_CHECKING:  # numpy, the model and the measures are imported where used: trec_eval 10's path needs none
    import numpy as np

    from rankgate.core.measures import Measure
    from rankgate.core.model import Catalog, Qrels, Run

GRADE_LIMIT = 2 ** 53  # core/model.py's GRADE_MAX (and -GRADE_MIN), checked here without importing numpy

# ---- reading ----------------------------------------------------------------------------------

def _read_bytes(path: str, notes: list[str] | None = None) -> str:
    """The file as trec_eval reads it (infile.read_whole_latin1: gzip bounded, BOM dropped, CR-only line ends
    made LF); a NUL byte is read as trec_eval reads it, and said once in `notes`."""
    from rankgate.core.infile import read_whole_latin1

    text = read_whole_latin1(path)
    if notes is not None and "\x00" in text:
        at = text.index("\x00")
        notes.append(f"warning: {visible(path)}: {text.count(chr(0))} NUL byte(s) (first at line "
                     f"{text.count(chr(10), 0, at) + 1}); read as part of the text, as trec_eval reads them")
    return text


def _no_long_ids(path: str, qs: list[str], ds: list[str], where) -> None:
    """An ID longer than MAX_ID is refused with its file and line (docs/formats.md, Limits)."""
    from rankgate.core.errors import MAX_ID, LongId

    for column in (qs, ds):
        if column and max(map(len, column)) > MAX_ID:
            i = next(i for i, name in enumerate(column) if len(name) > MAX_ID)
            raise LongId(column[i], path, where[i] if where else i + 1)


def _splitter(text: str):
    if any(c in text for c in "\x1c\x1d\x1e\x1f\x85\xa0"):  # str.split() splits there, C's isspace does not
        return lambda line: [t.decode("latin-1") for t in line.encode("latin-1").split()]
    return str.split


def _qrels_columns(path: str, notes: list[str]):
    """The qrels' query, document and grade columns and each row's line, and whether the file is ASCII."""
    text = _read_bytes(path, notes)
    split = _splitter(text)
    fast = _regular_columns(text, 4, (0, 2, 3), (1,), int) if split is str.split else None
    if fast is not None:
        (qs, ds, raw), _ = fast
        where = None
    else:
        qs, ds, raw, where = [], [], [], []
        for lineno, line in enumerate(text.split("\n"), 1):
            if line.startswith("#"):
                continue
            parts = split(line)
            if not parts:
                continue
            if len(parts) != 4:
                from rankgate.core.formats.trec import qrels_line_hint

                raise InputError(path, f"{len(parts)} fields, expected 4: query iteration document grade (as "
                                 "trec_eval reads qrels)" + qrels_line_hint(parts).replace("the qrels and the run",
                                                                                       "QRELS and RUN"), line=lineno)
            qs.append(parts[0])
            ds.append(parts[2])
            raw.append(parts[3])
            where.append(lineno)
    if not qs:
        raise InputError(path, "no judgments (trec_eval cannot read an empty qrels file)")
    try:
        gs = raw if fast is not None else list(map(int, raw))
    except ValueError:
        gs = None
    # Python reads 1_0 as 10, C's atol as 1 (the regular columns' grades are ints already, read without one)
    if gs is None or (fast is None and "_" in text and any("_" in g for g in raw)):
        gs, odd = [], []
        for i, g in enumerate(raw):
            try:
                if "_" in g:
                    raise ValueError
                gs.append(int(g))
            except ValueError:
                gs.append(atol(g))
                odd.append((where[i] if where else i + 1, g))
        if odd:
            line, g = odd[0]
            notes.append(f"warning: {visible(path)}: {len(odd)} grade(s) are not whole numbers (first at line "
                         f"{line}: {_shown(g)}); read as trec_eval reads them, by their leading digits")
    if min(gs) < -GRADE_LIMIT or max(gs) > GRADE_LIMIT:  # trec_eval's atol would overflow: said, not guessed
        from rankgate.core.model import grade_problem

        i = next(i for i, g in enumerate(gs) if grade_problem(g))
        raise InputError(path, grade_problem(gs[i]), line=where[i] if where else i + 1)
    _no_long_ids(path, qs, ds, where)
    return qs, ds, gs, where, text.isascii()


def read_qrels(path: str, catalog: Catalog, notes: list[str]) -> Qrels:
    """The qrels; `meta["ascii"]` tells whether every byte of the file is ASCII."""
    import numpy as np

    from rankgate.core.model import Qrels
    qs, ds, gs, where, ascii_ = _qrels_columns(path, notes)
    q = catalog.queries.extend(qs)
    d = catalog.docs.extend(ds)
    grade = np.array(gs, np.int64)
    lines = np.array(where, np.int64) if where is not None else np.arange(1, len(qs) + 1, dtype=np.int64)
    _no_duplicates(path, q, d, lines, catalog, "judged twice")
    codes = list(dict.fromkeys(q.tolist()))
    return Qrels(path, catalog, q, d, grade, codes, format="trec", meta={"ascii": ascii_})


def _run_columns(path: str, notes: list[str], as_list: bool = False):
    """The run's query and document columns, its scores (C's atof), each row's line (None: row i is
    line i + 1) and its runid (the tag of its last line)."""
    text = _read_bytes(path, notes)
    split = _splitter(text)
    fast = _regular_columns(text, 6, (0, 2, 4), (1, 5), float if as_list else None) if split is str.split else None
    if fast is not None:
        (qs, ds, ss), last = fast
        runid = last[5]
        where = None
        if as_list:
            _note_not_finite_list(ss, where, ss, path, notes)
            return qs, ds, ss, where, runid
    else:
        qs, ds, ss, where = [], [], [], []
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
            ss.append(parts[4])
            where.append(lineno)
            runid = parts[5]
    if not qs:
        raise InputError(path, "no ranked documents (trec_eval cannot read an empty run)")
    _no_long_ids(path, qs, ds, where)
    plain = "_" not in "".join(ss)  # Python's float reads 1_0 as 10, C's atof as 1
    if as_list and plain:
        try:
            floats = list(map(float, ss))
        except ValueError:
            pass
        else:
            _note_not_finite_list(floats, where, ss, path, notes)
            return qs, ds, floats, where, runid
    import numpy as np

    lines = np.arange(1, len(qs) + 1, dtype=np.int64) if where is None else np.array(where, np.int64)
    scores = _scores(ss, lines, path, notes, not plain)
    return qs, ds, scores.tolist() if as_list else scores, where, runid


def read_run(path: str, catalog: Catalog, notes: list[str]) -> tuple[Run, str]:
    """The run and its runid (the tag of its last line)."""
    import numpy as np

    from rankgate.core.model import Run
    qs, ds, scores, where, runid = _run_columns(path, notes)
    lines = np.arange(1, len(qs) + 1, dtype=np.int64) if where is None else np.array(where, np.int64)
    q = catalog.queries.extend(qs)
    d = catalog.docs.extend(ds)
    _no_duplicates(path, q, d, lines, catalog, "ranked twice for the same query")
    codes = list(dict.fromkeys(q.tolist()))
    return Run(runid, path, catalog, q, d, scores, lines, format="trec", query_codes=codes), runid


CHUNK = 1 << 18  # characters split at a time: a chunk's unused fields are freed before the next is split


def _regular_columns(text: str, width: int, keep: tuple[int, ...], constant: tuple[int, ...], convert=None):
    """Every line `width` fields, no blank line and no comment (the common, large case): the columns
    `keep`, the last of them through `convert` when given, and the last line's fields; else None (then
    the caller reads line by line). Split a chunk of lines at a time, which keeps the peak memory and
    the page faults of a large file down. A short line next to a long one would shift the columns: the
    `constant` columns (a run's iteration and tag) must hold one value throughout."""
    if "#" in text:
        return None
    cols: list[list] = [[] for _ in keep]
    seen: dict[int, str] = {}
    start = 0
    toks: list[str] = []
    while start < len(text):
        end = text.find("\n", start + CHUNK)
        end = len(text) if end < 0 else end + 1
        chunk = text[start:end]
        toks = chunk.split()
        n = len(toks) // width
        if not n or len(toks) != width * n or chunk.count("\n") + (not chunk.endswith("\n")) != n:
            return None
        for c in constant:
            col = toks[c::width]
            if col.count(seen.setdefault(c, col[0])) != n:
                return None
        for out, c in zip(cols, keep):
            out.extend(toks[c::width])
        if convert is not None:
            raw = cols[-1][-n:]
            if "_" in "".join(raw):  # Python's int and float read 1_0 as 10, C's atol and atof as 1
                return None
            try:
                cols[-1][-n:] = map(convert, raw)
            except ValueError:
                return None
        start = end
    if not cols[0]:
        return None
    return cols, toks[-width:]


def _scores(raw: list[str], where: np.ndarray, path: str, notes: list[str], underscores: bool = True) -> np.ndarray:
    import numpy as np

    try:
        out = np.fromiter(map(float, raw), np.float64, count=len(raw))
        if not underscores or not any("_" in t for t in raw):  # Python reads 1_0 as 10, C's atof as 1
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


def _note_not_finite_list(values: list[float], where, raw: list, path: str, notes: list[str]) -> None:
    """_note_not_finite for the plain-Python path: one pass at C speed when every score is finite."""
    if all(map(math.isfinite, values)):
        return
    bad = [i for i, v in enumerate(values) if not math.isfinite(v)]
    i = bad[0]
    notes.append(f"warning: {visible(path)}: {len(bad)} score(s) are NaN or infinite (first at line "
                 f"{where[i] if where else i + 1}: {_shown(str(raw[i]))}); ranked as trec_eval ranks them")


def _note_not_finite(out, where, raw: list[str], path: str, notes: list[str]) -> None:
    """NaN and infinite scores rank as trec_eval ranks them; said once, with the first line."""
    import numpy as np

    bad = np.flatnonzero(~np.isfinite(out))
    if len(bad):
        i = int(bad[0])
        notes.append(f"warning: {visible(path)}: {len(bad)} score(s) are NaN or infinite (first at line "
                     f"{int(where[i])}: {_shown(raw[i])}); ranked as trec_eval ranks them")


def _no_duplicates(path, q, d, where, catalog, what) -> None:
    import numpy as np

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

    def names(self) -> dict[str, list[str]]:
        """Per root: the names of the values it prints."""
        return {name: [n for n, _ in _expand(ROOTS[name], self.params.get(name, ""), build=False)]
                for name in self.roots}


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
            _expand(root, given, build=False)  # refuse bad parameters now, naming them
            params.setdefault(name, given)  # as trec_eval: the first parameters given win
        marked.add(name)
    return Request([r.name for r in TABLE if r.name in marked], params)


def _expand(root: Root, given: str, build: bool = True) -> list[tuple[str, Measure | None]]:
    """(printed name, engine measure) of each value a root prints; build=False: the names alone (no
    measure made, so core/measures.py is not imported)."""
    if build:
        from rankgate.core.measures import Measure
    else:
        def Measure(*_args):  # noqa: N802 (stands in for the class)
            return None

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
    if value != value:  # C's printf says the sign of a nan (0/0 makes a negative one)
        return f"{'-nan' if math.copysign(1.0, value) < 0 else 'nan':>6}"
    return f"{value:6.4f}"


def line(name: str, qid: str, text: str) -> str:
    return f"{name:<22}\t{qid}\t{text}"


def relstrings(p, length: int) -> list[str]:
    """trec_eval's relstring per query: the grades of the first N ranks, '-' unjudged, '.' pooled but
    unjudged (a grade below 0), '>' above 9."""
    import numpy as np

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



# ---- trec_eval 10, query by query (core/trec_eval_kernel.py) ------------------------------------------

STAND_IN = "ceci_nest_pas_un_docno"  # the one unjudged document trec_eval -c ranks for a query the run lacks


def _blocks(qs: list[str]) -> dict[str, list[tuple[int, int]]]:
    """Each query's runs of consecutive rows. A file usually holds one run per query: each run's end is
    found by galloping and checked with one C-speed count (no per-row Python step); where the check
    fails, the rows are walked one by one."""
    out: dict[str, list[tuple[int, int]]] = {}
    a, n = 0, len(qs)
    while a < n:
        q = qs[a]
        lo, step = a, 1  # qs[lo] == q; find the first row after it that differs
        while lo + step < n and qs[lo + step] == q:
            lo += step
            step *= 2
        hi = min(lo + step, n)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if qs[mid] == q:
                lo = mid
            else:
                hi = mid
        if qs[a:hi].count(q) != hi - a:  # the gallop jumped over another query's rows
            return _walk_blocks(qs)
        out.setdefault(q, []).append((a, hi))
        a = hi
    return out


def _walk_blocks(qs: list[str]) -> dict[str, list[tuple[int, int]]]:
    from itertools import groupby

    out: dict[str, list[tuple[int, int]]] = {}
    a = 0
    for qid, rows in groupby(qs):
        b = a + len(list(rows))
        out.setdefault(qid, []).append((a, b))
        a = b
    return out


def _rows(blocks, column: list) -> list:
    return column[blocks[0][0]:blocks[0][1]] if len(blocks) == 1 else [x for a, b in blocks for x in column[a:b]]


def _duplicate(path, qid, blocks, ds, where, what) -> InputError:
    seen = set()
    for a, b in blocks:
        for i in range(a, b):
            if ds[i] in seen:
                return InputError(path, f"document {_shown(ds[i])} is {what} (query {_shown(qid)}); trec_eval "
                                  "stops here too", line=where[i] if where else i + 1)
            seen.add(ds[i])
    raise AssertionError("no duplicate found")


def judged_by_query(path: str, notes: list[str]):
    """Per query ID: (document -> grade, a grade below 0 read as trec_eval's -2, 'pooled but unjudged';
    how many documents are judged at each grade 0, 1, ...); and how many judgments are graded above 0."""
    qs, ds, gs, where, _ = _qrels_columns(path, notes)
    out = {}
    positive = 0
    for qid, blocks in _blocks(qs).items():
        docs, grades = _rows(blocks, ds), _rows(blocks, gs)
        judged = dict(zip(docs, grades))
        if len(judged) != len(docs):
            raise _duplicate(path, qid, blocks, ds, where, "judged twice")
        top = max(grades)
        levels = [grades.count(g) for g in range(top + 1)] if top < 64 else _count(grades, top)
        if min(grades) < 0:
            judged = {d: (g if g >= 0 else -2) for d, g in judged.items()}
        positive += sum(levels[1:])
        out[qid] = (judged, levels)
    return out, positive


def _count(grades: list[int], top: int) -> list[int]:
    levels = [0] * (top + 1)
    for g in grades:
        if g >= 0:
            levels[g] += 1
    return levels


def ranked_by_query(path: str, notes: list[str], judged):
    """Per query of the qrels that the run ranks: its grades in trec_eval's ranking order (score
    descending, then document ID descending as bytes; -1 for a document outside the qrels); the run's
    runid; and every query ID it ranks. A large plain run goes through the compiled reader."""
    from operator import gt

    large = _ranked_large(path, judged)
    if large is not None:
        return large
    qs, ds, scores, where, runid = _run_columns(path, notes, as_list=True)
    out = {}
    blocks_of = _blocks(qs)
    for qid, blocks in blocks_of.items():
        if qid not in judged:
            continue
        docs = _rows(blocks, ds)
        if len(set(docs)) != len(docs):
            raise _duplicate(path, qid, blocks, ds, where, "ranked twice for the same query")
        sc = _rows(blocks, scores)
        if not all(map(gt, sc, sc[1:])):  # scores not strictly falling (ties, or not in rank order): sort
            docs = [d for _, d in sorted(zip(sc, docs), reverse=True)]
        out[qid] = list(map(judged[qid][0].get, docs, [-1] * len(docs)))
    return out, runid, set(blocks_of)


LARGE = 16 << 20  # runs from this size are read by trec_fast (pyarrow: only the judged rows kept)


def _ranked_large(path: str, judged):
    """ranked_by_query's answer through core/formats/trec_fast.py for a large, plain run (its reading
    in Python would take seconds and gigabytes); None when that reader does not apply (a smaller,
    gzipped or odd file, no pyarrow, RANKGATE_FAST=0, qrels IDs that are not ASCII)."""
    import os

    try:
        size = os.path.getsize(path)
        if size < LARGE or os.environ.get("RANKGATE_FAST", "1") == "0":
            return None
        if not all(q.isascii() and all(d.isascii() for d in grades) for q, (grades, _) in judged.items()):
            return None
        with open(path, "rb") as f:
            if f.read(2) == b"\x1f\x8b":
                return None
            f.seek(max(size - 65536, 0))
            tail = f.read().split(b"\n")
    except OSError:
        return None
    last = next((ln.split() for ln in reversed(tail) if ln.strip()), [])
    from rankgate.core.formats import trec_fast

    if len(last) != 6 or not trec_fast.available():
        return None
    qrels = _catalog_qrels(judged)
    run = trec_fast.read_lean_run(path, path, qrels)
    if run is None:
        return None
    if run.n_duplicates:
        line, q, d = run.duplicates[0]
        raise InputError(path, f"document {_shown(d)} is ranked twice for the same query (query {_shown(q)}); "
                         "trec_eval stops here too", line=line)
    out = {q: [-1] * n for q, n in zip(run.qnames, run.num_ret.tolist()) if q in judged}
    names = qrels.catalog.docs.names
    for qi, doc, rank in zip(run.jq.tolist(), run.jdoc.tolist(), run.jrank.tolist()):
        qid = run.qnames[qi]
        if qid in out:
            grade = judged[qid][0].get(names[doc])
            if grade is not None:
                out[qid][rank] = grade
    return out, last[5].decode("latin-1"), set(run.qnames)


def _catalog_qrels(judged):
    """The judgments as the engine's Qrels (what trec_fast looks documents up in)."""
    import numpy as np

    from rankgate.core.model import Catalog, Qrels

    catalog = Catalog()
    qs = [q for q, (grades, _) in judged.items() for _ in grades]
    ds = [d for grades, _ in judged.values() for d in grades]
    gs = [g for grades, _ in judged.values() for g in grades.values()]
    q, d = catalog.queries.extend(qs), catalog.docs.extend(ds)
    return Qrels("qrels", catalog, q, d, np.array(gs, np.int64), list(dict.fromkeys(q.tolist())), format="trec")


def evaluate_by_query(judged, ranked, request: Request, *, level: int = 1, complete: bool = False,
                      depth: int | None = None, judged_only: bool = False):
    """trec_eval 10's evaluation: the queries scored (qrels queries in byte order: those the run ranks,
    and with -c the rest, each ranking trec_eval's one stand-in document) and, per query, the values
    of each root of the request (core/trec_eval_kernel.py)."""
    from rankgate.core import trec_eval_kernel as kernel

    plan = [(name, kernel.parse_params(name, request.params.get(name, ""))) for name in request.roots
            if name not in ("runid", "num_q")]
    qids, rows = [], []
    for qid in sorted(judged):
        grades, levels = judged[qid]
        rl = ranked.get(qid)
        added = rl is None
        if added:
            if not complete:
                continue
            rl = [grades.get(STAND_IN, -1)]
        if depth is not None:
            rl = rl[:depth]
        if judged_only:
            rl = [r for r in rl if r >= 0]
        qids.append(qid)
        rows.append(kernel.evaluate_query(rl, levels, plan, level, added))
    return qids, plan, rows


def lines_by_query(request: Request, qids, plan, rows, runid: str, *, per_query: bool, summary: bool,
                   num_rel_all: float | None = None) -> list[str]:
    """trec_eval's lines: per query (in the order scored), then the summary: each mean summed query by
    query in that order, then divided once; gm_ measures exp(mean of logs); num_ counts summed."""
    names = request.names()
    out: list[str] = []
    if per_query:
        shown_cols = []  # per printed value: (root index, value index, name column, kind)
        for i, (name, _) in enumerate(plan):
            root = ROOTS[name]
            if root.per_query:
                shown_cols += [(i, j, f"{printed:<22}", root.kind) for j, printed in enumerate(names[name])]
        for qid, row in zip(qids, rows):
            tail = f"\t{shown(qid)}\t"
            for i, j, head, kind in shown_cols:
                v = row[i][j]
                if kind == FLOAT and v == v:
                    out.append(f"{head}{tail}{v:6.4f}")
                else:
                    out.append(f"{head}{tail}" + (f"'{v}'" if kind == TEXT else value_text(kind, v)))
    if not summary:
        return out
    nq = len(qids)
    at = {name: i for i, (name, _) in enumerate(plan)}
    for name in request.roots:
        root = ROOTS[name]
        if name == "runid":
            out.append(line("runid", "all", shown(runid)))
            continue
        if name == "num_q":
            out.append(line("num_q", "all", str(nq)))
            continue
        if not root.summary:
            continue
        i = at[name]
        for j, printed in enumerate(names[name]):
            total = 0.0
            for row in rows:
                total += row[i][j]
            if root.kind == LONG:
                v = num_rel_all if name == "num_rel" and num_rel_all is not None else total
            elif name in ("gm_map", "gm_bpref"):
                v = math.exp(total / nq)
            else:
                v = total / nq
            out.append(line(printed, "all", value_text(root.kind, v)))
    return out
