"""The core model: qrels and runs as columnar arrays over interned IDs.

Query and document IDs are interned once into small integers (a `Catalog`),
so the engine works on int32/float64 arrays and never on per-line objects.
"""

from __future__ import annotations

from dataclasses import field
from rankgate.core.fastclass import dataclass  # the standard one, made when first used (import cost)
from typing import TYPE_CHECKING, Iterator

if TYPE_CHECKING:  # numpy is imported where it is used: `init --help` and the usage lines load none
    import numpy as np

from rankgate.core.errors import MAX_ID, LongId

# Grades a label may have. JSON numbers are exact to 2**53; int64's least value marks "unjudged" in the engine.
GRADE_MIN, GRADE_MAX = -(2**53), 2**53


def grade_problem(grade: int) -> str | None:
    """Why a whole-number grade cannot be stored, or None."""
    if GRADE_MIN <= grade <= GRADE_MAX:
        return None
    return f"grade {grade} is out of range (expected a whole number between -2**53 and 2**53)"


def unique(x) -> np.ndarray:
    """The sorted distinct values of a 1-D array: np.unique without options, by sorting (numpy 2.4's
    hashing np.unique is 5-30x slower on integer arrays of 10^5 values)."""
    import numpy as np
    s = np.sort(np.asarray(x))
    return s[np.r_[True, s[1:] != s[:-1]]] if len(s) else s


def distinct_codes(codes) -> np.ndarray:
    """`unique` of an array of codes (small non-negative integers), by counting them: linear, no sort (1M
    judgments' query codes: 4x faster)."""
    import numpy as np
    codes = np.asarray(codes)
    return np.flatnonzero(np.bincount(codes)) if len(codes) else np.zeros(0, np.int64)


class Interner:
    """Maps ID strings to dense integer codes and back."""

    __slots__ = ("_codes", "_names", "_lazy", "_order", "arrow")

    def __init__(self) -> None:
        self._codes: dict[str, int] | None = {}
        self._names: list[str] = []
        self._lazy = None  # the names as Arrow strings, not yet Python strings (`adopt`)
        self._order: np.ndarray | None = None
        self.arrow = None  # the first names as a pyarrow string array, when a fast reader had them so

    @property
    def names(self) -> list[str]:
        """Code -> name. An interner filled by `adopt` makes its Python strings when first asked (a
        score of 1M judged documents never asks: 0.1 s and 70 MB saved)."""
        if self._lazy is not None:  # (the names `extend_looked_up` added after the Arrow ones follow them)
            names = self._lazy.to_pylist()
            names.extend(self._names)
            self._names, self._lazy = names, None
        return self._names

    def adopt(self, arrow) -> np.ndarray:
        """A fresh interner takes a fast reader's distinct names (a pyarrow string array) as its codes
        0..n-1 (returned), keeping them as Arrow strings until `names` is asked for."""
        import numpy as np

        if self._names or self._lazy is not None:
            return self.extend(arrow.to_pylist())
        self._codes, self._lazy, self.arrow, self._order = None, arrow, arrow, None
        return np.arange(len(arrow), dtype=np.int32)

    @property
    def codes(self) -> dict[str, int]:
        """Name -> code. Built when first asked for: a fresh interner filled by `extend` with distinct
        names (a reader's dictionary) keeps only the list until then (700k judged documents: 0.3 s)."""
        if self._codes is None:
            self._codes = dict(zip(self.names, range(len(self.names))))
        return self._codes

    def __len__(self) -> int:
        return len(self._lazy) + len(self._names) if self._lazy is not None else len(self._names)

    def code(self, name: str) -> int:
        code = self.codes.get(name)
        if code is None:
            if len(name) > MAX_ID:
                raise LongId(name)
            code = self.codes[name] = len(self.names)
            self.names.append(name)
            self._order = None
        return code

    def get(self, name: str) -> int | None:
        return self.codes.get(name)

    def order(self) -> np.ndarray:
        """Rank of each code in byte-wise (strcmp) order of the names, as trec_eval sorts.

        numpy compares str arrays by code point, which is the order of their UTF-8 bytes.
        """
        import numpy as np
        if self._order is None or len(self._order) != len(self):
            perm = self._arrow_order()
            if perm is None:
                perm = self._numpy_order()
            order = np.empty(len(perm), dtype=np.int64)
            order[perm] = np.arange(len(perm))
            self._order = order
        return self._order

    def _numpy_order(self) -> np.ndarray:
        import numpy as np

        names = self.names
        longest = max(map(len, names), default=0)
        if names and 4 * longest * len(names) <= 512 << 20:  # a fixed-width array: 4 bytes a character
            return np.argsort(np.array(names, dtype=str), kind="stable")
        if names:  # long names (one is enough) would make that array huge: sort the strings themselves
            return np.array(sorted(range(len(names)), key=names.__getitem__), dtype=np.int64)
        return np.zeros(0, np.int64)

    def _arrow_order(self):
        """The names' sort permutation by pyarrow when a fast reader gave them as Arrow strings: their UTF-8
        bytes compared, the order numpy's code points give (names are distinct, so the same permutation),
        without a fixed-width copy of a million names. None when there is no Arrow copy."""
        if self.arrow is None or not len(self):
            return None
        import pyarrow as pa
        import pyarrow.compute as pc

        try:
            extra = _arrow_strings(self._after_arrow())
        except (pa.ArrowException, UnicodeError):  # a name that is not UTF-8 (surrogate-escaped bytes)
            return None
        return _int_values(pc.sort_indices(pa.chunked_array([self.arrow, extra], pa.string())))  # (indices < 2**63)

    def append_new(self, names: list[str]) -> None:
        """Names known to be distinct and new to the interner (a cache that knows them), appended in order:
        their codes follow the last. The name -> code dictionary, if not built yet, is left for when asked."""
        if self._codes is not None:
            start = len(self)
            self._codes.update(zip(names, range(start, start + len(names))))
        self.names.extend(names)
        self._order = None

    def order_changed(self) -> None:
        """Names were added to `codes` and `names` directly (a cache that knows them to be new)."""
        self._order = None

    def extend(self, names: list[str], distinct: bool = False) -> np.ndarray:
        """Codes of many names at once, interning the new ones (the readers' fast path). `distinct`:
        no name is there twice (a reader's dictionary); into a fresh interner, then, no dict is built."""
        import numpy as np
        if distinct and not len(self):
            self._codes = None
            self.names.extend(names)
            self._order = None
            return np.arange(len(names), dtype=np.int32)
        codes = self.codes
        new = [n for n in dict.fromkeys(names) if n not in codes]
        if new:
            if max(map(len, new)) > MAX_ID:  # each new name once: a few ms on a million documents
                raise LongId(next(n for n in new if len(n) > MAX_ID))
            start = len(self.names)
            codes.update(zip(new, range(start, start + len(new))))
            self.names.extend(new)
            self._order = None
        return np.fromiter(map(codes.__getitem__, names), np.int32, count=len(names))

    def names_of(self, codes) -> list[str]:
        """[names[c] for c in codes] (ints or an int array), without making a Python string of every name first
        when a fast reader gave them as Arrow strings (`adopt`): the gate names a few documents of a million."""
        lazy = self._lazy
        if lazy is None:
            names = self._names
            return [names[c] for c in (codes.tolist() if hasattr(codes, "tolist") else codes)]
        import numpy as np

        at = np.asarray(codes, dtype=np.int64).ravel()
        if not len(at):
            return []
        if int(at.min()) < 0:
            raise IndexError("a negative code")
        n = len(lazy)
        out = [None] * len(at)
        head = np.flatnonzero(at < n)
        if len(head):
            for i, name in zip(head.tolist(), lazy.take(_arrow_ints(at[head])).to_pylist()):
                out[i] = name
        after = self._names
        for i in np.flatnonzero(at >= n).tolist():
            out[i] = after[int(at[i]) - n]
        return out

    def name_at(self) -> "NameAt":
        """An indexable of the names (code -> name) that makes only those asked for (see names_of)."""
        return NameAt(self)

    def _after_arrow(self) -> list[str]:
        """The names after the Arrow ones (`arrow`): those `extend_looked_up` added."""
        return self._names if self._lazy is not None else self._names[len(self.arrow):]

    def extend_looked_up(self, names: list[str]) -> np.ndarray:
        """What `extend` gives, without building the name -> code dictionary of an interner a fast reader
        filled (`arrow` holds its first names) nor a Python string of those: the names looked up by
        pyarrow's hash among the Arrow ones and those added after them (by this, for an earlier run), the
        new ones added in order of first appearance (1M judged documents: 0.3 s and 100 MB saved for the
        gate's unjudged top rows; 1.5 CPU s more for the second run's)."""
        import numpy as np

        if self._codes is not None or self.arrow is None:
            return self.extend(names)
        import pyarrow.compute as pc

        try:
            arrow = _arrow_strings(names)
        except UnicodeError:  # a name that is not UTF-8 (surrogate-escaped bytes): the dictionary's way
            return self.extend(names)
        enc = pc.dictionary_encode(arrow)  # each name once, in order of first appearance
        distinct, at = enc.dictionary, _int_values(enc.indices)
        code = _looked_up(distinct, self.arrow)
        rest = np.flatnonzero(code < 0)
        tail = self._after_arrow()
        if len(rest) and tail:
            found = _looked_up(distinct.take(_arrow_ints(rest)), _arrow_strings(tail))
            code[rest] = np.where(found >= 0, found + len(self.arrow), -1)
            rest = rest[found < 0]
        if len(rest):
            code[rest] = np.arange(len(self), len(self) + len(rest))
            self._names.extend(distinct.take(_arrow_ints(rest)).to_pylist())
            self._order = None
        return code[at].astype(np.int32)


class NameAt:
    """Code -> name of an interner (`Interner.name_at`), each name made when asked for."""

    __slots__ = ("interner",)

    def __init__(self, interner: Interner):
        self.interner = interner

    def __getitem__(self, code: int) -> str:
        return self.interner.names_of([code])[0]

    def __len__(self) -> int:
        return len(self.interner)


def _looked_up(names, among) -> np.ndarray:
    """Where each of `names` is in `among` (-1: not there), two Arrow string arrays of distinct values, by
    hashing the shorter (a million judged documents hashed again for each run: 0.3 CPU s)."""
    import numpy as np
    import pyarrow.compute as pc

    if len(names) <= len(among):
        hit = _int_values(pc.index_in(among, value_set=names))
        out = np.full(len(names), -1, np.int64)
        where = np.flatnonzero(hit >= 0)
        out[hit[where]] = where
        return out
    return _int_values(pc.index_in(names, value_set=among))


def _arrow_strings(names: list[str]):
    """Python strings as an Arrow string array, with no pandas import (pa.array imports pandas when it is
    installed: 0.7 s). Raises UnicodeError on a string that is not UTF-8."""
    import numpy as np
    import pyarrow as pa

    data = "".join(names).encode()
    lengths = np.fromiter(map(len, names), np.int64, len(names))
    offsets = np.zeros(len(names) + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    if offsets[-1] != len(data):  # a name not all ASCII: its bytes counted one by one
        np.cumsum(np.fromiter((len(n.encode()) for n in names), np.int64, len(names)), out=offsets[1:])
    return pa.Array.from_buffers(pa.large_string(), len(names), [None, pa.py_buffer(offsets),
                                                                pa.py_buffer(data)]).cast(pa.string())


def _arrow_ints(a: np.ndarray):
    """An int64 numpy array as an Arrow one, with no pandas import (see _int_values)."""
    import numpy as np
    import pyarrow as pa

    a = np.ascontiguousarray(a, np.int64)
    return pa.Array.from_buffers(pa.int64(), len(a), [None, pa.py_buffer(a)])


def _int_values(arr) -> np.ndarray:
    """An Arrow integer array (or chunked one) as int64 numpy, -1 for null, with no pandas import
    (to_numpy and fill_null import pandas when it is installed: 0.7 s)."""
    import numpy as np
    import pyarrow as pa

    if isinstance(arr, pa.ChunkedArray):
        return np.concatenate([_int_values(c) for c in arr.chunks]) if arr.num_chunks else np.zeros(0, np.int64)
    span = slice(arr.offset, arr.offset + len(arr))
    values = np.frombuffer(arr.buffers()[1], np.dtype(f"int{arr.type.bit_width}"))[span].astype(np.int64)
    if arr.null_count:
        valid = np.unpackbits(np.frombuffer(arr.buffers()[0], np.uint8), bitorder="little")[span]
        values[valid == 0] = -1
    return values


class Catalog:
    """The query and document interners shared by a set of qrels and runs. A reader may leave the documents
    to be interned when first asked for (`docs_later`): `rankgate score` never asks (trec_fast)."""

    __slots__ = ("queries", "_docs", "_fill")

    def __init__(self) -> None:
        self.queries = Interner()
        self._docs = Interner()
        self._fill = None

    @property
    def docs(self) -> Interner:
        fill = self._fill
        if fill is not None:  # (a fill may be called twice, from two threads: it interns once)
            fill(self._docs)
            self._fill = None
        return self._docs

    @docs.setter
    def docs(self, interner: Interner) -> None:
        self._docs, self._fill = interner, None

    def docs_later(self, fill) -> None:
        """`fill(interner)` interns the documents into the (empty) interner when `docs` is first asked for."""
        self._fill = fill


class Later:
    """A base for classes whose fields may be made when first read (`later`): what a reader knows how to
    make, but a command may never need (the qrels' document codes, in `score`)."""

    __slots__ = ()

    def __getattr__(self, name: str):  # (only reached when the field is not made yet)
        entry = (self.__dict__.get("_later") or {}).get(name)
        if entry is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        value = self.__dict__[name] = entry.make()
        entry.value = value
        return value


class _Maker:
    __slots__ = ("make", "value")

    def __init__(self, make) -> None:
        self.make, self.value = make, None


def later(obj: Later, name: str, make) -> None:
    """obj's field `name` is `make()`, made when first read."""
    obj.__dict__.pop(name, None)
    obj.__dict__["_later"] = {**(obj.__dict__.get("_later") or {}), name: _Maker(make)}


def field_token(obj, name: str):
    """Something that stays the same object while obj's field `name` is unchanged, whether that field is
    made yet or not (the field itself when it was never given to `later`); reading it makes nothing."""
    d = obj.__dict__
    entry = (d.get("_later") or {}).get(name)
    if entry is not None and (name not in d or d[name] is entry.value):
        return entry
    return d.get(name)


def is_later(obj, name: str) -> bool:
    """obj's field `name` is still to be made (`later`)."""
    return name not in obj.__dict__ and name in (obj.__dict__.get("_later") or {})


@dataclass(frozen=True)
class JudgmentDetail:
    """What a reviewer wrote beside a grade (present when the file carries it)."""

    reason: str = ""
    collection_version: str = ""
    reviewer: str = ""


@dataclass
class Qrels(Later):
    """Relevance judgments: one row per (query, document) with an integer grade."""

    path: str
    catalog: Catalog
    q: np.ndarray  # int32 query codes
    doc: np.ndarray  # int32 document codes
    grade: np.ndarray  # int64 grades (negative = judged not relevant)
    query_codes: list[int]  # every declared query, in file order (may have no rows)
    format: str = "trec"
    details: dict[tuple[str, str], JudgmentDetail] = field(default_factory=dict)
    problems: list = field(default_factory=list)  # soft problems found while reading
    meta: dict = field(default_factory=dict)  # header fields, e.g. collection_version

    def __len__(self) -> int:
        return len(self.q)

    @property
    def query_ids(self) -> list[str]:
        names = self.catalog.queries.names
        return [names[c] for c in self.query_codes]

    def grades_for(self, qid: str) -> dict[str, int]:
        code = self.catalog.queries.get(qid)
        if code is None:
            return {}
        mask = self.q == code
        names = self.catalog.docs.names
        return {names[d]: int(g) for d, g in zip(self.doc[mask], self.grade[mask])}

    def as_dict(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {qid: {} for qid in self.query_ids}
        qn, dn = self.catalog.queries.names, self.catalog.docs.names
        for q, d, g in zip(self.q.tolist(), self.doc.tolist(), self.grade.tolist()):
            out[qn[q]][dn[d]] = g
        return out

    def judgments(self) -> Iterator[tuple[str, str, int, JudgmentDetail]]:
        qn, dn = self.catalog.queries.names, self.catalog.docs.names
        empty = JudgmentDetail()
        for q, d, g in zip(self.q.tolist(), self.doc.tolist(), self.grade.tolist()):
            yield qn[q], dn[d], g, self.details.get((qn[q], dn[d]), empty)


@dataclass
class Run:
    """One retriever's ranked output: rows of (query, document, score)."""

    name: str
    path: str
    catalog: Catalog
    q: np.ndarray  # int32 query codes
    doc: np.ndarray  # int32 document codes
    score: np.ndarray  # float64; list-ordered formats get descending synthetic scores
    where: np.ndarray  # int64: source line (text formats) or list position (JSON)
    format: str = "trec"
    meta: dict = field(default_factory=dict)
    latency_ms: dict[str, float] = field(default_factory=dict)
    context_tokens: dict[str, float] = field(default_factory=dict)
    query_codes: list[int] = field(default_factory=list)  # queries present, even with empty rankings

    def __len__(self) -> int:
        return len(self.q)

    @property
    def query_ids(self) -> list[str]:
        names = self.catalog.queries.names
        return [names[c] for c in self.query_codes]

    def ranking(self, qid: str) -> list[str]:
        """The documents for one query in trec_eval order (score desc, doc id desc)."""
        import numpy as np
        code = self.catalog.queries.get(qid)
        if code is None:
            return []
        idx = np.flatnonzero(self.q == code)
        order = self.catalog.docs.order()
        docs = self.doc[idx]
        perm = np.lexsort((-order[docs], -self.score[idx]))
        names = self.catalog.docs.names
        return [names[d] for d in docs[perm]]

    def rankings(self) -> dict[str, list[str]]:
        """Every query's ranking, trec_eval order. For small runs and views."""
        q, doc, _ = sort_run(self)
        qn, dn = self.catalog.queries.names, self.catalog.docs.names
        out: dict[str, list[str]] = {qn[c]: [] for c in self.query_codes}
        for qc, dc in zip(q.tolist(), doc.tolist()):
            out[qn[qc]].append(dn[dc])
        return out


def _in_order(qp: np.ndarray, score: np.ndarray, docorder: np.ndarray) -> bool:
    """True when each query's rows are one contiguous block already in trec_eval order."""
    import numpy as np
    n = len(qp)
    if n < 2:
        return True
    same = qp[1:] == qp[:-1]
    if int(np.count_nonzero(~same)) + 1 != len(unique(qp)):
        return False
    ds = score[1:] - score[:-1]
    bad = same & ((ds > 0) | ((ds == 0) & (docorder[1:] >= docorder[:-1])))
    return not bool(bad.any())


def sort_run(run: Run, qp: np.ndarray | None = None):
    """Rows of the run in trec_eval order: returns (query key, doc, score) sorted arrays.

    `qp` is an alternative per-row query key (e.g. the evaluated-query position).
    """
    import numpy as np
    key = run.q if qp is None else qp
    docorder = run.catalog.docs.order()[run.doc] if len(run.doc) else np.zeros(0, np.int64)
    if _in_order(key, run.score, docorder):
        return key, run.doc, run.score
    perm = np.lexsort((-docorder, -run.score, key))
    return key[perm], run.doc[perm], run.score[perm]


@dataclass
class LeanRun(Later):
    """A TREC run read by the fast reader (core/formats/trec_fast.py), with what the measures need
    and nothing more: per query, how many documents it ranks; per judged row, its query, document
    and rank in trec_eval order; with `keep_top`, the top rows nobody judged. A `Run` keeps every
    row; the engine, validation and the gate take either (`isinstance(run, LeanRun)` tells them apart)."""

    name: str
    path: str
    qnames: list[str]  # every query the file ranks documents for, in order of first line
    num_ret: np.ndarray  # per query in qnames: lines
    jq: np.ndarray  # per judged row: index into qnames
    jdoc: np.ndarray  # per judged row: the qrels catalog's document code
    jrank: np.ndarray  # per judged row: 0-based rank within its query, trec_eval order
    duplicates: list[tuple[int, str, str]]  # (line, query, document), the first trec_fast.MAX_LISTED
    n_duplicates: int
    lines: int
    top_q: np.ndarray = None  # the top `keep_top` rows of each ranking not among the judged rows: query index,
    top_docs: list[str] = field(default_factory=list)  # document ID
    top_rank: np.ndarray = None  # and rank
    keep_top: int = 0
    watched: bool = False  # watch_top_k looked the review queue's documents up: keep every row it has
    jentry: np.ndarray = None  # per judged row: its row of the qrels it was read against, when read by pair
    entries_of: tuple = None  # and each pair is judged once (its grade is qrels.grade[jentry]): (qrels, its q, its doc)
    format: str = "trec"
    meta: dict = field(default_factory=dict)
    latency_ms: dict = field(default_factory=dict)
    context_tokens: dict = field(default_factory=dict)

    @property
    def query_ids(self) -> list[str]:
        return list(self.qnames)

    @property
    def query_codes(self) -> range:
        return range(len(self.qnames))


@dataclass(frozen=True)
class Query:
    """A query as the benchmark describes it."""

    id: str
    text: str = ""
    notes: str = ""
    tags: tuple[str, ...] = ()
    must_pass: bool = False
    held_out: bool = False
    weight: float = 1.0
    no_answer: bool = False
