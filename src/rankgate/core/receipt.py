"""The receipt: the decision plus what it was computed from, hashed, so it can be re-checked.

`build_receipt` records every input file with its SHA-256, the policy in force
(every key the decision depends on), the runs' metadata, the invocation (the
inputs and flags as given, and the folder they were given from), and the
whole result. `verify_receipt` re-reads the inputs, checks every hash,
recomputes the gate from the recorded invocation (on the recorded `as_of`
date, so a waiver's expiry is judged as it was), and names each difference.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from pathlib import Path
from types import SimpleNamespace

from rankgate import __version__
from rankgate.core.bundle import Bundle, sha256_file
from rankgate.core.errors import InputError, ValidationError
from rankgate.core.measures import DESCRIPTIONS, Measure

RECEIPT_VERSION = 2
INVOCATION_KEYS = ("benchmark", "qrels", "runs", "queries", "qrels_format", "run_format", "policy", "k",
                   "rel_level", "missing_queries", "short_rankings", "measure", "must_pass", "baseline", "candidate",
                   "allow_snapshot_mismatch", "resamples", "seed", "acl")
PATH_KEYS = ("benchmark", "qrels", "queries", "policy", "acl")


def input_files(bundle: Bundle, policy) -> list[tuple[str, str]]:
    """(role, path) of every file the decision read: the bundle's, then each policy file."""
    files = list(bundle.files)
    for src in policy.sources or ([policy.source] if policy.source else []):
        if ("policy", str(src)) not in files:
            files.append(("policy", str(src)))
    return files


def _labels_source(inputs: list[dict], meta: dict) -> dict | None:
    """The labels the decision read: the qrels file's path and sha256, and, when its header names them
    (a `rankgate labels export`), the frozen version it was exported from and its labels' content hash."""
    qrels = next((i for i in inputs if i["role"] == "qrels"), None)
    if qrels is None:
        return None
    out = {"path": qrels["path"], "sha256": qrels["sha256"]}
    if meta.get("version"):
        out["exported_from"] = str(meta["version"])
    if meta.get("content_hash"):
        out["content_hash"] = str(meta["content_hash"])
    return out


def build_receipt(result: dict, bundle: Bundle, policy, exit_code: int, invocation: dict | None = None) -> dict:
    inputs = [{"role": role, "path": path, "sha256": sha256_file(path), "bytes": os.path.getsize(path)}
              for role, path in input_files(bundle, policy)]
    measures: list[Measure] = [r.measure for r in policy.effective_rules() if r.measure is not None]
    measures += list(policy.measures)
    return {
        "receipt_version": RECEIPT_VERSION,
        "rankgate_version": __version__,
        "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "exit_code": exit_code,
        "decision": result.get("decision"),
        "as_of": result.get("as_of"),
        "k": policy.k,
        "rel_level": policy.checks.rel_level,
        "policy": policy.as_dict(),
        "measure_definitions": {m.name: f"{DESCRIPTIONS[m.family]}"
                                + (f", k={m.cutoff}" if m.cutoff is not None else "")
                                + (f", relevant when grade >= {m.rel}" if m.rel is not None else "")
                                for m in dict.fromkeys(measures)},
        "inputs": inputs,
        "runs": {name: {"path": run.path, "format": run.format, "metadata": run.meta,
                        "queries": len(run.query_codes), "latency_ms": len(run.latency_ms),
                        "context_tokens": len(run.context_tokens)}
                 for name, run in bundle.runs.items()},
        "qrels_metadata": bundle.qrels.meta,
        "labels": _labels_source(inputs, bundle.qrels.meta),
        "binding": result.get("binding"),
        "waivers_used": [w for w in result.get("waivers", []) if w.get("used")],
        "significance": result.get("significance"),
        "invocation": invocation or {},
        "result": result,
    }


def invocation_of(args, command: str = "gate") -> dict:
    """The inputs and flags of a CLI call, as given, and the folder they were given from."""
    return {"command": command, "cwd": os.getcwd(),
            "args": {key: getattr(args, key, None) for key in INVOCATION_KEYS}}


def write_atomic(path: str | Path, text: str, mode: int = 0o644) -> None:
    """Write a whole file or nothing: a temp file beside it, fsync, then rename over.

    A symlink's target is written (the link stays); an existing file keeps its mode (`mode` is for a new
    one); a path that exists and is not a regular file (a pipe, a device) is refused."""
    from rankgate.core.outfile import output_target

    path, kept = output_target(path)
    if kept is not None:
        mode = kept
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


def write_output(path: str | Path, text: str, what: str = "the receipt") -> None:
    """write_atomic with a one-line InputError for a missing folder or a permission problem."""
    try:
        write_atomic(path, text)
    except (FileNotFoundError, NotADirectoryError):
        raise InputError(str(path), f"cannot write {what}: the folder does not exist") from None
    except PermissionError:
        raise InputError(str(path), f"cannot write {what}: permission denied") from None
    except IsADirectoryError:
        raise InputError(str(path), f"cannot write {what}: it is a folder") from None
    except OSError as e:
        raise InputError(str(path), f"cannot write {what}: {e.strerror or e}") from None


def write_receipt(path: str | Path, receipt: dict) -> None:
    write_output(path, json.dumps(receipt, indent=2, sort_keys=False) + "\n")


# ---- verify ---------------------------------------------------------------------------------------

@dataclass
class Verification:
    receipt: str
    status: str  # verified, mismatch, unreadable
    inputs: list[dict] = field(default_factory=list)
    differences: list[str] = field(default_factory=list)
    recorded_decision: str | None = None
    recomputed_decision: str | None = None
    error: str | None = None

    @property
    def exit_code(self) -> int:
        return {"verified": 0, "mismatch": 3}.get(self.status, 2)

    def as_dict(self) -> dict:
        out = {"receipt": self.receipt, "status": self.status, "decision": self.recorded_decision,
               "recomputed_decision": self.recomputed_decision, "inputs": self.inputs,
               "differences": self.differences}
        if self.error:
            out["error"] = self.error
        return out


def _read_receipt(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except FileNotFoundError:
        raise InputError(path, "no such file") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise InputError(path, f"not a receipt: invalid JSON ({getattr(e, 'msg', e)})") from None
    except OSError as e:
        raise InputError(path, f"cannot read the receipt: {e.strerror}") from None
    if not isinstance(data, dict) or not isinstance(data.get("inputs"), list) or "result" not in data:
        raise InputError(path, "not a rankgate receipt (expected 'inputs' and 'result')")
    inv = data.get("invocation")
    if not isinstance(inv, dict) or not isinstance(inv.get("args"), dict):
        raise InputError(path, "the receipt records no invocation (written by an older rankgate): "
                         "it cannot be recomputed")
    return data


def _base_folder(data: dict, root: str | None) -> str:
    if root:
        return root
    first = next((i.get("path") for i in data["inputs"] if isinstance(i, dict) and i.get("path")), None)
    cwd = data["invocation"].get("cwd")
    if first and not os.path.isabs(first) and not os.path.exists(first) and cwd and \
            os.path.exists(os.path.join(cwd, first)):
        return cwd
    return "."


def _rebase(path, base: str):
    if not isinstance(path, str) or not path or os.path.isabs(path) or base == ".":
        return path
    return os.path.join(base, path)


def _norm(path: str) -> str:
    return os.path.normpath(os.path.abspath(path))


def diff(a, b, where: str, out: list[str], limit: int = 50) -> None:
    """The differences between recorded (a) and recomputed (b) data, as `path: receipt X, recomputed Y`."""
    if len(out) >= limit:
        return
    if isinstance(a, dict) and isinstance(b, dict):
        for key in list(a) + [k for k in b if k not in a]:
            sub = f"{where}.{key}" if where else str(key)
            if key not in b:
                out.append(f"{sub}: in the receipt, not recomputed")
            elif key not in a:
                out.append(f"{sub}: recomputed, not in the receipt")
            else:
                diff(a[key], b[key], sub, out, limit)
        return
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            out.append(f"{where}: receipt has {len(a)} entries, recomputed {len(b)}")
            return
        for i, (x, y) in enumerate(zip(a, b)):
            diff(x, y, f"{where}[{i}]", out, limit)
        return
    num = (int, float)
    if isinstance(a, num) and isinstance(b, num) and not isinstance(a, bool) and not isinstance(b, bool):
        if a == b or (math.isfinite(a) and math.isfinite(b) and abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))):
            return
    elif a == b:
        return
    out.append(f"{where}: receipt {json.dumps(a)[:80]}, recomputed {json.dumps(b)[:80]}")


def verify_receipt(path: str, root: str | None = None) -> Verification:
    """Re-read the inputs, check every hash, recompute the decision, and compare (see the module's doc)."""
    from rankgate.core.bundle import load_bundle
    from rankgate.core.formats import split_run_spec
    from rankgate.core.gate import gate_bundle
    from rankgate.core.policy import OVERRIDES, resolve
    from rankgate.core.validate import validate

    data = _read_receipt(path)
    v = Verification(path, "verified", recorded_decision=data.get("decision"))
    base = _base_folder(data, root)
    unreadable = []
    for item in data["inputs"]:
        if not isinstance(item, dict) or not isinstance(item.get("path"), str):
            raise InputError(path, "not a rankgate receipt: an input without a path")
        p = _rebase(item["path"], base)
        entry = {"role": item.get("role"), "path": item["path"]}
        try:
            digest = sha256_file(p)
        except OSError as e:
            entry["status"] = "unreadable"
            unreadable.append(f"{item.get('role')} {item['path']}: {e.strerror or 'cannot read'}")
        else:
            entry["status"] = "ok" if digest == item.get("sha256") else "changed"
            if entry["status"] == "changed":
                v.differences.append(f"{item.get('role')} {item['path']}: sha256 differs "
                                     f"(receipt {str(item.get('sha256'))[:12]}…, now {digest[:12]}…)")
        v.inputs.append(entry)
    if unreadable:
        v.status = "unreadable"
        v.error = "; ".join(unreadable)
        return v

    args = dict(data["invocation"]["args"])
    for key in PATH_KEYS:
        if not (key == "acl" and args.get(key) == "corpus"):  # "corpus" names no file
            args[key] = _rebase(args.get(key), base)
    runs = []
    for spec in args.get("runs") or []:
        name, p = split_run_spec(_rebase(spec, base))
        if name is None:
            name, p = split_run_spec(spec)
            p = _rebase(p, base)
        runs.append(p if name is None else f"{name}={p}")
    args["runs"] = runs
    for key in ("measure", "must_pass"):
        args[key] = args.get(key) or []
    flags = SimpleNamespace(**{k: args.get(k) for k in INVOCATION_KEYS})
    overrides = {key: args.get(key) for key in OVERRIDES if key != "measures"} | {"measures": args["measure"]}
    as_of = data.get("as_of") or data["result"].get("as_of")
    try:
        as_of = date.fromisoformat(as_of) if as_of else None
    except (TypeError, ValueError):
        raise InputError(path, f"not a receipt: 'as_of' is not a date ({as_of!r})") from None
    try:
        bundle = load_bundle(flags.qrels, flags.runs, benchmark=flags.benchmark, queries=flags.queries,
                             qrels_format=flags.qrels_format or "auto", run_format=flags.run_format or "auto",
                             acl=flags.acl)
        policy = resolve(overrides, bundle)
        problems = validate(bundle.qrels, list(bundle.runs.values()), policy.checks, bundle.no_answer)
        if problems:
            raise ValidationError(problems)
        result = gate_bundle(bundle, policy, as_of=as_of)
    except (InputError, ValidationError) as e:
        if v.differences:  # a changed input that no longer reads is a mismatch, not a broken receipt
            v.status = "mismatch"
            v.differences.append(f"recomputing failed: {e}")
            return v
        raise
    v.recomputed_decision = result.data["decision"]
    now = {(role, _norm(p)) for role, p in input_files(bundle, policy)}
    then = {(i.get("role"), _norm(_rebase(i["path"], base))) for i in data["inputs"]}
    for role, p in sorted(now - then):
        v.differences.append(f"inputs: the recomputation read {role} {os.path.relpath(p)}, not in the receipt")
    for role, p in sorted(then - now):
        v.differences.append(f"inputs: the receipt lists {role} {os.path.relpath(p)}, not read by the recomputation")
    code = 0 if result.accepted else 3
    diff(data.get("decision"), result.data["decision"], "decision", v.differences)
    diff(data.get("exit_code"), code, "exit_code", v.differences)
    diff(data.get("policy"), policy.as_dict(), "policy", v.differences)
    diff(data["result"], json.loads(json.dumps(result.data)), "result", v.differences)
    if v.differences:
        v.status = "mismatch"
    return v
