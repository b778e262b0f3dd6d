"""Suggested judgments: what a judge (a model, a script) proposed, kept apart from the labels.

A suggestion is never a label: score, gate and export ignore them unless asked
(`--with-suggestions`). They live in an append-only journal beside the
workspace file (`<workspace>.suggestions.jsonl`), one JSON record a line,
fsynced after each batch:

    {"kind": "suggestion", "query", "doc", "grade", "reason", "confidence",
     "judge", "model", "prompt_hash", "at"}
    {"kind": "accepted", "query", "doc", "grade", "reviewer", "at", "judge", "suggested_at"}
    {"kind": "overlap", "query", "doc", "judge", "prompt_hash", "seed", "draw", "at"}
An overlap record puts a suggested pair in the experts' queue blind (core/judge_vote.py): the pairs of the
newest draw are the ones the gate checks the judge on.

The newest suggestion of a pair is its suggestion; older ones stay as its
history. A line cut short by a crash (no newline at the end of the file) is
skipped on reading and closed off before the next append, so what was stored
before it stays readable. No record holds an API key: a judge is recorded by
name, model and prompt hash.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from rankgate.core.fastclass import dataclass  # the standard one, made when first used (import cost)

from rankgate.store.storage import now_iso

SUFFIX = ".suggestions.jsonl"


@dataclass(frozen=True)
class Suggestion:
    query: str
    doc: str
    grade: int
    reason: str = ""
    confidence: float | None = None
    judge: str = ""
    model: str = ""
    prompt_hash: str = ""
    at: str = ""

    def as_dict(self) -> dict:
        return {"kind": "suggestion", "query": self.query, "doc": self.doc, "grade": self.grade,
                "reason": self.reason, "confidence": self.confidence, "judge": self.judge, "model": self.model,
                "prompt_hash": self.prompt_hash, "at": self.at}


def path_beside(workspace: str | os.PathLike) -> Path:
    p = Path(workspace)
    return p.with_name(p.name + SUFFIX)


class SuggestionBook:
    """The suggestions beside one workspace (read on open; `reload()` reads again)."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self.records: list[dict] = []
        self.damaged = 0  # lines that could not be read (a crash's torn line, an edit by hand)
        self.reload()

    @classmethod
    def beside(cls, workspace: str | os.PathLike) -> "SuggestionBook":
        return cls(path_beside(workspace))

    def reload(self) -> None:
        from rankgate.core.judge import parse_journal

        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            self.records, self.damaged = [], 0
            return
        self.records, self.damaged = parse_journal(data)

    # ---- reading ---------------------------------------------------------------------------------

    def latest(self) -> dict[tuple[str, str], Suggestion]:
        """The newest suggestion of every pair."""
        out: dict[tuple[str, str], Suggestion] = {}
        for r in self.records:
            if r["kind"] == "suggestion":
                out[(r["query"], r["doc"])] = _suggestion(r)
        return out

    def get(self, query: str, doc: str) -> Suggestion | None:
        return self.latest().get((query, doc))

    def history(self, query: str, doc: str) -> list[dict]:
        return [dict(r) for r in self.records if r["query"] == query and r["doc"] == doc]

    def accepted(self) -> dict[tuple[str, str], dict]:
        """Pairs whose suggestion an expert accepted as their judgment (the newest acceptance)."""
        return {(r["query"], r["doc"]): r for r in self.records if r["kind"] == "accepted"}

    def overlap(self) -> tuple[list[tuple[str, str]], int]:
        """The pairs of the newest overlap draw and its seed ([] and 0 when none was drawn)."""
        recs = [r for r in self.records if r["kind"] == "overlap"]
        if not recs:
            return [], 0
        draw = recs[-1].get("draw")
        return [(r["query"], r["doc"]) for r in recs if r.get("draw") == draw], int(recs[-1].get("seed", 0))

    def judges(self) -> list[dict]:
        """Who made the newest suggestions: each distinct judge name, model and prompt hash."""
        seen = {(s.judge, s.model, s.prompt_hash) for s in self.latest().values()}
        return [{"judge": j, "model": m, "prompt_hash": h} for j, m, h in sorted(seen)]

    def add_overlap(self, pairs: list[tuple[str, str]], seed: int) -> None:
        """Record a new overlap draw (it replaces an earlier one)."""
        now = now_iso()
        latest = self.latest()
        recs = [{"kind": "overlap", "query": q, "doc": d, "judge": latest[(q, d)].judge,
                 "prompt_hash": latest[(q, d)].prompt_hash, "seed": seed, "draw": now, "at": now} for q, d in pairs]
        self._append(recs)

    def __len__(self) -> int:
        return len(self.latest())

    # ---- writing ---------------------------------------------------------------------------------

    def add(self, suggestions: list[Suggestion]) -> None:
        """Append suggestions (stamped now when they carry no time) in one write, then fsync."""
        now = now_iso()
        recs = [dict(s.as_dict(), at=s.at or now) for s in suggestions]
        self._append(recs)

    def accept(self, query: str, doc: str, reviewer: str) -> dict:
        """Record that `reviewer` took the pair's suggestion as their judgment (the caller sets the label)."""
        s = self.get(query, doc)
        if s is None:
            raise KeyError((query, doc))
        rec = {"kind": "accepted", "query": query, "doc": doc, "grade": s.grade, "reviewer": reviewer,
               "at": now_iso(), "judge": s.judge, "suggested_at": s.at}
        self._append([rec])
        return rec

    def _append(self, recs: list[dict]) -> None:
        if not recs:
            return
        data = b"".join(json.dumps(r, ensure_ascii=False, sort_keys=True).encode("utf-8") + b"\n" for r in recs)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            size = os.fstat(fd).st_size
            if size:  # close off a line a crash cut short, so this batch starts on a line of its own
                with open(self.path, "rb") as f:
                    f.seek(size - 1)
                    if f.read(1) != b"\n":
                        data = b"\n" + data
            view = memoryview(data)
            while view:
                n = os.write(fd, view)
                view = view[n:]
            os.fsync(fd)
        finally:
            os.close(fd)
        self.records.extend(recs)


def _suggestion(r: dict) -> Suggestion:
    conf = r.get("confidence")
    return Suggestion(r["query"], r["doc"], int(r.get("grade", 0)), str(r.get("reason", "")),
                      None if conf is None else float(conf), str(r.get("judge", "")), str(r.get("model", "")),
                      str(r.get("prompt_hash", "")), str(r.get("at", "")))
