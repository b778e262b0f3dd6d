"""rankgate: score retrieval runs against reviewed labels and gate releases.

The public Python API (docs/api.md); names load on first use so that
`import rankgate` (and every CLI start) stays cheap, and pandas is imported
only when a DataFrame is asked for.

    import rankgate
    qrels = rankgate.qrels({"q1": {"d1": 2, "d2": 0}})          # a file, a dict or a DataFrame
    run = rankgate.run({"q1": {"d1": 1.5, "d2": 0.3}}, name="bm25")
    scores = rankgate.evaluate(qrels, run, ["nDCG@10", "RR@10"])
    scores.summary(); rankgate.to_frame(scores)
"""

from rankgate.core.version import __version__

_API = {
    "InputError": "rankgate.core.errors",
    "ValidationError": "rankgate.core.errors",
    "read_qrels": "rankgate.core.formats",
    "read_runs": "rankgate.core.formats",
    "qrels_from_dict": "rankgate.core.formats.objects",
    "run_from_dict": "rankgate.core.formats.objects",
    "qrels_from_frame": "rankgate.core.formats.objects",
    "run_from_frame": "rankgate.core.formats.objects",
    "read_queries": "rankgate.core.formats.corpus",
    "read_corpus": "rankgate.core.formats.corpus",
    "parse_measure": "rankgate.core.measures",
    "parse_measures": "rankgate.core.measures",
    "load_bundle": "rankgate.core.bundle",
    "run_gate": "rankgate.core.gate",
    "gate": "rankgate.api",  # `rankgate gate` itself, from Python: the command's layer (cli), loaded on first use
}

__all__ = [*_API, "qrels", "run", "evaluate", "to_frame", "__version__"]


def qrels(source, *, format: str = "auto", catalog=None):
    """Qrels from a file path (any format rankgate reads), a dict {qid: {docid: grade}}, a DataFrame
    (columns query_id, doc_id, relevance), or Qrels (returned as they are)."""
    from rankgate.core.formats import objects
    from rankgate.core.model import Qrels

    if isinstance(source, Qrels):
        return source
    if isinstance(source, dict):
        return objects.qrels_from_dict(source, catalog)
    if objects.is_frame(source):
        return objects.qrels_from_frame(source, catalog)
    _check_path(source, "qrels")
    from rankgate.core.formats import read_qrels

    return read_qrels(source, format, catalog)


def run(source, *, name: str | None = None, format: str = "auto", catalog=None):
    """One run from a file path, a dict {qid: {docid: score}}, a DataFrame (columns query_id, doc_id,
    score), or a Run (returned as it is)."""
    from rankgate.core.errors import InputError
    from rankgate.core.formats import objects
    from rankgate.core.model import LeanRun, Run

    if isinstance(source, (Run, LeanRun)):
        return source
    if isinstance(source, dict):
        return objects.run_from_dict(source, name or "run", catalog)
    if objects.is_frame(source):
        return objects.run_from_frame(source, name, catalog)
    _check_path(source, "a run")
    from rankgate.core.formats import read_runs

    runs = read_runs(f"{name}={source}" if name else source, format, catalog)
    if len(runs) != 1:
        raise InputError(str(source), f"holds {len(runs)} runs; rankgate.run reads one (rankgate.read_runs reads all)")
    return runs[0]


def evaluate(qrels, run, measures, *, rel_level: int = 1, missing: str = "error", **options):
    """Score one run: `qrels` and `run` as rankgate.qrels and rankgate.run take them; `measures` one
    name ("nDCG@10"), a comma-separated list, a list of names, or parsed measures. Returns Scores:
    `.qids`, `.values` (measure -> per-query array), `.summary()`, `.of(qid)`; to_frame for a table.
    `missing="zero"` scores queries without a ranking as 0 (trec_eval -c)."""
    import rankgate as _self
    from rankgate.core.engine import evaluate as _evaluate
    from rankgate.core.measures import Measure, parse_measures

    from rankgate.core.errors import InputError

    if isinstance(rel_level, bool) or not isinstance(rel_level, int):
        raise InputError("rel_level", f"expected a whole number (trec_eval's -l), found {rel_level!r}")
    if missing not in ("error", "zero"):
        raise InputError("missing", f"expected 'error' or 'zero', found {missing!r}")
    if not isinstance(measures, (str, Measure, list, tuple)):
        raise InputError("measures", f"expected a measure name such as 'nDCG@10', or a list of them, "
                         f"found {type(measures).__name__}")
    q = _self.qrels(qrels)
    r = _self.run(run, catalog=q.catalog)
    wanted = [measures] if isinstance(measures, (str, Measure)) else list(measures)
    if not all(isinstance(x, (str, Measure)) for x in wanted):
        raise InputError("measures", "expected measure names such as 'nDCG@10' or parsed measures")
    parsed = [m for x in wanted for m in ([x] if isinstance(x, Measure) else parse_measures(x))]
    return _evaluate(q, r, list(dict.fromkeys(parsed)), rel_level=rel_level, missing=missing, **options)


def _check_path(source, what: str) -> None:
    import os

    from rankgate.core.errors import InputError

    if not isinstance(source, (str, os.PathLike)):
        raise InputError(f"<{type(source).__name__}>", f"expected {what} as a file path, a dict, a DataFrame or "
                         f"rankgate's own object, found {type(source).__name__}")


def to_frame(scores, *, per_query: bool = True):
    """Scores (one, or a list) as a pandas DataFrame: per query (run, query_id, measure, value), or
    with per_query=False one row per run and a column per measure. Needs pandas."""
    from rankgate.core.formats.objects import scores_frame

    return scores_frame(scores, per_query)


def __dir__() -> list[str]:
    """Every public name, the lazily loaded ones too (tab completion)."""
    return sorted(set(globals()) | set(_API))


def __getattr__(name: str):
    if name in _API:
        import importlib

        return getattr(importlib.import_module(_API[name]), name)
    raise AttributeError(f"module 'rankgate' has no attribute {name!r}")
