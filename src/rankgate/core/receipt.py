"""The receipt: the decision plus what it was computed from, hashed, so it can be re-checked."""

from __future__ import annotations

import json
import os
import tempfile
from datetime import datetime, timezone
from pathlib import Path

from rankgate import __version__
from rankgate.core.bundle import Bundle, sha256_file
from rankgate.core.measures import DESCRIPTIONS, Measure

RECEIPT_VERSION = 1


def build_receipt(result: dict, bundle: Bundle, policy, exit_code: int) -> dict:
    inputs = [{"role": role, "path": path, "sha256": sha256_file(path), "bytes": os.path.getsize(path)}
              for role, path in bundle.files]
    if policy.source:
        inputs.append({"role": "policy", "path": policy.source, "sha256": sha256_file(policy.source),
                       "bytes": os.path.getsize(policy.source)})
    measures: list[Measure] = [r.measure for r in policy.effective_rules()] + list(policy.measures)
    return {
        "receipt_version": RECEIPT_VERSION,
        "rankgate_version": __version__,
        "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "exit_code": exit_code,
        "decision": result.get("decision"),
        "k": policy.k,
        "rel_level": policy.checks.rel_level,
        "policy": {
            "missing_queries": policy.checks.missing_queries,
            "short_rankings": policy.checks.short_rankings,
            "must_pass": list(policy.must_pass),
            "rules": [{"name": r.name, "measure": r.measure.name, "check": r.kind, "tolerance": r.tolerance,
                       "min": r.floor} for r in policy.effective_rules()],
        },
        "measure_definitions": {m.name: f"{DESCRIPTIONS[m.family]}"
                                + (f", k={m.cutoff}" if m.cutoff is not None else "")
                                + (f", relevant when grade >= {m.rel}" if m.rel is not None else "")
                                for m in dict.fromkeys(measures)},
        "inputs": inputs,
        "runs": {name: {"path": run.path, "format": run.format, "metadata": run.meta}
                 for name, run in bundle.runs.items()},
        "qrels_metadata": bundle.qrels.meta,
        "result": result,
    }


def write_atomic(path: str | Path, text: str, mode: int = 0o644) -> None:
    """Write a whole file or nothing: a temp file beside it, fsync, then rename over."""
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def write_receipt(path: str | Path, receipt: dict) -> None:
    from rankgate.core.errors import InputError

    try:
        write_atomic(path, json.dumps(receipt, indent=2, sort_keys=False) + "\n")
    except (FileNotFoundError, NotADirectoryError):
        raise InputError(str(path), "cannot write the receipt: the folder does not exist") from None
    except PermissionError:
        raise InputError(str(path), "cannot write the receipt: permission denied") from None
