"""The receipt: the decision plus what it was computed from, hashed, so it can be re-checked.

`build_receipt` records every input file with its SHA-256, the policy in force
(every key the decision depends on), the runs' metadata, the invocation (the
inputs and flags as given, and the folder they were given from), and the
whole result. It is written as an in-toto Statement v1: the subject is the
candidate run's file and sha256, the predicate is that body with one sha256
over all of it (`digest`); `core/signing.py` can wrap it in a signed DSSE
envelope. `verify_receipt` re-reads the inputs, checks every hash,
recomputes the gate from the recorded invocation (on the recorded `as_of`
date, so a waiver's expiry is judged as it was), rebuilds the whole body and
names each field that differs, and checks the digest and the signature.
Version 2 receipts (the body alone) still verify.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from pathlib import Path
from types import SimpleNamespace

from rankgate.core.version import __version__
from rankgate.core.bundle import Bundle, sha256_file
from rankgate.core.errors import InputError, ValidationError
from rankgate.core.measures import DESCRIPTIONS, Measure

RECEIPT_VERSION = 3
KNOWN_VERSIONS = (2, 3)  # 2: the body alone, as rankgate 0.1 wrote it first; 3: an in-toto Statement
STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PREDICATE_TYPE = "https://rankgate.dev/attestation/gate/v1"
INVOCATION_KEYS = ("benchmark", "qrels", "runs", "queries", "qrels_format", "run_format", "policy", "k",
                   "rel_level", "missing_queries", "short_rankings", "measure", "must_pass", "baseline", "candidate",
                   "allow_snapshot_mismatch", "resamples", "seed", "acl", "with_suggestions", "stability")
PATH_KEYS = ("benchmark", "qrels", "queries", "policy", "acl")
MAX_RECEIPT_BYTES = 512 * 2**20
# Fields not recomputed: when it was written, how (the recomputation follows it) and its own digest.
NOT_RECOMPUTED = ("created_at", "invocation", "digest", "inputs", "label_trust")
# label_trust: stale labels and the judge's vote (cli/trust.py), from the workspace, which is not an input file


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


def receipt_body(result: dict, bundle: Bundle, policy, exit_code: int, invocation: dict | None,
                 inputs: list[dict]) -> dict:
    """What the decision was and what it read: the receipt's body (the predicate of its statement)."""
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


def hashed_inputs(bundle: Bundle, policy) -> list[dict]:
    return [{"role": role, "path": path, "sha256": sha256_file(path), "bytes": os.path.getsize(path)}
            for role, path in input_files(bundle, policy)]


def _subject(body: dict) -> list[dict]:
    """The statement's subject: the candidate run's file and its sha256 (in-toto ResourceDescriptor)."""
    run = (body.get("runs") or {}).get((body.get("result") or {}).get("candidate")) or {}
    item = next((i for i in body.get("inputs", []) if i.get("role") == "run" and i.get("path") == run.get("path")),
                None)
    if item is None:
        return []
    return [{"name": item["path"], "digest": {"sha256": item["sha256"]}}]


def canonical(obj) -> bytes:
    """One byte string per JSON value (sorted keys, no spaces, UTF-8): what digests and signatures cover."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False).encode("utf-8")


def body_digest(body: dict) -> str:
    """The sha256 of the whole body but its own `digest` field."""
    import hashlib

    return hashlib.sha256(canonical({k: v for k, v in body.items() if k != "digest"})).hexdigest()


def statement(body: dict) -> dict:
    """The receipt as an in-toto Statement v1: subject the candidate run, predicate the body with its digest."""
    body = json.loads(json.dumps(body))
    body["digest"] = {"sha256": body_digest(body)}
    return {"_type": STATEMENT_TYPE, "subject": _subject(body), "predicateType": PREDICATE_TYPE, "predicate": body}


def build_receipt(result: dict, bundle: Bundle, policy, exit_code: int, invocation: dict | None = None,
                  trust: dict | None = None) -> dict:
    """`trust`: stale labels and the judge's vote (cli/trust.py), recorded as `label_trust`."""
    body = receipt_body(result, bundle, policy, exit_code, invocation, hashed_inputs(bundle, policy))
    if trust:
        body["label_trust"] = trust
    return statement(body)


def invocation_of(args, command: str = "gate") -> dict:
    """The inputs and flags of a CLI call, as given, and the folder they were given from."""
    return {"command": command, "cwd": os.getcwd(),
            "args": {key: getattr(args, key, None) for key in INVOCATION_KEYS}}


def write_atomic(path: str | Path, text: str, mode: int | None = None) -> None:
    """Write a whole file or nothing: a temp file beside it, fsync, then rename over.

    A symlink's target is written (the link stays); an existing file keeps its mode; a new one gets
    `mode`, or when None the mode the umask gives (as `cp` would: 0644 under the usual 022); a path that
    exists and is not a regular file (a named pipe too) is refused, but a character device (`/dev/null`) is
    written into."""
    from rankgate.core.outfile import is_stream, new_temp, output_target, write_stream

    if is_stream(path):  # -o /dev/null (a character device): written into, not replaced
        write_stream(path, text.encode("utf-8"))
        return
    path, kept = output_target(path)
    if kept is not None:
        mode = kept
    folder = path.parent if str(path.parent) else Path(".")
    fd, tmp = new_temp(folder, path.name, private=mode is not None)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        if mode is not None:
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
    except BrokenPipeError:  # the reader left (`| head`): the command's decided exit code stands (cli)
        raise
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
    signature: str | None = None  # valid, invalid: WHY (a key was given), not checked (no key given), None: unsigned
    written_by: str | None = None  # an older rankgate version that wrote the receipt (None: this one)
    not_checked: list[str] = field(default_factory=list)  # what this version writes and the older one did not

    @property
    def exit_code(self) -> int:
        return {"verified": 0, "mismatch": 3}.get(self.status, 2)

    def as_dict(self) -> dict:
        out = {"receipt": self.receipt, "status": self.status, "decision": self.recorded_decision,
               "recomputed_decision": self.recomputed_decision, "inputs": self.inputs,
               "differences": self.differences}
        if self.signature:
            out["signature"] = self.signature
        if self.written_by:
            out["written_by"] = f"rankgate {self.written_by} (verified by {__version__})"
        if self.not_checked:
            out["not_checked"] = self.not_checked
        if self.error:
            out["error"] = self.error
        return out


def _read_json(path: str):
    try:
        if os.path.exists(path) and not os.path.isfile(path):
            raise InputError(path, "not a receipt: expected a regular file")
        if os.path.isfile(path) and os.path.getsize(path) > MAX_RECEIPT_BYTES:
            raise InputError(path, f"not a receipt: over {MAX_RECEIPT_BYTES // 2**20} MiB")
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        raise InputError(path, "no such file") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise InputError(path, f"not a receipt: invalid JSON ({getattr(e, 'msg', e)})") from None
    except RecursionError:
        raise InputError(path, "not a receipt: nested too deeply") from None
    except OSError as e:
        raise InputError(path, f"cannot read the receipt: {e.strerror}") from None


@dataclass
class Opened:
    """A receipt as read: its body, the statement around it (None for a version 2 receipt), and, when it
    came in a signed envelope, the signed bytes and the signatures."""
    body: dict
    statement: dict | None = None
    payload: bytes | None = None
    signatures: list | None = None


def open_receipt(path: str) -> Opened:
    """Unwrap a receipt: a signed envelope, an in-toto statement, or a version 2 body."""
    from rankgate.core import signing

    data = _read_json(path)
    opened = Opened(body=data)
    if signing.is_envelope(data):
        data, opened.payload, opened.signatures = signing.open_envelope(data, path)
    if isinstance(data, dict) and "_type" in data:
        if data.get("_type") != STATEMENT_TYPE or data.get("predicateType") != PREDICATE_TYPE:
            raise InputError(path, f"not a rankgate receipt: _type {str(data.get('_type'))[:60]!r}, predicateType "
                             f"{str(data.get('predicateType'))[:60]!r} (expected {STATEMENT_TYPE} and "
                             f"{PREDICATE_TYPE})")
        opened.statement, data = data, data.get("predicate")
    opened.body = data
    where = _not_finite(opened.statement or data)
    if where is not None:  # Python's json reads NaN and Infinity; rankgate never writes them (JSON has neither)
        raise InputError(path, f"not a rankgate receipt: {where[0]} is {where[1]} (JSON has no NaN or Infinity)")
    if not isinstance(data, dict) or not isinstance(data.get("inputs"), list) or "result" not in data:
        result = isinstance(data, dict) and "accepted" in data and "checks" in data  # the gate's JSON (-o, stdout)
        raise InputError(path, "not a rankgate receipt (expected 'inputs' and 'result')" + (
            "; this is a gate's result: `-o` writes the result, `--receipt FILE` writes a receipt" if result else ""))
    if not isinstance(data["result"], dict) or not all(
            isinstance(i, dict) and isinstance(i.get("path"), str) for i in data["inputs"]):
        raise InputError(path, "not a rankgate receipt: 'result' must be an object and each input have a path")
    if not isinstance(data.get("runs", {}), dict) or not all(isinstance(r, dict) for r in data.get("runs", {}).values()):
        raise InputError(path, "not a rankgate receipt: 'runs' must map each run's name to an object")
    version = data.get("receipt_version")
    if type(version) is not int or version not in KNOWN_VERSIONS:
        raise InputError(path, f"receipt_version {json.dumps(version)[:20]} is not one this rankgate writes "
                         f"({', '.join(map(str, KNOWN_VERSIONS))})")
    if (version == 3) != (opened.statement is not None):
        raise InputError(path, f"receipt_version {version} " + ("is an in-toto statement" if version == 3 else
                         "is a plain body") + ", and this receipt is not")
    inv = data.get("invocation")
    if not isinstance(inv, dict) or not isinstance(inv.get("args"), dict):
        raise InputError(path, "the receipt records no invocation (written by an older rankgate): "
                         "it cannot be recomputed")
    for key, value in inv["args"].items():
        if not _arg_ok(key, value):
            raise InputError(path, f"not a rankgate receipt: invocation.args.{str(key)[:40]} is "
                             f"{json.dumps(value)[:40]}, not what rankgate gate writes there")
    if not isinstance(inv.get("cwd"), (str, type(None))):
        raise InputError(path, "not a rankgate receipt: invocation.cwd is not a folder name")
    return opened


def _not_finite(value) -> tuple[str, str] | None:
    """The first NaN or Infinity in a JSON value: (its path, e.g. `predicate.significance.seed`, and itself)."""
    todo = [("", value)]
    while todo:
        where, value = todo.pop()
        if isinstance(value, float) and not math.isfinite(value):
            return where or "the receipt", json.dumps(value)
        if isinstance(value, dict):
            todo.extend((f"{where}.{str(k)[:40]}" if where else str(k)[:40], v) for k, v in reversed(value.items()))
        elif isinstance(value, list):
            todo.extend((f"{where}[{i}]", v) for i, v in reversed(list(enumerate(value))))
    return None


INT_ARGS = ("k", "rel_level", "resamples", "seed")
LIST_ARGS = ("runs", "measure", "must_pass")


def _arg_ok(key: str, value) -> bool:
    """Whether one recorded flag has the type the CLI gives it (so recomputing cannot crash on it)."""
    if key not in INVOCATION_KEYS:
        return False
    if key in LIST_ARGS:
        return value is None or isinstance(value, list) and all(isinstance(x, str) for x in value)
    if key in INT_ARGS:
        return value is None or type(value) is int
    if key in ("allow_snapshot_mismatch", "with_suggestions", "stability"):
        return value is None or type(value) is bool
    return value is None or isinstance(value, str)


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
    if isinstance(a, bool) or isinstance(b, bool):  # 0 is not false, 1 is not true
        if type(a) is type(b) and a == b:
            return
    elif isinstance(a, num) and isinstance(b, num) and not isinstance(a, bool) and not isinstance(b, bool):
        if a == b or (math.isfinite(a) and math.isfinite(b) and abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))):
            return
    elif a == b:
        return
    x, y = shown_pair(a, b)
    out.append(f"{where}: receipt {x}, recomputed {y}")


def shown_pair(a, b, width: int = 80) -> tuple[str, str]:
    """Two differing values as JSON, each at most about `width` characters: long texts are shown from a little
    before their first difference (`…"d oc-storage-price, q-restore/..."…`), so the two never look the same."""
    ja, jb = json.dumps(a), json.dumps(b)
    if len(ja) <= width and len(jb) <= width:
        return ja, jb
    if not (isinstance(a, str) and isinstance(b, str)):
        return (ja[:width] + "…" if len(ja) > width else ja), (jb[:width] + "…" if len(jb) > width else jb)
    import os

    start = max(len(os.path.commonprefix([a, b])) - width // 3, 0)

    def cut(text: str) -> str:
        piece = text[start:start + width - 10]
        return ("…" if start else "") + json.dumps(piece) + ("…" if start + len(piece) < len(text) else "")

    return cut(a), cut(b)


def verify_receipt(path: str, root: str | None = None, key: bytes | None = None) -> Verification:
    """Re-read the inputs, check every hash, recompute the decision and the whole receipt, and compare
    (see the module's doc). With `key`, the receipt must carry that key's valid signature."""
    opened = open_receipt(path)
    data = opened.body
    v = Verification(path, "verified", recorded_decision=data.get("decision"))
    _check_seal(opened, key, v)
    base = _base_folder(data, root)
    if not _check_input_files(path, data, base, v):
        return v
    recomputed = _recompute(path, data, base, v)
    if recomputed is None:  # a changed input no longer reads: said in v
        return v
    _compare_recomputed(data, base, *recomputed, v)
    if opened.statement is not None:
        _check_statement(opened.statement, data, v)
    if v.differences:
        v.status = "mismatch"
    return v


def _check_seal(opened, key: bytes | None, v: Verification) -> None:
    """The signature (with `key`) and the body's digest."""
    from rankgate.core import signing

    data = opened.body
    if opened.signatures is not None:
        v.signature = "not checked (no key given)"
    if key is not None:
        if opened.payload is None:
            v.differences.append("signature: the receipt is not signed, and a key was given")
            v.signature = "invalid: the receipt is not signed, and a key was given"
        else:
            wrong = signing.check_signature(opened.payload, opened.signatures, key)
            if wrong:
                v.differences.append(f"signature: {wrong}")
                v.signature = f"invalid: {wrong}"
            else:
                v.signature = "valid"
    if "digest" in data or data.get("receipt_version", 0) >= 3:
        recorded = data.get("digest") if isinstance(data.get("digest"), dict) else {}
        if recorded.get("sha256") != body_digest(data):
            v.differences.append("digest: the receipt's body was edited after it was written (its sha256 differs)")


def _check_input_files(path: str, data: dict, base, v: Verification) -> bool:
    """Each input's sha256 and size against its file now; False (and v says why) when one cannot be read."""
    unreadable = []
    for item in data["inputs"]:
        if not isinstance(item, dict) or not isinstance(item.get("path"), str):
            raise InputError(path, "not a rankgate receipt: an input without a path")
        p = _rebase(item["path"], base)
        entry = {"role": item.get("role"), "path": item["path"]}
        try:
            digest = sha256_file(p)
            size = os.path.getsize(p)
        except OSError as e:
            entry["status"] = "unreadable"
            unreadable.append(f"{item.get('role')} {item['path']}: {e.strerror or 'cannot read'}")
        except InputError as e:  # no such file, a folder, a FIFO or a device: refused at once
            entry["status"] = "unreadable"
            unreadable.append(f"{item.get('role')} {item['path']}: {e.what}")
        else:
            entry["status"] = "ok" if digest == item.get("sha256") else "changed"
            if entry["status"] == "changed":
                v.differences.append(f"{item.get('role')} {item['path']}: sha256 differs "
                                     f"(receipt {str(item.get('sha256'))[:12]}…, now {digest[:12]}…)")
            elif item.get("bytes") != size or type(item.get("bytes")) is not int:
                v.differences.append(f"{item.get('role')} {item['path']}: receipt says {json.dumps(item.get('bytes'))[:20]}"
                                     f" bytes, the file has {size}")
        v.inputs.append(entry)
    if unreadable:
        v.status = "unreadable"
        v.error = "; ".join(unreadable)
        return False
    return True


def _recorded_invocation(path: str, data: dict, base):
    """The gate's flags as the receipt recorded them, paths rebased: (flags, policy overrides, as_of)."""
    from rankgate.core.formats import split_run_spec
    from rankgate.core.policy import OVERRIDES

    args = dict(data["invocation"]["args"])
    for key in PATH_KEYS:
        if not (key == "acl" and args.get(key) == "corpus"):  # "corpus" names no file
            args[key] = _rebase(args.get(key), base)
    runs = []
    for spec in args.get("runs") or []:
        if not isinstance(spec, str):
            raise InputError(path, "not a rankgate receipt: a run in its invocation is not a path")
        name, p = split_run_spec(_rebase(spec, base))
        if name is None:
            name, p = split_run_spec(spec)
            p = _rebase(p, base)
        runs.append(p if name is None else f"{name}={p}")
    args["runs"] = runs
    for k in ("measure", "must_pass"):
        args[k] = args.get(k) or []
    flags = SimpleNamespace(**{k: args.get(k) for k in INVOCATION_KEYS})
    overrides = {k: args.get(k) for k in OVERRIDES if k != "measures"} | {"measures": args["measure"]}
    as_of = data.get("as_of") or data["result"].get("as_of")
    try:
        as_of = date.fromisoformat(as_of) if as_of else None
    except (TypeError, ValueError):
        raise InputError(path, f"not a receipt: 'as_of' is not a date ({str(as_of)[:40]!r})") from None
    return args, flags, overrides, as_of


def _recompute(path: str, data: dict, base, v: Verification):
    """Run the gate again as recorded: (result, bundle, policy), or None when a changed input no longer reads."""
    from rankgate.core.bundle import load_bundle
    from rankgate.core.gate import gate_bundle
    from rankgate.core.policy import resolve
    from rankgate.core.stats import generator
    from rankgate.core.validate import validate

    args, flags, overrides, as_of = _recorded_invocation(path, data, base)
    try:
        suggested = next((_rebase(i["path"], base) for i in data["inputs"] if i.get("role") == "suggestions"),
                         None) if args.get("with_suggestions") else None
        bundle = load_bundle(flags.qrels, flags.runs, benchmark=flags.benchmark, queries=flags.queries,
                             qrels_format=flags.qrels_format or "auto", run_format=flags.run_format or "auto",
                             acl=flags.acl, suggestions=suggested)
        if overrides.get("k") is None and bundle.manifest is None and not overrides.get("policy") and \
                type(data["result"].get("k")) is int:
            overrides["k"] = data["result"]["k"]  # raw files: the k they were gated at (the default was 3 before)
        policy = resolve(overrides, bundle)
        problems = validate(bundle.qrels, list(bundle.runs.values()), policy.checks, bundle.no_answer)
        if problems:
            raise ValidationError(problems)
        if suggested and (data.get("label_trust") or {}).get("judge", {}).get("counted") is False:
            from rankgate.core.judge_vote import without_suggestions  # the judge had not earned its vote

            bundle.qrels = without_suggestions(bundle.qrels)
        with generator(_recorded_generator(data)):  # the resamples as they were drawn
            result = gate_bundle(bundle, policy, as_of=as_of)
        if suggested:
            result.data["suggestions"] = {"counted": bundle.qrels.meta.get("suggestions_counted", 0),
                                          "file": next(p for r, p in bundle.files if r == "suggestions")}
    except (InputError, ValidationError) as e:
        e = _as_recorded(e, path, data["invocation"]["args"])
        if v.differences:  # a changed input that no longer reads is a mismatch, not a broken receipt
            v.status = "mismatch"
            v.differences.append(f"recomputing failed: {e}")
            return None
        raise e from None
    return result, bundle, policy


def _compare_recomputed(data: dict, base, result, bundle, policy, v: Verification) -> None:
    """The recomputed receipt against the recorded one, field by field; the files read against those listed."""
    v.recomputed_decision = result.data["decision"]
    now = {(role, _norm(p)) for role, p in input_files(bundle, policy)}
    then = {(i.get("role"), _norm(_rebase(i["path"], base))) for i in data["inputs"]}
    for role, p in sorted(now - then):
        v.differences.append(f"inputs: the recomputation read {role} {os.path.relpath(p)}, not in the receipt")
    for role, p in sorted(then - now):
        v.differences.append(f"inputs: the receipt lists {role} {os.path.relpath(p)}, not read by the recomputation")
    code = 0 if result.accepted else 3
    inputs = [dict(i) for i in data["inputs"]]  # checked above, file by file
    fresh = json.loads(json.dumps(receipt_body(result.data, bundle, policy, code, data["invocation"], inputs)))
    fresh["receipt_version"] = data["receipt_version"]  # a version 2 receipt is checked as version 2
    if data["receipt_version"] == 2 and "labels" not in data:  # the first version 2 receipts had none
        fresh.pop("labels", None)
    written_by = data.get("rankgate_version")
    if written_by != __version__ and older_version(written_by, __version__):
        fresh["rankgate_version"] = v.written_by = written_by  # accepted when everything else matches
    try:
        datetime.fromisoformat(str(data.get("created_at")))
    except ValueError:
        v.differences.append(f"created_at: {json.dumps(data.get('created_at'))[:40]} is not a time")
    found: list[str] = []
    _compare_bodies(data, fresh, base, found)
    for line in found:  # an older version did not write what was added since: said, not a difference
        where, _, what = line.partition(": ")
        if v.written_by and what == "recomputed, not in the receipt" and where.split(".")[0] not in REQUIRED:
            v.not_checked.append(f"{where} (rankgate {v.written_by} did not write it)")
        else:
            v.differences.append(line)


def _check_statement(statement: dict, data: dict, v: Verification) -> None:
    """An in-toto statement's fields: its type, predicate type and subject (from the recorded inputs)."""
    fresh_subject = _subject(data)  # from the recorded inputs, each checked against its file above
    for name, value in (("_type", STATEMENT_TYPE), ("predicateType", PREDICATE_TYPE)):
        diff(statement.get(name), value, name, v.differences)
    extra = sorted(set(statement) - {"_type", "subject", "predicateType", "predicate"})
    if extra:
        v.differences.append(f"statement: fields this rankgate does not write: {', '.join(extra)[:80]}")
    diff(statement.get("subject"), fresh_subject, "subject", v.differences)


def _as_recorded(e: Exception, path: str, args: dict) -> Exception:
    """A flag's value refused in recomputing (`--seed: seed must be 0 or more`) was read from the receipt:
    the error names the receipt and the field (`receipt verify` has no such flag)."""
    key = e.path[2:].replace("-", "_") if isinstance(e, InputError) and e.path.startswith("--") else None
    if key not in args:
        return e
    return InputError(path, f"not a rankgate receipt: invocation.args.{key} is {json.dumps(args[key])[:40]}, "
                      f"not what rankgate gate writes there ({e.what})")


def _recorded_generator(data: dict) -> str:
    """The resamples' generator the receipt names; one that names none was written before rankgate had its
    own (numpy's PCG64)."""
    sig = data["result"].get("significance")
    return str(sig.get("generator", "PCG64")) if isinstance(sig, dict) else "PCG64"


REQUIRED = ("decision", "exit_code", "policy", "result", "inputs", "invocation")  # in every receipt's body


def older_version(written: object, current: str) -> bool:
    """Whether `written` is an earlier release than `current` (both dotted numbers such as 0.1.0)."""
    import re

    if not isinstance(written, str) or not re.fullmatch(r"\d+(\.\d+)*", written) or \
            not re.fullmatch(r"\d+(\.\d+)*", current):
        return False
    return tuple(map(int, written.split("."))) < tuple(map(int, current.split(".")))


def _comparable(body: dict, base: str) -> dict:
    """The body without what is not recomputed, its paths made absolute (the recomputation reads from `base`)."""
    out = {k: val for k, val in body.items() if k not in NOT_RECOMPUTED}
    if isinstance(out.get("runs"), dict):
        out["runs"] = {name: (dict(r, path=_norm(_rebase(r["path"], base)))
                              if isinstance(r, dict) and isinstance(r.get("path"), str) else r)
                       for name, r in out["runs"].items()}
    if isinstance(out.get("labels"), dict) and isinstance(out["labels"].get("path"), str):
        out["labels"] = dict(out["labels"], path=_norm(_rebase(out["labels"]["path"], base)))
    return out


def _compare_bodies(recorded: dict, fresh: dict, base: str, out: list[str]) -> None:
    """Every field the receipt holds against the same field recomputed now: the decision first."""
    a, b = _comparable(recorded, base), _comparable(fresh, base)
    for k in ("decision", "exit_code", "policy"):
        diff(a.get(k), b.get(k), k, out)
    diff({k: x for k, x in a.items() if k not in ("decision", "exit_code", "policy")},
         {k: x for k, x in b.items() if k not in ("decision", "exit_code", "policy")}, "", out)
