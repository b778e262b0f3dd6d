"""How a query-document pair's label is reached from its reviewers' judgments and its adjudication.

The in-memory form, as a workspace keeps it: `labels` {query: {doc: {reviewer: judgment}}} (a pair's
judgments in the order of their last edit) and `adjudications` {query: {doc: adjudication}}; a record
whose "removed" is set is a tombstone. See docs/reviewers.md.
"""

from __future__ import annotations

import hashlib
import json
from array import array
from collections.abc import Mapping
from typing import Iterable, NamedTuple

from rankgate.store.records import REVIEW_KINDS, UNRESOLVED, Diff, Judgment


def scale_words(grades: Iterable[int]) -> str:
    """A grade scale in a few characters: `0–3` when it has no gap, else `-2, 0, 1, 3`."""
    gs = sorted(grades)
    if len(gs) > 2 and gs == list(range(gs[0], gs[-1] + 1)):
        return f"{gs[0]}–{gs[-1]}"
    return ", ".join(map(str, gs))


def declared_scale(manifest, benchmark: str) -> str:
    """`oh's scale 0–3 ([grades] in benchmark.toml)`: the scale `manifest` declares, its benchmark named
    `benchmark` as the user gave it; "" when it declares none (then any grade goes, as in a TREC qrels)."""
    if manifest is None or not getattr(manifest, "grades_declared", False):
        return ""
    return f"{benchmark}'s scale {scale_words(manifest.grades)} ([grades] in benchmark.toml)"


def off_scale(grade: int, manifest, benchmark: str) -> str | None:
    """Why `grade` may not be set in `manifest`'s benchmark, or None: on its scale (its [grades], else the
    default 0–3 the app's keys follow), or no benchmark (a --db store: any grade, as in a TREC qrels)."""
    scale = declared_scale(manifest, benchmark)
    grades = getattr(manifest, "grades", None)
    if not grades or grade in grades:
        return None
    if not scale:  # no [grades]: the default scale, which the review app's keys follow too
        return (f"grade {grade} is not on {benchmark}'s scale {scale_words(grades)} (the default: its "
                "benchmark.toml has no [grades]; name the grades there to use others)")
    return f"grade {grade} is not on {scale}"


def label_state(j: dict | None) -> dict | None:
    """What history keeps of a judgment: grade, reason, collection version, reviewer (and flags when set)."""
    if j is None or j.get("removed") is not None:
        return None
    out = {"grade": j["grade"], "reason": j["reason"], "collection_version": j["collection_version"],
           "reviewer": j["reviewer"]}
    if j.get("needs_review"):
        out["needs_review"] = True
    if j.get("migrated_from"):
        out["migrated_from"] = list(j["migrated_from"])
    if j.get("grades"):
        out["grades"] = dict(j["grades"])
    if j.get("unsure"):
        out["unsure"] = j["unsure"]
    if j.get("text_hash"):
        out["text_hash"] = j["text_hash"]
    return out


def unsure_of(live: list[dict]) -> str:
    """The unsure note a pair's label shows from its standing judgments: one mark's note, or each
    marker's (`ana: note; tomas: note`)."""
    marked = [r for r in live if r.get("unsure")]
    if len(marked) <= 1:
        return marked[0]["unsure"] if marked else ""
    return "; ".join(f"{r['reviewer']}: {r['unsure']}" for r in marked)


def standing(rec: dict | None) -> bool:
    return rec is not None and rec.get("removed") is None


def corrected_judgments(revs: dict[str, dict], who: str) -> list[dict]:
    """The standing judgments of a pair by reviewers other than `who`: what `who`'s correction replaces."""
    return [r for name, r in revs.items() if name != who and standing(r)]


def pair_label(revs: dict[str, dict] | None, adj: dict | None) -> dict | None:
    """A pair's label from its reviewers' judgments and its adjudication (None: nothing stands).

    1. adjudicated: the adjudicator's grade;
    2. one reviewer: that grade ("single");
    3. every reviewer the same grade ("unanimous");
    4. otherwise the reviewers disagree and nobody adjudicated: the most
       recent judgment counts ("latest": the last one the store received; a
       cleared needs-review flag is not an edit), as the last edit did when a
       pair held one judgment. `disagreements()` lists these pairs; exports count them.
    The raw record is returned as is for a single reviewer (no copy: this is
    the common case, and `to_qrels` at 100k labels calls it for every pair).
    """
    live = [r for r in revs.values() if r.get("removed") is None] if revs else []
    if adj is not None and adj.get("removed") is None:
        out = dict(adj, reached="adjudicated", reviewers=tuple(r["reviewer"] for r in live),
                   needs_review=bool(adj.get("needs_review")))
        return out
    if not live:
        return None
    if len(live) == 1:
        return live[0]
    reached = "unanimous" if len({r["grade"] for r in live}) == 1 else "latest"
    chosen = live[-1]  # a pair's judgments are kept in the order of their last edit (see put_review)
    return {"query": chosen.get("query"), "doc": chosen.get("doc"), "grade": chosen["grade"],
            "reason": chosen["reason"], "collection_version": chosen["collection_version"],
            "reviewer": chosen["reviewer"], "created": min(r.get("created", "") for r in live),
            "updated": max(r.get("updated", "") for r in live), "removed": None, "reached": reached,
            "reviewers": tuple(r["reviewer"] for r in live),
            "needs_review": all(r.get("needs_review") for r in live), "unsure": unsure_of(live),
            "text_hash": chosen.get("text_hash", "")}


def is_edit(old: dict | None, new: dict | None) -> bool:
    """A change of grade, reason, collection version or standing (not a cleared flag)."""
    if old is None or new is None or old.get("removed") is not None or new.get("removed") is not None:
        return True
    return (old["grade"], old["reason"], old["collection_version"]) != \
        (new["grade"], new["reason"], new["collection_version"])


def differs(live: dict, state: dict) -> bool:
    """An incoming judgment `state` says something else than the stored `live` one: another grade, or
    another non-empty reason or collection version."""
    return bool(live["grade"] != state["grade"] or (state["reason"] and state["reason"] != live["reason"]) or
                (state["collection_version"] and state["collection_version"] != live["collection_version"]))


def with_stored_details(state: dict, live: dict) -> dict:
    """An incoming judgment that overwrites a stored one keeps the stored reason and collection version
    where it has none."""
    return dict(state, reason=state["reason"] or live["reason"],
                collection_version=state["collection_version"] or live["collection_version"])


def put_review(revs: dict[str, dict], value: dict) -> None:
    """Set a reviewer's judgment of a pair. An edit goes last, so the order of a pair's judgments is the
    order of their last edits (what "the latest judgment" means); a cleared flag leaves it in place."""
    name = value.get("reviewer", "")
    old = revs.get(name)
    if old is not None and is_edit(old, value):
        del revs[name]
    revs[name] = value


def reached(state: dict) -> str:
    return state.get("reached", "single")


def pair_view(revs: dict | None, adj: dict | None, who: str | None, blind: bool) -> tuple[dict | None, bool]:
    """(record, is it the pair's label) as `who` sees the pair."""
    if who is not None:
        own = revs.get(who) if revs else None
        if own is not None and own.get("removed") is None:
            return own, False
        if blind:
            return None, False
    return pair_label(revs, adj), True


def judgments_of(labels: dict, adjudications: dict, qids: list[str], who: str | None, blind: bool,
                 include_removed: bool) -> list[Judgment]:
    """Each judged pair's label (or `who`'s own judgment: `pair_view`) of the queries `qids`, and with
    `include_removed` the last removed judgment of a pair that has none."""
    out = []
    for q in qids:
        adjq = adjudications.get(q, {})
        for d, revs in labels.get(q, {}).items():
            rec, label = pair_view(revs, adjq.get(d), who, blind)
            if rec is not None:
                out.append(as_judgment(rec, label))
            elif include_removed:
                tomb = tombstone(revs, adjq.get(d), who if blind else None)
                if tomb is not None:
                    out.append(as_judgment(tomb))
    return out


def grades_of(per: dict[str, dict], adjq: dict[str, dict], who: str | None, blind: bool) -> dict[str, int]:
    """{doc: grade} of one query's pairs ({doc: {reviewer: judgment}}, {doc: adjudication}) as `who` sees them."""
    out = {}
    for d, revs in per.items():
        if who is None and not adjq and len(revs) == 1:
            (r,) = revs.values()
            if r.get("removed") is None:
                out[d] = r["grade"]
            continue
        rec, _ = pair_view(revs, adjq.get(d), who, blind)
        if rec is not None:
            out[d] = rec["grade"]
    return out


def tombstone(revs: dict | None, adj: dict | None, who: str | None) -> dict | None:
    """The last removed judgment of a pair that has no label (for include_removed)."""
    recs = [r for n, r in (revs or {}).items() if who is None or n == who]
    if adj is not None and who is None:
        recs.append(adj)
    gone = [r for r in recs if r.get("removed") is not None]
    return max(gone, key=lambda r: r["removed"]) if gone else None


def pair_state(revs: dict, adj: dict | None, final: dict | None = None) -> dict | None:
    """What history keeps of a pair's label: its state, and every judgment when there are several."""
    final = final if final is not None else pair_label(revs, adj)
    if final is None:
        return None
    state = label_state(final)
    live = [r for r in revs.values() if r.get("removed") is None]
    if len(live) > 1 or standing(adj):
        state["reached"] = reached(final)
        state["judgments"] = {r["reviewer"]: label_state(r) for r in live}
        if standing(adj):
            state["adjudication"] = label_state(adj)
    return state


def pair_labels(labels: dict, adjudications: dict, only: str | None = None) -> dict[str, dict[str, dict]]:
    """{qid: {doc: label}} from {qid: {doc: {reviewer: judgment}}} and the adjudications
    (or reviewer `only`'s own judgments)."""
    out_all: dict[str, dict[str, dict]] = {}
    for q, per in labels.items():
        adjq = adjudications.get(q)
        out: dict[str, dict] = {}
        for d, revs in per.items():
            if only is not None:
                r = revs.get(only)
                if r is not None and r.get("removed") is None:
                    out[d] = r
                continue
            if not adjq and len(revs) == 1:
                for r in revs.values():  # the common case: one reviewer, no adjudication
                    if r.get("removed") is None:
                        out[d] = r
                continue
            f = pair_label(revs, adjq.get(d) if adjq else None)
            if f is not None:
                out[d] = f
        out_all[q] = out
    return out_all


def labels_at(events: Iterable[dict], history_id: int, only: str | None = None
              ) -> tuple[dict[str, dict], dict[str, dict[str, dict]]]:
    """(queries, {qid: {doc: label}}) as they were before event `history_id`, replayed from history
    (`only`: reviewer `only`'s own judgments instead of the labels)."""
    queries, pairs = _replay(events, history_id)
    labels: dict[str, dict[str, dict]] = {}
    for q, per in pairs.items():
        out = {}
        for d, (revs, adj) in per.items():
            revs = {n: s for n, s in revs.items() if s is not None}
            if only is not None:
                s = revs.get(only)
            else:
                s = pair_label(revs, adj)
            if s is not None:
                out[d] = s
        labels[q] = out
    return queries, labels


def history_state(events: list[dict]) -> tuple[dict[str, dict], dict[str, dict[str, list]]]:
    """Queries and pairs as every event in `events` leaves them (recovery's base when no snapshot reads)."""
    return _replay(events, events[-1]["id"] + 1 if events else 1)


def _replay(events: Iterable[dict], history_id: int) -> tuple[dict[str, dict], dict[str, dict[str, list]]]:
    """Queries and pairs ({qid: {doc: [reviewer -> state or None, adjudication or None]}}) as they
    were before event `history_id`."""
    queries: dict[str, dict] = {}
    pairs: dict[str, dict[str, list]] = {}
    for e in events:
        if e["id"] >= history_id:
            break
        kind = e["kind"]
        if kind == "query":
            queries[e["query"]] = dict(e["after"], id=e["query"])
            continue
        if kind not in REVIEW_KINDS and kind != "remove":
            continue
        slot = pairs.setdefault(e["query"], {}).setdefault(e["doc"], [{}, None])
        after = e["after"]
        scope = e.get("scope") or ""
        state = None if after is None else dict(after, query=e["query"], doc=e["doc"], updated=e["when"])
        if scope == "reviewer":
            name = (after or e["before"] or {}).get("reviewer", "")
            prev = slot[0].get(name)
            if state is not None and prev is not None and not is_edit(prev, state):
                state["updated"] = prev.get("updated", e["when"])  # a flag cleared: not a new edit
            elif name in slot[0]:
                del slot[0][name]  # as put_review: an edit goes last
            slot[0][name] = state
        elif scope == "adjudication":
            if state is not None and kind in ("confirm", "unsure") and slot[1] is not None:
                state["updated"] = slot[1].get("updated", e["when"])
            slot[1] = state
        elif state is None:  # the pair removed: every judgment and the adjudication
            slot[0] = {n: None for n in slot[0]}
            slot[1] = None
        else:  # the pair holds exactly this judgment (set/import before store format 2; import)
            slot[0] = {n: None for n in slot[0]}
            slot[0][state.get("reviewer", "")] = state
            slot[1] = None
    return queries, pairs


def diff_labels(old: str, new: str, a: dict[str, dict[str, dict]], b: dict[str, dict[str, dict]]) -> Diff:
    """What changed from label set `a` (named `old`) to `b` (named `new`)."""
    out = Diff(old, new)
    for q in sorted(set(a) | set(b)):
        pa, pb = a.get(q, {}), b.get(q, {})
        for d in sorted(set(pa) | set(pb)):
            sa, sb = pa.get(d), pb.get(d)
            if sa is None:
                out.added.append({"query": q, "doc": d, "grade": sb["grade"]})
            elif sb is None:
                out.removed.append({"query": q, "doc": d, "grade": sa["grade"]})
            elif sa["grade"] != sb["grade"]:
                out.regraded.append({"query": q, "doc": d, "before": sa["grade"], "after": sb["grade"]})
    return out


HAND_KINDS = ("set", "regrade", "reason")  # the events of a grade or a reason set by hand (the app, `labels set`)


def hand_edits(events: Iterable[dict]) -> list[list[str]]:
    """[when, query, doc, reviewer] of each event that set a reviewer's grade or reason by hand."""
    return [[e["when"], e["query"], e["doc"], (e.get("after") or {}).get("reviewer", "")] for e in events
            if e.get("kind") in HAND_KINDS and e.get("scope") != "adjudication" and e.get("doc") is not None
            and e.get("after")]


def as_judgment(j: dict, label: bool = False) -> Judgment:
    """A Judgment from a record; `label`: it is a pair's label, not one reviewer's own."""
    how = reached(j) if label else ""
    reviewers = tuple(j.get("reviewers", (j["reviewer"],))) if label else ()
    return Judgment(j["query"], j["doc"], j["grade"], j["reason"], j["collection_version"], j["reviewer"],
                    j.get("created", ""), j.get("updated", ""), j.get("removed"), how, reviewers,
                    bool(j.get("needs_review")), tuple(j.get("migrated_from") or ()), j.get("unsure") or "",
                    j.get("text_hash") or "")


def describe_label(state: dict) -> str:
    out = f"grade {state['grade']}"
    if state.get("reason"):
        out += f" ({json.dumps(state['reason'], ensure_ascii=False)})"
    if state.get("collection_version"):
        out += f" [collection {state['collection_version']}]"
    return out


def content_hash(rows: Iterable[tuple[str, str, int]]) -> str:
    """sha256 over the sorted (query, document, grade) triples; order, reasons and empty queries do not count."""
    text = "".join(f"{len(q)}:{q} {len(d)}:{d} {g}\n" for q, d, g in sorted(rows))  # lengths: no ambiguity
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def hash_mismatch(path: str, expected, rows: Iterable[tuple[str, str, int]]) -> str | None:
    """A note when a file's labels no longer match the content_hash in its header (a rankgate export
    carries one); None when they match or it has none."""
    if expected and content_hash(rows) != expected:
        return f"{path}: its labels do not match the content_hash in its header (edited after export?)"
    return None


def label_counts(labels: dict, adjudications: dict) -> dict:
    """Pairs removed, reviewers' standing judgments and their names, open disagreements, adjudications,
    labels that need review."""
    removed = 0
    reviews = 0
    names: set[str] = set()
    unresolved = needs = 0
    for q, per in labels.items():
        adjq = adjudications.get(q, {})
        for d, revs in per.items():
            live = [r for r in revs.values() if r.get("removed") is None]
            reviews += len(live)
            names.update(r["reviewer"] for r in live)
            if not live and not standing(adjq.get(d)):
                removed += 1
                continue
            if len(live) > 1 or adjq:
                f = pair_label(revs, adjq.get(d))
                unresolved += reached(f) in UNRESOLVED
                needs += bool(f.get("needs_review"))
            else:
                needs += bool(live[0].get("needs_review"))
    adjudicated = sum(1 for per in adjudications.values() for a in per.values() if a.get("removed") is None)
    return {"removed": removed, "reviewers": sorted(names), "reviewer_judgments": reviews,
            "disagreements": unresolved, "adjudicated": adjudicated, "needs_review": needs}


class Details(Mapping):
    """A label set's details ({(query, doc): JudgmentDetail}, as `Qrels.details`), kept as each query's columns
    and made into a dict on first read: the app reads none of them when it opens (80,000 entries)."""

    def __init__(self, chunks: list, made: dict) -> None:
        # (qid, docs, reasons, versions, reviewers): per-query columns, each a list or as stored ({"all": v})
        self._chunks = chunks
        self._made = made  # (qid, doc) -> JudgmentDetail built already, for queries read record by record

    def _all(self) -> dict:
        if self._chunks is not None:
            from rankgate.core.model import JudgmentDetail

            made, shared = {}, {}
            for qid, docs, *cols in self._chunks:
                n = len(docs)
                reasons, versions, reviewers = ([c["all"]] * n if type(c) is dict else c for c in cols)
                for doc, key in zip(docs, zip(reasons, versions, reviewers)):
                    if key != ("", "", ""):
                        detail = shared.get(key)
                        if detail is None:
                            detail = shared[key] = JudgmentDetail(*key)
                        made[(qid, doc)] = detail
            made.update(self._made)
            self._made, self._chunks = made, None
        return self._made

    def versions_by_query(self) -> dict:
        """{query: Counter of its labels' non-empty collection versions}, as counting `items()` gives it, read
        from the columns while the dict is not made (the app's open: no object per label)."""
        from collections import Counter

        out: dict = {}
        if self._chunks is None:
            chunks, made = [], self._made
        else:
            chunks, made = self._chunks, self._made
        def one(version: str, n: int) -> Counter:  # Counter({version: n}) without its __init__'s update (10k)
            counts = Counter.__new__(Counter)
            dict.__setitem__(counts, version, n)
            return counts

        for qid, docs, _reasons, versions, _reviewers in chunks:
            if type(versions) is dict:  # one version for the whole query, as stored (an import's)
                if versions["all"] and docs:
                    out[qid] = one(versions["all"], len(docs))
                continue
            if not versions:
                continue
            first = versions[0]
            if versions.count(first) == len(versions):  # one version for the whole query
                if first:
                    out[qid] = one(first, len(versions))
                continue
            counts = Counter(v for v in versions if v)
            if counts:
                out[qid] = counts
        for (qid, _), det in made.items():
            if det.collection_version:
                out.setdefault(qid, Counter())[det.collection_version] += 1
        return out

    def __getitem__(self, key):
        return self._all()[key]

    def get(self, key, default=None):
        return self._all().get(key, default)

    def __contains__(self, key) -> bool:
        return key in self._all()

    def __iter__(self):
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


def _packed_column(doc: dict, f: str) -> list:
    col = doc[f]
    return [col["all"]] * doc["n"] if isinstance(col, dict) else col


def label_grades(labels, adjudications: dict) -> dict[tuple[str, str], int]:
    """{(query, doc): grade} of every pair's label (as `pair_labels`), read from the snapshot's columns for
    each query never built that holds one standing judgment per document: no record per judgment."""
    from rankgate.store.columns import all_new

    out: dict[tuple[str, str], int] = {}
    columns_of = getattr(labels, "columns_of", lambda q: None)
    for q in list(dict.keys(labels)):
        cols = columns_of(q)
        if cols is not None and not adjudications.get(q) and all_new(cols):
            grades = _packed_column(cols, "grade")
            if all(type(g) is int for g in grades):
                out.update(zip(zip([q] * cols["n"], cols["doc"]), grades))
                continue
        per = pair_labels({q: labels.get(q, {})}, {q: adjudications.get(q) or {}})[q]
        out.update(((q, d), int(s["grade"])) for d, s in per.items())
    return out


INT, STR = frozenset((int,)), frozenset((str,))


def labels_as_qrels(path: str, queries: dict, labels, adjudications: dict, catalog, meta: dict, *,
                    known: "KnownQrels | None" = None, parts: list | None = None):
    """`as_qrels` of the current labels (every pair's label), read from the snapshot's columns for each query
    that was never built and has one standing judgment per document (what an import leaves): no record per
    judgment. The other queries go through `pair_labels`, as `as_qrels` does. Same output as
    `as_qrels(path, queries, pair_labels(labels, adjudications), catalog, meta)`.

    `known`: what this function gave for the very same labels into a fresh catalog (`parts` filled by a call
    without it; tui/runcache.py keeps them keyed by the store's files): the catalog (fresh) takes the document
    names as they are and the arrays are used as given; only each query's details are read (ValueError when
    `known` does not fit these labels: the caller reads them afresh)."""
    import numpy as np

    from rankgate.core.model import Catalog, Qrels
    from rankgate.store.columns import all_new

    catalog = catalog or Catalog()
    if known is not None:
        return _known_qrels(path, queries, labels, adjudications, catalog, meta, known)
    declared = catalog.queries.extend(list(queries)).tolist() if queries else []  # (the code of each, in order)
    counts, docs_all, grades_all = [], [], []
    chunks, made, shared, versions = [], {}, {}, set()
    grade_types: set = set()
    id_types: set = set()
    columns_of = getattr(labels, "columns_of", lambda q: None)
    for qid in queries:
        cols = columns_of(qid)
        if cols is not None and not adjudications.get(qid) and all_new(cols):
            # reasons, versions and reviewers stay as stored ({"all": v} for one value a query) until read
            docs, grades, reasons, cvs, who = (cols[f] for f in ("doc", "grade", "reason", "collection_version",
                                                                 "reviewer"))
            if type(grades) is dict:
                grades = [grades["all"]] * cols["n"]
            # the types seen, as sets (a C loop, not a Python one a row): grades int, documents and reviewers str
            grade_types.update(map(type, grades))
            id_types.update(map(type, docs))
            if type(who) is dict:
                if docs:
                    id_types.add(type(who["all"]))
            else:
                id_types.update(map(type, who))
            if not (grade_types <= INT and id_types <= STR):
                labels.get(qid)  # raises DamagedFile naming the query and the row, as a read of it does
            chunks.append((qid, docs, reasons, cvs, who))
            if type(cvs) is dict:
                if docs:
                    versions.add(cvs["all"])
            else:
                versions.update(cvs)
        else:
            per = pair_labels({qid: labels.get(qid, {})}, {qid: adjudications.get(qid) or {}})[qid]
            docs = list(per)
            grades = [s["grade"] for s in per.values()]
            for doc, s in per.items():
                versions.add(_detail_of(s, shared, made, (qid, doc)))
        counts.append(len(docs))
        docs_all += docs
        grades_all += grades
    cv = versions.pop() if len(versions) == 1 and "" not in versions else None
    if cv is not None:
        meta["collection_version"] = cv
    qs = np.repeat(np.array(declared, np.int32), counts) if declared else np.zeros(0, np.int32)
    ds = catalog.docs.extend(docs_all) if docs_all else np.zeros(0, np.int32)
    grades = np.array(grades_all, np.int64).reshape(-1)
    if parts is not None:
        fast = {q for q, *_ in chunks}
        parts.append(KnownQrels(list(catalog.docs.names), ds, grades, np.array(counts, np.int64),
                                np.array([q in fast for q in queries], bool), cv))
    return Qrels(path, catalog, qs, ds, grades, declared, format="store", details=Details(chunks, made), meta=meta)


class KnownQrels(NamedTuple):
    """What `labels_as_qrels` made of a store's labels into a fresh catalog: the catalog's document names in
    order, the document codes and grades of every row, the rows of each query (in the queries' order), which
    queries were read from their columns, and the one collection version (None: none or several)."""

    docs: list
    ds: object  # np.ndarray int32
    grades: object  # np.ndarray int64
    counts: object  # np.ndarray int64
    fast: object  # np.ndarray bool
    collection_version: str | None


def _known_qrels(path: str, queries: dict, labels, adjudications: dict, catalog, meta: dict, known: KnownQrels):
    """`labels_as_qrels` from `known` (see there): the details only, from each query's columns as stored."""
    import numpy as np

    from rankgate.core.model import Qrels

    if len(catalog.queries) or len(catalog.docs) or len(known.counts) != len(queries) or \
            len(known.fast) != len(queries) or not int(known.counts.sum()) == len(known.ds) == len(known.grades) or \
            (len(known.ds) and not 0 <= int(known.ds.min()) <= int(known.ds.max()) < len(known.docs)):
        raise ValueError("known labels that do not fit")
    chunks, made, shared, versions = [], {}, {}, set()
    columns_of = getattr(labels, "columns_of", lambda q: None)
    for qid, fast, n in zip(queries, known.fast.tolist(), known.counts.tolist()):
        if fast:
            cols = columns_of(qid)
            if cols is None or cols["n"] != n:
                raise ValueError(f"query {qid!r} is not as known")
            chunks.append((qid, cols["doc"], cols["reason"], cols["collection_version"], cols["reviewer"]))
        else:
            per = pair_labels({qid: labels.get(qid, {})}, {qid: adjudications.get(qid) or {}})[qid]
            if len(per) != n:
                raise ValueError(f"query {qid!r} is not as known")
            for doc, s in per.items():
                _detail_of(s, shared, made, (qid, doc))
    if known.collection_version is not None:
        meta["collection_version"] = known.collection_version
    declared = catalog.queries.extend(list(queries)).tolist() if queries else []  # (the catalog is changed only
    catalog.docs.extend(known.docs, distinct=True)  # now) into a fresh interner: no dictionary until asked for
    qs = np.repeat(np.array(declared, np.int32), known.counts) if declared else np.zeros(0, np.int32)
    return Qrels(path, catalog, qs, known.ds, known.grades, declared, format="store", details=Details(chunks, made),
                 meta=meta)


def _detail_of(s: dict, shared: dict, details: dict, pair: tuple[str, str]) -> str:
    """A label's reason, collection version and reviewer as its details (one object per distinct three, in
    `shared`), unless all are empty; returns its collection version."""
    from rankgate.core.model import JudgmentDetail

    key = (s["reason"], s["collection_version"], s["reviewer"])
    if key != ("", "", ""):
        detail = shared.get(key)
        if detail is None:
            detail = shared[key] = JudgmentDetail(*key)
        details[pair] = detail
    return key[1]


def as_qrels(path: str, queries: dict, labels: dict[str, dict[str, dict]], catalog, meta: dict):
    """Core `Qrels` of a label set: every query declared, reasons as details; `meta` gains the
    collection version when every label has the same."""
    import numpy as np

    from rankgate.core.model import Catalog, JudgmentDetail, Qrels

    catalog = catalog or Catalog()
    qcode, dcode = catalog.queries.code, catalog.docs.code
    qs, ds, gs = array("i"), array("i"), array("q")
    details: dict = {}
    shared: dict[tuple, JudgmentDetail] = {}  # one object per distinct (reason, version, reviewer)
    declared = []
    versions = set()
    for qid in queries:
        q = qcode(qid)
        declared.append(q)
        for doc, s in labels.get(qid, {}).items():
            qs.append(q)
            ds.append(dcode(doc))
            gs.append(s["grade"])
            versions.add(_detail_of(s, shared, details, (qid, doc)))
    if len(versions) == 1 and "" not in versions:
        meta["collection_version"] = versions.pop()
    return Qrels(path, catalog, np.frombuffer(qs, np.int32).copy(), np.frombuffer(ds, np.int32).copy(),
                 np.frombuffer(gs, np.int64).copy(), declared, format="store", details=details, meta=meta)
