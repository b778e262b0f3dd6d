"""Who may see what: the asking user's groups per query, each restricted document's allowed groups.

    queries.jsonl   {"id": "q-leaked-key", "text": ..., "groups": ["oncall", "security"]}
    acl.jsonl       {"doc": "sec-runbook-01", "groups": ["security"]}     (or TSV: doc<TAB>group,group)
    corpus.jsonl    {"id": "sec-runbook-01", "text": ..., "acl": ["security"]}   (with `acl = "corpus"`)

The ACL lists the restricted documents; a document it does not list is public,
and the report says how many are restricted. With an ACL every query must say
who asks (`"groups": []` for a user in no group); a query with groups and no
ACL is an error. Nothing is silently taken as public or private.

A retrieved document outside the query's groups is a leak (`leaks`). Measures
are computed on what the user may see (`visible_qrels`, `visible_run`): a
restricted document leaves the query's relevant set and its ranking, and the
documents below it move up. docs/policy.md says why.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from rankgate.core.errors import InputError
from rankgate.core.formats.corpus import json_line
from rankgate.core.formats.textio import ASCII_SPACE, numbered_lines, read_text, shorten
from rankgate.core.model import Qrels, Run, sort_run

FROM_CORPUS = "corpus"  # `acl = "corpus"`: the corpus's `acl` fields are the ACL


@dataclass
class Access:
    """The ACL (restricted document -> groups allowed) and each query's asking user's groups."""

    acl: dict[str, frozenset[str]]
    groups: dict[str, frozenset[str]]
    source: str = ""  # the ACL file (or the corpus)
    lines: dict[str, int] = field(default_factory=dict)  # document -> its line in the ACL file
    queries_source: str = ""

    def may_see(self, qid: str, doc: str) -> bool:
        allowed = self.acl.get(doc)
        return allowed is None or bool(allowed & self.groups.get(qid, frozenset()))

    def summary(self) -> dict:
        return {"acl": self.source, "restricted_documents": len(self.acl),
                "groups": sorted(set().union(*self.acl.values(), *self.groups.values()))}


# ---- reading ------------------------------------------------------------------------------------

def _groups(value, path: str, line: int, what: str) -> frozenset[str]:
    if not isinstance(value, list) or not all(isinstance(g, str) and g.strip() for g in value):
        raise InputError(path, f"{what} must be a list of group names, e.g. [\"security\"]", line=line)
    return frozenset(g.strip() for g in value)


def read_acl(path: str | Path) -> tuple[dict[str, frozenset[str]], dict[str, int]]:
    """An ACL file: JSONL {"doc": ID, "groups": [...]} or TSV doc<TAB>group,group; each document once."""
    path = str(path)
    acl: dict[str, frozenset[str]] = {}
    lines: dict[str, int] = {}
    for lineno, raw in numbered_lines(read_text(path)):
        text = raw.strip(ASCII_SPACE)
        if not text or text.startswith("#"):
            continue
        if text.startswith("{"):
            obj = json_line(path, text, lineno, strict=False)
            doc = obj.get("doc", obj.get("docid", obj.get("id")))
            if not isinstance(doc, str) or not doc:
                raise InputError(path, "expected {\"doc\": ID, \"groups\": [...]}", line=lineno)
            if "groups" not in obj:
                raise InputError(path, f"document {shorten(doc)} names no 'groups' (a list; [] for nobody)",
                                 line=lineno)
            groups = _groups(obj["groups"], path, lineno, "field 'groups'")
        else:
            doc, sep, rest = raw.partition("\t")
            doc = doc.strip(ASCII_SPACE)
            if not sep or not doc:
                raise InputError(path, "expected 'doc<TAB>group,group' or {\"doc\": ID, \"groups\": [...]}",
                                 line=lineno)
            groups = frozenset(g.strip() for g in rest.split(",") if g.strip())
            if not groups:  # not silently "nobody": a JSONL line says that with "groups": []
                raise InputError(path, f"document {shorten(doc)} names no groups after the tab (expected "
                                 "'doc<TAB>group,group'; for a document nobody may see, write "
                                 "{\"doc\": ID, \"groups\": []})", line=lineno)
        if doc in acl:
            raise InputError(path, f"document {shorten(doc)} appears twice (first at line {lines[doc]})", line=lineno)
        acl[doc], lines[doc] = groups, lineno
    if not acl:  # an empty ACL would make every document public: a leak would pass the permission check
        raise InputError(path, "lists no document (empty, or comments only): an ACL names each restricted "
                         "document, one per line ({\"doc\": ID, \"groups\": [...]} or doc<TAB>group,group); "
                         "without an ACL, remove `acl` from benchmark.toml (or --acl)")
    return acl, lines


def read_corpus_acl(path: str | Path) -> tuple[dict[str, frozenset[str]], dict[str, int]]:
    """The `acl` fields of a JSONL corpus (a document without one is public)."""
    from rankgate.core.formats.corpus import DOC_ID_KEYS

    path = str(path)
    acl: dict[str, frozenset[str]] = {}
    lines: dict[str, int] = {}
    for lineno, raw in numbered_lines(read_text(path)):
        if '"acl"' not in raw:
            continue
        obj = json_line(path, raw, lineno, strict=False)
        if "acl" not in obj:
            continue
        doc = next((obj[k] for k in DOC_ID_KEYS if isinstance(obj.get(k), str)), None)
        if not doc:
            raise InputError(path, "a document with 'acl' needs an ID ('docid', '_id' or 'id')", line=lineno)
        acl[doc], lines[doc] = _groups(obj["acl"], path, lineno, "field 'acl'"), lineno
    if not acl:  # acl = "corpus" with no `acl` field anywhere would make every document public
        raise InputError(path, "no document has an 'acl' field, and acl = \"corpus\" takes the ACL from them: "
                         "give each restricted document \"acl\": [groups], or remove `acl` from benchmark.toml")
    return acl, lines


def read_query_groups(path: str | Path) -> dict[str, tuple[frozenset[str] | None, int]]:
    """Each query of a JSONL queries file: its `groups` (None when it has none) and its line.
    Other query formats carry no groups: every query maps to (None, line)."""
    from rankgate.core.formats.corpus import QUERY_ID_KEYS, query_format
    from rankgate.core.formats.irds import is_irds

    path = str(path)
    if is_irds(path):
        return {}
    text = read_text(path)
    out: dict[str, tuple[frozenset[str] | None, int]] = {}
    if query_format(text) != "jsonl":
        return out
    for lineno, raw in numbered_lines(text):
        if not raw.strip(ASCII_SPACE):
            continue
        try:
            obj = json.loads(raw)
        except json.JSONDecodeError:
            continue  # read_queries says so with its own message
        except RecursionError:
            raise InputError(path, "JSON nested too deeply", line=lineno) from None
        if not isinstance(obj, dict):
            continue
        qid = next((obj[k] for k in QUERY_ID_KEYS if k in obj), None)
        qid = str(qid) if isinstance(qid, (str, int)) and not isinstance(qid, bool) else None
        if not qid:
            continue
        groups = _groups(obj["groups"], path, lineno, "field 'groups'") if "groups" in obj else None
        out[qid] = (groups, lineno)
    return out


def acl_source(manifest, flag: str | None) -> str | None:
    """The ACL in force: the --acl flag, else the manifest's `acl` (a file, or "corpus")."""
    if flag:
        return flag
    if manifest is not None and getattr(manifest, "acl", None):
        return manifest.acl
    return None


def load_access(manifest, flag: str | None, queries_path: str | None, corpus_path: str | None = None
                ) -> Access | None:
    """The access rules of an evaluation, or None when there is no ACL and no query names groups.

    Raises InputError (file:line) for a query with groups and no ACL, a query without groups when an
    ACL is present, and an ACL of the corpus without a corpus.
    """
    src = acl_source(manifest, flag)
    groups = read_query_groups(queries_path) if queries_path else {}
    if src is None:
        named = next(((q, line) for q, (g, line) in groups.items() if g is not None), None)
        if named:
            raise InputError(queries_path, f"query {shorten(named[0])} names the asking user's groups but no ACL "
                             "says who may see which document: declare `acl = \"acl.jsonl\"` in benchmark.toml "
                             "(or pass --acl FILE), or remove 'groups'", line=named[1])
        return None
    if src == FROM_CORPUS:
        corpus = corpus_path or (str(manifest.corpus) if manifest is not None and manifest.corpus else None)
        if not corpus:
            raise InputError(str(manifest.path) if manifest is not None else "--acl",
                             "acl = \"corpus\" needs a corpus (corpus = \"corpus.jsonl\")")
        acl, lines = read_corpus_acl(corpus)
        src = corpus
    else:
        acl, lines = read_acl(src)
    if not queries_path:
        raise InputError(src, "an ACL needs each query's asking user: a queries file (JSONL) whose queries "
                         "carry \"groups\": [...]")
    missing = [(q, line) for q, (g, line) in groups.items() if g is None]
    if not groups or missing:
        q, line = missing[0] if missing else ("", None)
        raise InputError(queries_path, (f"query {shorten(q)} names no 'groups'" if q else "no query names 'groups'")
                         + f": with an ACL ({src}) every query says who asks (\"groups\": [] for a user in no "
                         "group); none is taken as public or private", line=line)
    return Access(acl, {q: g for q, (g, _) in groups.items() if g is not None}, src, lines, str(queries_path))


def check_known(access: Access, known_docs, corpus_path: str | None = None) -> None:
    """Every document the ACL names exists: in the corpus when there is one, else in the qrels or a run."""
    names = list(access.acl)
    if corpus_path and access.source == corpus_path:
        return  # `acl = "corpus"`: each document it restricts is a corpus document, retrieved or not
    if corpus_path:
        from rankgate.core.formats.corpus import read_corpus

        known = set(read_corpus(corpus_path, set(names)))
        where = f"the corpus {corpus_path}"
    else:
        known = {n for n in names if n in known_docs}
        where = "the qrels or any run"
    for doc in names:
        if doc not in known:
            raise InputError(access.source, f"document {shorten(doc)} is not in {where}: an ACL names only "
                             "documents that exist", line=access.lines.get(doc))


# ---- what the user may see ----------------------------------------------------------------------

def restricted_rows(access: Access, catalog, q: np.ndarray, doc: np.ndarray) -> np.ndarray:
    """True for each (query, document) row the query's user may not see."""
    out = np.zeros(len(q), dtype=bool)
    if not access.acl or not len(q):
        return out
    qn, dn = catalog.queries.names, catalog.docs.names
    codes = [c for d in access.acl if (c := catalog.docs.get(d)) is not None]
    rows = np.flatnonzero(np.isin(doc, np.asarray(codes, dtype=doc.dtype)))
    for r in rows.tolist():
        out[r] = not access.may_see(qn[q[r]], dn[doc[r]])
    return out


def visible_qrels(access: Access, qrels: Qrels) -> tuple[Qrels, dict[str, list[str]]]:
    """The qrels without the judgments of documents each query's user may not see; and, per query,
    the relevant-or-not documents taken out (so a report can say "restricted")."""
    hidden = restricted_rows(access, qrels.catalog, qrels.q, qrels.doc)
    qn, dn = qrels.catalog.queries.names, qrels.catalog.docs.names
    taken: dict[str, list[str]] = {}
    for r in np.flatnonzero(hidden).tolist():
        taken.setdefault(qn[qrels.q[r]], []).append(dn[qrels.doc[r]])
    keep = ~hidden
    return replace(qrels, q=qrels.q[keep], doc=qrels.doc[keep], grade=qrels.grade[keep]), taken


def visible_run(access: Access, run: Run) -> Run:
    """The run without the documents each query's user may not see; those below move up."""
    if not isinstance(run, Run):
        raise InputError(run.path, "permissions need every row of the run (read without the fast path)")
    keep = ~restricted_rows(access, run.catalog, run.q, run.doc)
    return replace(run, q=run.q[keep], doc=run.doc[keep], score=run.score[keep], where=run.where[keep])


def leaks(access: Access, run: Run, queries=None) -> list[dict]:
    """Every retrieved document its query's user may not see: query, document, rank (1-based, trec_eval
    order), the groups allowed and the user's groups; by query, then rank."""
    if not isinstance(run, Run):
        raise InputError(run.path, "permissions need every row of the run (read without the fast path)")
    q, doc, _ = sort_run(run)
    hidden = restricted_rows(access, run.catalog, q, doc)
    if not hidden.any():
        return []
    starts = np.r_[0, np.flatnonzero(q[1:] != q[:-1]) + 1] if len(q) else np.zeros(0, np.int64)
    first = np.repeat(starts, np.diff(np.r_[starts, len(q)]))
    rank = np.arange(len(q)) - first + 1
    qn, dn = run.catalog.queries.names, run.catalog.docs.names
    wanted = None if queries is None else set(queries)
    out = []
    for r in np.flatnonzero(hidden).tolist():
        qid, d = qn[q[r]], dn[doc[r]]
        if wanted is not None and qid not in wanted:
            continue
        out.append({"query": qid, "doc": d, "rank": int(rank[r]), "allowed_groups": sorted(access.acl[d]),
                    "user_groups": sorted(access.groups.get(qid, ()))})
    out.sort(key=lambda x: (x["query"], x["rank"]))
    return out


@dataclass
class Permissions:
    """What the gate knows of permissions: each run's leaks, and what each query's user may not see."""

    access: Access
    leaks: dict[str, list[dict]]  # run name -> leaks
    restricted: dict[str, list[str]]  # query -> judged documents its user may not see
    restricted_relevant: dict[str, list[str]]  # query -> relevant documents its user may not see
    unanswerable: list[str]  # queries every relevant document of which the user may not see

    def as_dict(self, k: int | None = None) -> dict:
        out = dict(self.access.summary())
        out["leaks"] = {run: {"count": len(x), "queries": len({l["query"] for l in x}), "list": x}
                        for run, x in self.leaks.items()}
        out["restricted_relevant"] = self.restricted_relevant
        out["no_visible_answer"] = self.unanswerable
        return out


def no_visible_answer(access: Access, qid: str, relevant, no_answer=frozenset()) -> bool:
    """A query that has relevant documents, none of which its user may see: it has no answer for that user
    (scored like a no-answer query, not as a miss). `relevant`: its relevant document IDs."""
    relevant = list(relevant)
    return bool(relevant) and qid not in no_answer and all(not access.may_see(qid, d) for d in relevant)


def _relevant(qrels: Qrels, rel_level: int) -> dict[str, set[str]]:
    qn, dn = qrels.catalog.queries.names, qrels.catalog.docs.names
    out: dict[str, set[str]] = {}
    for qc, dc, g in zip(qrels.q.tolist(), qrels.doc.tolist(), qrels.grade.tolist()):
        if g >= rel_level:
            out.setdefault(qn[qc], set()).add(dn[dc])
    return out


def as_seen(access: Access, qrels: Qrels, runs: list[Run], rel_level: int, no_answer=frozenset()
            ) -> tuple[Qrels, list[Run], set[str]]:
    """`apply_access` without the report: the qrels, the runs and the no-answer queries as the users may see
    them (the app's review queue, which re-reads them after every batch of edits)."""
    unanswerable = {q for q, docs in _relevant(qrels, rel_level).items()
                    if no_visible_answer(access, q, docs, no_answer)}
    return visible_qrels(access, qrels)[0], [visible_run(access, r) for r in runs], set(no_answer) | unanswerable


def apply_access(access: Access, qrels: Qrels, runs: list[Run], rel_level: int, no_answer=frozenset(),
                 queries=None) -> tuple[Qrels, list[Run], Permissions, set[str]]:
    """The qrels and runs as the users may see them, the permissions report, and the no-answer queries
    (the given ones, plus those whose every relevant document the user may not see)."""
    before = _relevant(qrels, rel_level)
    vq, taken = visible_qrels(access, qrels)
    restricted_relevant = {q: sorted(d for d in docs if d in before.get(q, ())) for q, docs in taken.items()}
    restricted_relevant = {q: d for q, d in restricted_relevant.items() if d}
    unanswerable = sorted(q for q, docs in before.items() if no_visible_answer(access, q, docs, no_answer))
    report = Permissions(access, {r.name: leaks(access, r, queries) for r in runs}, taken, restricted_relevant,
                         unanswerable)
    return vq, [visible_run(access, r) for r in runs], report, set(no_answer) | set(unanswerable)


def visible_bundle(bundle, rel_level: int):
    """The bundle as its users may see it (qrels, every run, no-answer queries) and the permissions report;
    the bundle itself, and None, when it has no ACL."""
    access = getattr(bundle, "access", None)
    if access is None:
        return bundle, None
    names = list(bundle.runs)
    qrels, runs, report, no_answer = apply_access(access, bundle.qrels, [bundle.runs[n] for n in names], rel_level,
                                                  bundle.no_answer)
    return replace(bundle, qrels=qrels, runs=dict(zip(names, runs)), no_answer=no_answer), report
