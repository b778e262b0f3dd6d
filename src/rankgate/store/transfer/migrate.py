"""Carry a workspace's judgments to new document IDs after rechunking, as a new version."""

from __future__ import annotations

from pathlib import Path

from rankgate.core.errors import InputError
from rankgate.store.durable import Batch
from rankgate.store.labels import content_hash, label_state, pair_labels, put_review, standing
from rankgate.store.records import MigrationReport, check_version_name


def migrate(ws, idmap, *, version: str | None = None, before: str | None = None, drop_unmapped: bool = False,
            collection_version: str | None = None, reviewer: str | None = None, why: str = "",
            dry_run: bool = False) -> MigrationReport:
    """Carry judgments to new document IDs after rechunking, as a new version. All or nothing.

    `idmap`: a map file (OLD_ID<TAB>NEW_ID lines, core.migrate) or an `IdMap`.
    Every judgment (each reviewer's, and adjudications) of a mapped document
    is carried to each of its new IDs and marked `needs_review`; the judgment
    on the old ID is removed (history and the `before` version keep it).
    Judgments whose document is not in the map are reported in `unmapped`,
    and left as they are (or removed with `drop_unmapped`). The labels before
    are frozen as `before` (default `<version>-before`; no new freeze when
    the latest version already holds them), the labels after as `version`
    (default `migrated-<UTC time>`): one journal record does it all.
    `collection_version`: the new corpus's version, for labels set from now on.
    """
    from rankgate.core.migrate import IdMap, plan, read_map

    with ws._mutex:
        ws._check_writable()
        ws._no_peeking("a migration")
        m = idmap if isinstance(idmap, IdMap) else read_map(idmap)
        who, now = ws._stamp(reviewer)
        version = version or "migrated-" + now[:19].replace("-", "").replace(":", "")
        check_version_name(version, ws._versions, str(ws.path))
        digest = ws.content_hash()
        latest = list(ws._versions.values())[-1] if ws._versions else None
        if before is None and latest is not None and latest["content_hash"] == digest:
            before_name, freeze_before = latest["name"], False
        else:
            before_name, freeze_before = before or f"{version}-before", True
            if before_name == version:
                raise InputError(str(ws.path), f"the versions before and after the migration need two names "
                                 f"(both are {version!r})")
            check_version_name(before_name, ws._versions, str(ws.path))
        p = plan(_judgments(ws), m, drop_unmapped=drop_unmapped)
        if not p:
            raise InputError(m.path, "none of its old IDs is a judged document; nothing was migrated (is it "
                             "the map for this workspace?)")
        report = MigrationReport(m.path, version, before_name, dropped_unmapped=drop_unmapped, dry_run=dry_run)
        reason_of = why or f"migrate {Path(m.path).name}"
        batch = Batch(ws, who, now)
        if freeze_before:
            batch.ops.append(["version", ws._version_record(before_name, now, who, digest, ws._live,
                                                            ws._next_event, f"before {reason_of}")])
            batch.event("freeze", None, None, None, {"version": before_name, "content_hash": digest,
                                                     "labels": ws._live}, f"before {reason_of}")
        _retire_and_carry(ws, batch, p, m, reason_of)
        _summarize(report, p)
        if collection_version is not None:
            batch.ops.append(["meta", {"collection_version": collection_version}])
        _freeze_after(ws, batch, version, f"after {reason_of}")
        if not dry_run:
            ws._commit(batch.ops, batch.events)
        return report


def _judgments(ws) -> list[tuple]:
    """(query, doc, reviewer or None for the adjudication, judgment) of every standing judgment."""
    rows = []
    for q in ws._queries:
        adjq = ws._adj.get(q, {})
        for d, revs in ws._labels.get(q, {}).items():
            for name, r in revs.items():
                if r.get("removed") is None:
                    rows.append((q, d, name, r))
            if standing(adjq.get(d)):
                rows.append((q, d, None, adjq[d]))
    return rows


def _retire_and_carry(ws, batch: Batch, p, m, reason_of: str) -> None:
    """The ops and events: each old judgment removed, each carried one set on its new document."""
    now = batch.now
    for q, old, key in p.retired:
        rec = ws._labels[q][old][key] if key is not None else ws._adj[q][old]
        targets = m.targets.get(old)
        note = f"{old} -> {', '.join(targets)}" if targets else f"{old} is not in the map (dropped)"
        batch.ops.append(["review" if key is not None else "adjudication", dict(rec, updated=now, removed=now)])
        batch.event("remove", q, old, label_state(rec), None, f"{reason_of}: {note}",
                    "reviewer" if key is not None else "adjudication")
    # Within a pair, the judgments land in the order they were made, so "the latest" stays the latest.
    for c in sorted(p.carried, key=lambda c: c.state.get("updated", "")):
        existing = (ws._labels.get(c.query, {}).get(c.doc, {}).get(c.key) if c.key is not None
                    else ws._adj.get(c.query, {}).get(c.doc))
        s = c.state
        rec = {"query": c.query, "doc": c.doc, "grade": s["grade"], "reason": s["reason"],
               "collection_version": s["collection_version"], "reviewer": s["reviewer"],
               "created": s.get("created") or now, "updated": now, "removed": None, "needs_review": True,
               "migrated_from": list(c.sources)}
        if c.key is None and s.get("grades"):
            rec["grades"] = dict(s["grades"])
        batch.ops.append(["review" if c.key is not None else "adjudication", rec])
        batch.event("migrate", c.query, c.doc, label_state(existing), label_state(rec),
                    f"{reason_of}: {', '.join(c.sources)} -> {c.doc}",
                    "reviewer" if c.key is not None else "adjudication")


def _summarize(report: MigrationReport, p) -> None:
    """What was carried (by pair), merged from several old IDs, left unmapped, and retired."""
    by_pair: dict[tuple[str, str], dict] = {}
    for c in p.carried:
        item = by_pair.setdefault((c.query, c.doc), {"query": c.query, "doc": c.doc, "from": [], "reviewers": []})
        for src in c.sources:
            if src not in item["from"]:
                item["from"].append(src)
        item["reviewers"].append(c.key if c.key is not None else f"adjudication ({c.state['reviewer']})")
    report.carried = list(by_pair.values())
    report.merged = [item for item in report.carried if len(item["from"]) > 1]
    unmapped: dict[tuple[str, str], dict] = {}
    for q, d, key in p.unmapped:
        item = unmapped.setdefault((q, d), {"query": q, "doc": d, "reviewers": []})
        item["reviewers"].append(key if key is not None else "adjudication")
    report.unmapped = list(unmapped.values())
    report.retired = len(p.retired)


def _freeze_after(ws, batch: Batch, version: str, note: str) -> None:
    """The version after: its hash and counts are those of the labels once the batch's ops apply."""
    labels, adj = _simulate(ws, batch.ops)
    finals = pair_labels(labels, adj)
    after_hash = content_hash((q, d, s["grade"]) for q, per in finals.items() for d, s in per.items())
    count = sum(len(per) for per in finals.values())
    batch.ops.append(["version", ws._version_record(version, batch.now, batch.who, after_hash, count,
                                                    ws._next_event + len(batch.events), note)])
    batch.event("freeze", None, None, None, {"version": version, "content_hash": after_hash, "labels": count},
                note)


def _simulate(ws, ops: list) -> tuple[dict, dict]:
    """The judgments and adjudications as they would be once `ops` (reviews, adjudications) apply."""
    labels = {q: {d: dict(revs) for d, revs in per.items()} for q, per in ws._labels.items()}
    adj = {q: dict(per) for q, per in ws._adj.items()}
    for kind, rec in ops:
        if kind == "review":
            put_review(labels.setdefault(rec["query"], {}).setdefault(rec["doc"], {}), rec)
        elif kind == "adjudication":
            adj.setdefault(rec["query"], {})[rec["doc"]] = rec
            labels.setdefault(rec["query"], {}).setdefault(rec["doc"], {})
    return labels, adj
