#!/usr/bin/env python3
"""A deterministic lexical judge for trying `rankgate labels suggest` offline.

Reads one JSON request a line on stdin ({"id", "query", "query_text", "notes", "doc", "doc_text"}) and
writes one answer a line on stdout ({"id", "grade", "reason", "confidence"}: the request's id, so
rankgate matches each answer to its request), flushing after each. The
grade comes from term overlap: the share of the question's words, and of the assessor's notes'
words, that the passage contains. It is a stand-in for a model, not a good judge: compare it with
the reviewers (`rankgate labels agreement`) before trusting it with anything.
"""

import json
import re
import sys

STOP = set("""a an and are as at be but by can do does for from get got has have how i if in is it its me my
no not of on or our so than that the their then there these this to up us was we what when where which who
why will with you your about after again all any back been before being both did done down each else ever
into just like more most much must need only other out over same should some such them they too under use
used very were while would yes one two""".split())


def terms(text: str) -> set[str]:
    words = re.findall(r"[a-z0-9][a-z0-9_.-]*[a-z0-9]|[a-z0-9]", text.lower())
    return {w[:6] for w in words if w not in STOP and len(w) > 1}  # a crude stem: the first six letters


def judge(req: dict) -> dict:
    doc = terms(req.get("doc_text", ""))
    q, notes = terms(req.get("query_text", "")), terms(req.get("notes", ""))
    q_share = len(q & doc) / len(q) if q else 0.0
    n_share = len(notes & doc) / len(notes) if notes else 0.0
    score = 0.4 * q_share + 0.6 * n_share
    grade = 3 if score >= 0.55 else 2 if score >= 0.4 else 1 if score >= 0.25 else 0
    shared = sorted((q | notes) & doc)[:6]
    reason = (f"shares {len(q & doc)} of {len(q)} question terms and {len(notes & doc)} of {len(notes)} "
              f"note terms" + (f" ({', '.join(shared)})" if shared else ""))
    return {"grade": grade, "reason": reason, "confidence": round(min(1.0, abs(score - 0.4) * 2 + 0.3), 2)}


def main() -> None:
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        print(json.dumps(dict(judge(req), id=req["id"])), flush=True)  # the answer carries the request's id


if __name__ == "__main__":
    main()
