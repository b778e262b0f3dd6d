"""A benchmark folder: `benchmark.toml` naming the qrels, queries, corpus and runs.

    name = "seed-lab"
    k = 3
    collection_version = "lab-1"
    qrels = "qrels.json"
    queries = "queries.jsonl"      # optional
    corpus = "corpus.jsonl"        # optional
    runs = ["runs.json"]           # each entry a path, or "NAME=path"
    rel_level = 1                  # optional
    no_answer = ["q-..."]          # optional: queries that have no relevant document
    [gate]
    baseline = "baseline"
    candidate = "candidate_bad"
    must_pass = ["q-recovery"]
    policy = "policy.toml"         # optional; or the rules inline in this table
    guidelines = "GUIDELINES.md"   # optional: how to grade, shown to reviewers
    acl = "acl.jsonl"              # optional: who may see which document (or "corpus": its `acl` fields)
    [[pipeline]]                   # optional: one system's stages in order (core/funnel.py)
    name = "bm25-rerank"
    stages = [{name = "retrieve", run = "runs/bm25.jsonl", depth = 20}, ...]
    [grades]                       # optional: the grade scale (default 0-3, below)
    "0" = "not relevant"
    "1" = "partly relevant"
    "2" = "relevant"
    "3" = "the answer"
    reason_required = [0]          # optional: grades that need a reason in the review app (the box opens at once)
"""

from __future__ import annotations

import re
from dataclasses import field
from rankgate.core.fastclass import dataclass  # the standard one, made when first used (import cost)
from pathlib import Path

from rankgate.core.errors import InputError
from rankgate.core.model import grade_problem

MANIFEST = "benchmark.toml"
DEFAULT_GRADES: dict[int, str] = {0: "not relevant", 1: "partly relevant", 2: "relevant", 3: "the answer"}
MAX_GRADES = 10  # one key each in the review app
MAX_K = 1_000_000  # the largest cutoff k (a benchmark's, a policy's, --k)


@dataclass
class Manifest:
    name: str
    folder: Path
    path: Path
    k: int
    qrels: Path
    runs: list[str]  # "NAME=path" or path, resolved against the folder
    collection_version: str = ""
    queries: Path | None = None
    corpus: Path | None = None
    rel_level: int = 1
    no_answer: list[str] = field(default_factory=list)
    gate: dict = field(default_factory=dict)
    description: str = ""
    grades: dict[int, str] = field(default_factory=lambda: dict(DEFAULT_GRADES))  # grade -> name, by grade
    grades_declared: bool = False  # benchmark.toml has a [grades] table (else `grades` is the default scale)
    guidelines: Path | None = None  # the labelling guidelines (Markdown), inside the folder
    acl: str | None = None  # the ACL file (resolved against the folder), or "corpus"
    pipelines: list = field(default_factory=list)  # the [[pipeline]] tables as written (core/funnel.py reads them)
    judge: dict = field(default_factory=dict)  # the [judge] table: who suggests grades (core/judge.py)
    reason_required: frozenset[int] = frozenset()  # grades the review app asks a reason for (`reason_required`)


def load_toml(path: str | Path) -> dict:
    """A TOML file (benchmark.toml, a policy): a regular file of at most textio.MAX_TOML bytes, UTF-8,
    a byte-order mark accepted."""
    from rankgate.core.formats.textio import MAX_TOML, read_text

    path = Path(path)
    try:
        text = read_text(path, limit=MAX_TOML, what="a TOML file")
    except InputError as e:
        if e.what.startswith("is a folder"):
            raise InputError(str(path), "is a folder, expected a TOML file") from None
        raise
    from rankgate.core.tomlplain import plain_toml

    data = plain_toml(text)  # a plain file without tomllib (its import is most of reading one)
    if data is not None:
        return data
    import tomllib

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        m = re.search(r"\(at line (\d+), column \d+\)", str(e))
        line = int(m.group(1)) if m else None
        msg = str(e).split(" (at line")[0]
        raise InputError(str(path), f"invalid TOML: {msg}", line=line) from None
    except RecursionError:
        raise InputError(str(path), "invalid TOML: nested too deeply") from None


def is_benchmark(path: str | Path) -> bool:
    p = Path(path)
    return (p.is_dir() and (p / MANIFEST).is_file()) or (p.is_file() and p.name == MANIFEST)


def _expect(data: dict, key: str, kind, path: Path, required: bool = True, where: str = ""):
    if key not in data:
        if required:
            raise InputError(str(path), f"missing key {where}{key!r}")
        return None
    value = data[key]
    if kind is int and isinstance(value, bool) or not isinstance(value, kind):
        kinds = (kind,) if isinstance(kind, type) else kind
        names = " or ".join(TOML_KINDS.get(k, k.__name__) for k in kinds)
        found = TOML_KINDS.get(type(value), type(value).__name__)
        if isinstance(value, (str, int, float)):
            found += f" ({_short(value)})"
        raise InputError(str(path), f"key {where}{key!r} must be {names}, found {found}",
                         line=key_line(path, where.strip().strip("[]"), key))
    return value


# what a TOML value is, in TOML's words (for `key 'k' must be an integer, found a string ("three")`)
TOML_KINDS = {int: "an integer", float: "a number", str: "a string", bool: "true or false", list: "a list",
              dict: "a table"}


def _short(value) -> str:
    text = repr(value) if not isinstance(value, str) else '"' + value.replace('"', '\\"') + '"'
    return text if len(text) <= 40 else text[:39] + "…"


def key_line(path: Path, table: str, key: str) -> int | None:
    """The line of `key = ...` in benchmark.toml's `table` ("" the top level), when it can be told."""
    return toml_key_line(str(path), table, key)


def toml_key_line(path: str, table: str, key: str, value: str | None = None) -> int | None:
    """The line of `key = ...` in `table` of a TOML file ("" the top level), or of the string `value` in
    that key's value (an array over several lines); None when it cannot be told (the file changed, a
    dotted or inline key)."""
    import re

    try:
        lines = Path(path).read_text(encoding="utf-8-sig").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    current, start = "", None
    for i, line in enumerate(lines):
        head = re.match(r"\s*\[\[?\s*([^\]]*?)\s*\]\]?\s*(#.*)?$", line)  # [table] or [[array]]
        if head:
            current = head.group(1)
            if start is not None:
                break
            continue
        if start is None:
            if current == table and re.match(rf"\s*['\"]?{re.escape(key)}['\"]?\s*=", line):
                start = i
                if value is None:
                    return i + 1
        elif re.match(r"\s*[A-Za-z0-9_\"'-]+\s*=", line):  # the next key: the value was not found
            break
        if start is not None and value is not None and (f'"{value}"' in line or f"'{value}'" in line):
            return i + 1
    return None if start is None else start + 1


KNOWN = {"name", "description", "k", "collection_version", "qrels", "queries", "corpus", "runs",
         "rel_level", "no_answer", "gate", "grades", "guidelines", "acl", "pipeline", "judge",
         "reason_required"}


def parse_grades(table, path: Path) -> dict[int, str]:
    """The `[grades]` table: {"-2": "junk", "0": "not relevant", ...} -> {-2: "junk", 0: ...}, by grade."""
    if not isinstance(table, dict):
        raise InputError(str(path), f"key 'grades' must be a table of grade = \"name\", found {type(table).__name__}")
    if not table:
        raise InputError(str(path), "grades: the table is empty (name at least one grade, e.g. "
                         "\"0\" = \"not relevant\")")
    if len(table) > MAX_GRADES:
        raise InputError(str(path), f"grades: {len(table)} grades, at most {MAX_GRADES} (one key each)")
    out: dict[int, str] = {}
    for key, name in table.items():
        if not re.fullmatch(r"[+-]?[0-9]{1,16}", key):
            raise InputError(str(path), f"grades: key {key!r} is not an integer grade (e.g. \"-2\", \"0\", \"4\")")
        grade = int(key)
        if grade in out:
            raise InputError(str(path), f"grades: grade {grade} is named twice (key {key!r})")
        if (why := grade_problem(grade)) is not None:
            raise InputError(str(path), f"grades: {why}")
        if not isinstance(name, str) or not name.strip() or any(ord(c) < 32 for c in name):
            raise InputError(str(path), f"grades: grade {key!r} needs a name (non-empty text on one line)")
        if name.strip() in out.values():
            raise InputError(str(path), f"grades: the name {name.strip()!r} is given to two grades (one each)")
        if re.fullmatch(r"[+-]?[0-9]+", name.strip()) and int(name.strip()) != grade:
            raise InputError(str(path), f"grades: grade {key!r} is named {name.strip()!r}, another grade's number")
        out[grade] = name.strip()
    return dict(sorted(out.items()))


def guidelines_path(value, folder: Path, path: Path) -> Path:
    """`guidelines = "GUIDELINES.md"`: an existing file inside the benchmark folder."""
    if not isinstance(value, str) or not value.strip():
        raise InputError(str(path), "guidelines: expected a file name in the benchmark folder, e.g. "
                         "\"GUIDELINES.md\"")
    try:
        target = (folder / value).resolve()
        root = folder.resolve()
        if Path(value).is_absolute() or (target != root and root not in target.parents):
            raise InputError(str(path), f"guidelines: {value!r} is outside the benchmark folder")
        if not target.exists():
            raise InputError(str(path), f"guidelines: {value!r} does not exist in {folder}")
        if not target.is_file():
            raise InputError(str(path), f"guidelines: {value!r} is not a regular file")
    except (OSError, ValueError, RuntimeError) as e:  # a NUL byte, a name too long, a symlink loop
        raise InputError(str(path), f"guidelines: {value!r} cannot be read ({e})") from None
    return folder / value


def load_manifest(path: str | Path) -> Manifest:
    p = Path(path)
    mpath = p / MANIFEST if p.is_dir() else p
    folder = mpath.parent
    if p.is_dir() and not (mpath.exists() or mpath.is_symlink()):
        raise InputError(str(mpath), "no such file: not a benchmark folder (`rankgate init` makes one from qrels "
                         "and runs; or give the files with --qrels and --runs)")
    data = load_toml(mpath)
    unknown = sorted(set(data) - KNOWN)
    if unknown:
        raise InputError(str(mpath), f"unknown key {unknown[0]!r} (expected one of {', '.join(sorted(KNOWN))})",
                         line=key_line(mpath, "", unknown[0]))
    name = _expect(data, "name", str, mpath)
    k = _expect(data, "k", int, mpath)
    if k < 1:
        raise InputError(str(mpath), "key 'k' must be at least 1", line=key_line(mpath, "", "k"))
    if k > MAX_K:
        raise InputError(str(mpath), f"key 'k' must be at most {MAX_K}", line=key_line(mpath, "", "k"))
    runs = _expect(data, "runs", list, mpath)
    if not runs or not all(isinstance(r, str) for r in runs):
        raise InputError(str(mpath), "key 'runs' must be a non-empty list of file names")
    resolved = []
    for r in runs:
        n, sep, rel = r.partition("=")
        resolved.append(f"{n}={folder / rel}" if sep and "/" not in n and not (folder / r).exists()
                        else str(folder / r))
    gate = _expect(data, "gate", dict, mpath, required=False) or {}

    def _place(v: str) -> Path:  # a file beside the manifest; an ir_datasets name (irds:ID) as it is
        return Path(v) if v.startswith("irds:") else folder / v

    no_answer = _expect(data, "no_answer", list, mpath, required=False) or []
    if not all(isinstance(x, str) and x for x in no_answer):
        raise InputError(str(mpath), "key 'no_answer' must be a list of query IDs (non-empty strings)")
    level = _expect(data, "rel_level", int, mpath, required=False)
    if level is not None and (why := grade_problem(level)) is not None:
        raise InputError(str(mpath), f"key 'rel_level': {why}")

    def opt_path(key):
        v = _expect(data, key, str, mpath, required=False)
        return _place(v) if v else None

    grades = parse_grades(data["grades"], mpath) if "grades" in data else dict(DEFAULT_GRADES)
    guidelines = guidelines_path(data["guidelines"], folder, mpath) if "guidelines" in data else None
    acl = _expect(data, "acl", str, mpath, required=False)
    pipelines = _expect(data, "pipeline", list, mpath, required=False) or []
    needs_reason = parse_reason_required(data.get("reason_required"), grades, mpath)
    return Manifest(
        name=name, folder=folder, path=mpath, k=k, qrels=_place(_expect(data, "qrels", str, mpath)), runs=resolved,
        collection_version=_expect(data, "collection_version", str, mpath, required=False) or "",
        queries=opt_path("queries"), corpus=opt_path("corpus"),
        rel_level=_level if (_level := _expect(data, "rel_level", int, mpath, required=False)) is not None else 1,
        no_answer=[str(x) for x in no_answer], gate=gate,
        description=_expect(data, "description", str, mpath, required=False) or "",
        grades=grades, grades_declared="grades" in data, guidelines=guidelines,
        acl=None if not acl else acl if acl == "corpus" else str(folder / acl), pipelines=pipelines,
        judge=_expect(data, "judge", dict, mpath, required=False) or {}, reason_required=needs_reason,
    )


def parse_reason_required(value, grades: dict[int, str], path: Path) -> frozenset[int]:
    """`reason_required = [0]`: grades of the scale that need a reason when given in the review app."""
    if value is None:
        return frozenset()
    if not isinstance(value, list) or not all(isinstance(g, int) and not isinstance(g, bool) for g in value):
        raise InputError(str(path), "key 'reason_required' must be a list of grades (integers), e.g. [0]")
    off = [g for g in value if g not in grades]
    if off:
        raise InputError(str(path), f"reason_required: grade {off[0]} is not on the grade scale "
                                    f"({', '.join(str(g) for g in sorted(grades))})")
    return frozenset(value)
