"""A cache of the review's scores, so that re-opening a large benchmark does not score every run again.

Scoring 3 runs of a million rows each costs about 1.2 CPU seconds at every
open, for the same numbers as last time. An entry holds, per run, the
per-query values of every measure the review shows and the labels they were
scored with (query, document, grade). It is keyed by what the labels cannot
change: each run file as it is (path, size, modification time, inode, run
name), the measures, k and the relevance level, the queries without an answer,
the rankgate version and the engine's own source files. On open the labels of
now are compared with the entry's: the queries whose labels differ (edited
since, by the app or `rankgate labels`) are scored again one by one (the
model's `score_query`, as after a grade key), the rest is taken as it is.
With many changed queries the whole review is scored again and the entry
rewritten.

The entry also keeps what the review counts from the same labels and runs (`derived`): per query, the
unjudged documents of any run's top k and of the pair's, and per run the judged and ranked documents of
its top k. A re-open whose labels are the entry's (no changed query), whose review lists the same queries
in the same order and compares the same pair takes them as they are (about 0.05 CPU s of 10k queries x 3
runs of 100); anything else counts them afresh.

Small reviews (fewer than MIN_ROWS ranked rows) are scored directly. Entries
live beside the parsed-run cache (`cache/scores/` in the data folder); the
newest KEEP are kept.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import field
from pathlib import Path

from rankgate.core.fastclass import dataclass  # the standard one, made when first used (import cost)

import numpy as np

from rankgate.core.version import __version__
from rankgate.tui.runcache import racy

FORMAT = 1
MIN_ROWS = 200_000  # fewer ranked rows (all runs): scored directly
KEEP = 8  # entries kept (the newest)
RESCORE_AT_MOST = 500  # more changed queries than this: the whole review is scored again


@dataclass
class Cached:
    """An entry read back: per run, its evaluated queries' IDs and {measure name: values}; the queries whose
    labels differ from the entry's (to score again)."""

    qids: list[str]
    values: dict[str, dict[str, np.ndarray]]
    changed: set[str] = field(default_factory=set)
    fingerprinted: bool = True  # False: written before entries kept their labels' digest (written again)
    derived: dict | None = None  # the counts (`derived_of`), None: not kept (written again)


def cache_dir() -> Path:
    from rankgate.store.paths import data_dir, make_private_dir

    path = data_dir() / "cache" / "scores"
    make_private_dir(path)
    return path


def _engine_stamp() -> list:
    """The engine's and the measures' source files as they are (a development checkout edits them without a
    new version number)."""
    import rankgate.core.engine as engine
    import rankgate.core.measures as measures

    out = []
    for mod in (engine, measures):
        try:
            st = os.stat(mod.__file__)
            out.append([st.st_size, st.st_mtime_ns])
        except (OSError, TypeError):
            out.append(None)
    return out


def key(runs: dict, measures: list, k: int, level: int, no_answer, *, min_rows: int | None = None) -> str | None:
    """The entry's name for these runs (each a core `Run` read from its file) and settings; None when the
    review is small or a run has no file to stand for it."""
    if sum(len(r) for r in runs.values()) < (MIN_ROWS if min_rows is None else min_rows):
        return None
    ident: list = [FORMAT, __version__, _engine_stamp(), [str(m) for m in measures], k, level,
                   sorted(no_answer)]
    for name, run in runs.items():
        try:
            st = os.stat(run.path)
        except (OSError, TypeError, ValueError):
            return None
        if racy(st):  # modified a moment ago: an edit in place could keep its size and time (runcache.RACY_S)
            return None
        ident.append([name, run.name, os.path.realpath(run.path), st.st_size, st.st_mtime_ns, st.st_ino])
    return hashlib.sha256(json.dumps(ident).encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _label_text(qrels) -> str | None:
    """One line a label: query, document, grade (unit separators between); None when an ID holds a
    separator or a line break (such labels are not cached)."""
    qn, dn = qrels.catalog.queries.names, qrels.catalog.docs.names
    n = len(qrels.q)
    rows = zip(map(qn.__getitem__, qrels.q.tolist()), map(dn.__getitem__, qrels.doc.tolist()),
               map(str, qrels.grade.tolist()))
    text = "\n".join(map("\x1f".join, rows))  # (maps and joins: no Python loop a label)
    if text.count("\n") != max(n - 1, 0) or text.count("\x1f") != 2 * n:
        return None
    return text


def _fingerprint(qrels) -> str | None:
    """A digest of the labels as `_label_text` would write them, from their arrays and the catalog's names
    (about a millisecond a 10,000 labels, where the text takes seven): equal digests, equal texts. None when
    a name holds a line break."""
    h = hashlib.sha256()
    for codes, names in ((qrels.q, qrels.catalog.queries.names), (qrels.doc, qrels.catalog.docs.names)):
        used = names[:int(codes.max()) + 1] if len(codes) else []
        text = "\n".join(used)
        if used and text.count("\n") != len(used) - 1:
            return None
        h.update(b"%d\n" % len(used))
        h.update(text.encode("utf-8", "surrogatepass"))
    for a, dtype in ((qrels.q, np.int64), (qrels.doc, np.int64), (qrels.grade, np.int64)):
        h.update(np.ascontiguousarray(a, dtype).tobytes())
    return h.hexdigest()


def _label_lines(qrels) -> list[str] | None:
    text = _label_text(qrels)
    return None if text is None else text.split("\n") if text else []


def load(name: str | None, qrels, *, folder: Path | None = None) -> Cached | None:
    """The entry `name` with the queries whose labels changed since it was written; None: no usable entry,
    or more changed queries than RESCORE_AT_MOST."""
    if name is None:
        return None
    where = (folder or cache_dir()) / f"{name}.npz"
    if not where.is_file():
        return None
    try:
        with np.load(where, allow_pickle=False) as z:
            header = json.loads(z["header"].tobytes().decode("utf-8", "surrogatepass"))
            labels = z["labels"].tobytes().decode("utf-8", "surrogatepass")
            values = {run: {m: z[f"v{i}_{j}"] for j, m in enumerate(ms)}
                      for i, (run, ms) in enumerate(header["runs"])}
            derived = _derived_from(z, header.get("derived"))
        qids = header["qids"]
        if any(len(v) != len(qids) for per in values.values() for v in per.values()):
            return None
    except Exception:  # a torn or foreign entry: score again
        return None
    same = header.get("fingerprint") is not None and header["fingerprint"] == _fingerprint(qrels)
    text = None if same else _label_text(qrels)
    if not same and text is None:
        return None
    if same or text == labels:  # the labels as they were (the common re-open): no text, no sets to build
        changed = set()
    else:
        before = set(labels.split("\n")) if labels else set()
        now = set(text.split("\n")) if text else set()
        changed = {line.split("\x1f", 1)[0] for line in before ^ now}
    if len(changed) > RESCORE_AT_MOST:
        return None
    try:
        os.utime(where)  # recently used: kept
    except OSError:
        pass
    return Cached(qids, values, changed, header.get("fingerprint") is not None, derived)


DERIVED = ("unjudged", "unjudged_pair")  # per query of the review (and per run: topk_judged, topk_ranked)


def derived_of(model) -> dict:
    """Copies of the model's counts that `ReviewModel` takes from an entry (`_count_labels`, `unjudged_in_pair`),
    with what they hold for: the review's queries in order (a digest), the pair and the runs."""
    return {"qids": qids_digest(model.qids), "pair": [model.baseline, model.candidate], "runs": list(model.runs),
            "unjudged": model.unjudged.copy(), "unjudged_pair": model.unjudged_pair.copy(),
            "topk_judged": [model.topk_judged[r].copy() for r in model.runs],
            "topk_ranked": [model.topk_ranked[r].copy() for r in model.runs]}


def derived_for(cached: Cached | None, model) -> dict | None:
    """The entry's counts (`derived_of`) when they hold for this review: its scores were taken with no label
    changed since, without an ACL, for the same runs and the same queries in the same order."""
    got = getattr(cached, "derived", None)
    if got is None or not model.scored_from_cache or cached.changed or model.access is not None:
        return None
    if got["runs"] != list(model.runs) or got["qids"] != qids_digest(model.qids):
        return None
    arrays = (got["unjudged"], got["unjudged_pair"], *got["topk_judged"], *got["topk_ranked"])
    return got if all(len(a) == model.nq for a in arrays) else None


def qids_digest(qids: list[str]) -> str:
    return hashlib.sha256("\n".join(qids).encode("utf-8", "surrogatepass")).hexdigest()


def _derived_from(z, header: dict | None) -> dict | None:
    if not isinstance(header, dict):
        return None
    got = {"qids": header["qids"], "pair": header["pair"], "runs": header["runs"]}
    for name in DERIVED:
        got[name] = z[f"d_{name}"]
    for name in ("topk_judged", "topk_ranked"):
        got[name] = [z[f"d_{name}_{i}"] for i in range(len(header["runs"]))]
    return got


def save(name: str | None, qrels, qids: list[str], values: dict[str, dict], *, folder: Path | None = None,
         derived: dict | None = None) -> None:
    """Write the entry: `values` {run: {measure: per-query values in `qids`' order}} scored with `qrels`, and the
    counts made from them (`derived_of`). A failure to write is ignored (the next open scores again)."""
    lines = _label_lines(qrels) if name is not None else None
    if lines is None:
        return
    try:
        folder = folder or cache_dir()
        arrays: dict[str, np.ndarray] = {}
        runs = []
        for i, (run, per) in enumerate(values.items()):
            runs.append([run, [str(m) for m in per]])
            for j, v in enumerate(per.values()):
                arrays[f"v{i}_{j}"] = np.asarray(v, np.float64)
        header = {"qids": list(qids), "runs": runs, "fingerprint": _fingerprint(qrels)}
        if derived is not None:
            header["derived"] = {k: derived[k] for k in ("qids", "pair", "runs")}
            for k in DERIVED:
                arrays[f"d_{k}"] = np.asarray(derived[k], np.int64)
            for k in ("topk_judged", "topk_ranked"):
                for i, a in enumerate(derived[k]):
                    arrays[f"d_{k}_{i}"] = np.asarray(a, np.int64)
        arrays["header"] = np.frombuffer(json.dumps(header).encode("utf-8", "surrogatepass"), np.uint8)
        arrays["labels"] = np.frombuffer("\n".join(lines).encode("utf-8", "surrogatepass"), np.uint8)
        where = folder / f"{name}.npz"
        tmp = where.with_name(where.name + f".{os.getpid()}.tmp")
        with open(tmp, "wb") as f:
            np.savez(f, **arrays)
        os.replace(tmp, where)
        _prune(folder)
    except (OSError, ValueError):
        pass


def _prune(folder: Path) -> None:
    entries = sorted(folder.glob("*.npz"), key=lambda p: p.stat().st_mtime_ns, reverse=True)
    for old in entries[KEEP:]:
        try:
            old.unlink()
        except OSError:
            pass
