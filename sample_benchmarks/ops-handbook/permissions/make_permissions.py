#!/usr/bin/env python3
"""Build the permissions variant of the ops-handbook sample (this folder).

    python make_permissions.py     # (re)write queries.jsonl, acl.jsonl and runs/*.jsonl, byte-identically

Four security runbooks are visible only to the `security` group (acl.jsonl). Three questions are asked
by a security engineer (groups oncall + security); every other question by an on-call engineer (oncall).
The runs are the parent folder's BM25 runs after the application's permission filter:

  bm25-plain          baseline: bm25-plain, filtered
  bm25-stemmed        bm25-stemmed, filtered (the candidate as it should ship)
  bm25-stemmed-cache  bm25-stemmed with a result cache that skips the filter: on q-status-page it serves
                      the security incident runbook (rank 9) to an on-call engineer -- one leak
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
PARENT = HERE.parent
RESTRICTED = ["ir-security-incident-01", "netsec-audit-logging-01", "netsec-secrets-rotation-02",
              "netsec-ssh-bastion-02"]
SECURITY_ASKS = {"q-leaked-key", "q-breach-evidence", "q-audit-log-retention"}
CACHE_SKIPS_FILTER = "q-status-page"


def load(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def write(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def groups(qid: str) -> list[str]:
    return ["oncall", "security"] if qid in SECURITY_ASKS else ["oncall"]


def filtered(rows: list[dict], name: str, skip: str | None = None) -> list[dict]:
    head = dict(rows[0]["meta"], name=name, filters="permission filter (make_permissions.py 1)"
                + (f"; skipped for results served from the cache ({skip})" if skip else ""))
    out = [{"meta": head}]
    for r in rows[1:]:
        q = r["query"]
        if q == skip or "security" in groups(q):
            ranking = r["ranking"]
        else:
            ranking = [x for x in r["ranking"] if x["doc"] not in RESTRICTED]
        out.append(dict(r, ranking=ranking))
    return out


def main() -> None:
    write(HERE / "queries.jsonl", [dict(q, groups=groups(q["id"])) for q in load(PARENT / "queries.jsonl")])
    write(HERE / "acl.jsonl", [{"doc": d, "groups": ["security"]} for d in RESTRICTED])
    plain, stemmed = load(PARENT / "runs" / "bm25-plain.jsonl"), load(PARENT / "runs" / "bm25-stemmed.jsonl")
    write(HERE / "runs" / "bm25-plain.jsonl", filtered(plain, "bm25-plain"))
    write(HERE / "runs" / "bm25-stemmed.jsonl", filtered(stemmed, "bm25-stemmed"))
    write(HERE / "runs" / "bm25-stemmed-cache.jsonl", filtered(stemmed, "bm25-stemmed-cache", CACHE_SKIPS_FILTER))


if __name__ == "__main__":
    main()
