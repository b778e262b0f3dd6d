"""Label migration after rechunking: a map of old document IDs to new ones, and what it does to judgments.

Pure: no store, no TinyDB. The workspace (`Workspace.migrate`) reads the map
with `read_map`, hands its judgments to `plan`, and writes what the plan says
as one all-or-nothing edit.

The map is a text file, one `OLD_ID<TAB>NEW_ID` per line; an old ID that was
split into several chunks has one line per new ID. Blank lines and lines
starting with `#` are skipped. Anything else (one field, three fields, an
empty ID, spaces around an ID) is an `InputError` naming the file and line.

What a plan does with each judgment (one reviewer's grade, or an adjudication,
of query q and document d):

- d is in the map: the judgment is *carried* to every new ID of d, marked as
  needing review (the new chunk may not hold the evidence), and the judgment
  on d itself is retired (unless d maps to itself too).
- several old IDs of one query land on one new ID (chunks merged), for the
  same reviewer: the carried judgment takes the highest of their grades (the
  first such judgment's reason and collection version), and names every old
  ID it came from. `merged` lists these.
- d is not in the map: the judgment is *unmapped*. It stays where it is
  (`drop_unmapped=False`, the default: a map may list only the IDs that
  changed) or is retired (`drop_unmapped=True`). Either way it is reported.
  An unmapped judgment that a carried one lands on is merged with it as above.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field

from rankgate.core.errors import InputError


@dataclass(frozen=True)
class IdMap:
    """Old document ID -> its new IDs, in the map's order."""

    path: str
    targets: dict[str, tuple[str, ...]]
    lines: int = 0  # mapping lines read

    def __contains__(self, old: str) -> bool:
        return old in self.targets

    def __len__(self) -> int:
        return len(self.targets)


def _check(value: str, what: str, path: str, lineno: int, raw: str) -> str:
    shown = raw if len(raw) <= 80 else raw[:77] + "..."
    if not value:
        raise InputError(path, f"empty {what} ID (expected OLD_ID<TAB>NEW_ID, found {shown!r})", line=lineno)
    if value != value.strip() or any(ord(c) < 32 for c in value):
        raise InputError(path, f"{what} ID {value!r} has surrounding spaces or control characters", line=lineno)
    return value


def parse_map(text: str, path: str = "map") -> IdMap:
    targets: dict[str, list[str]] = {}
    count = 0
    for lineno, raw in enumerate(text.split("\n"), 1):
        line = raw[:-1] if raw.endswith("\r") else raw
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = line.split("\t")
        if len(parts) != 2:
            shown = line if len(line) <= 80 else line[:77] + "..."
            found = "no TAB" if len(parts) == 1 else f"{len(parts)} TAB-separated fields"
            raise InputError(path, f"expected OLD_ID<TAB>NEW_ID, found {found} in {shown!r}", line=lineno)
        old = _check(parts[0], "old", path, lineno, line)
        new = _check(parts[1], "new", path, lineno, line)
        per = targets.setdefault(old, [])
        if new not in per:
            per.append(new)
        count += 1
    if not targets:
        raise InputError(path, "no mappings (expected lines of OLD_ID<TAB>NEW_ID)")
    return IdMap(path, {old: tuple(new) for old, new in targets.items()}, count)


def read_map(path: str | os.PathLike) -> IdMap:
    path = str(path)
    from rankgate.core.formats.textio import MAX_DOCUMENT, open_regular

    try:
        with open_regular(path) as f:  # a FIFO or a device is refused, never waited on or read for ever
            data = f.read(MAX_DOCUMENT + 1)
        if len(data) > MAX_DOCUMENT:
            raise InputError(path, f"larger than {MAX_DOCUMENT >> 20} MiB, the most rankgate reads as a map file")
    except FileNotFoundError:
        raise InputError(path, "no such file") from None
    except IsADirectoryError:
        raise InputError(path, "is a folder, expected a map file (OLD_ID<TAB>NEW_ID lines)") from None
    except OSError as e:
        raise InputError(path, f"cannot read ({e.strerror or e})") from None
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise InputError(path, "invalid UTF-8 text (expected OLD_ID<TAB>NEW_ID lines)", line=line) from None
    return parse_map(text, path)


# --------------------------------------------------------------------------- the plan


@dataclass
class Carried:
    """A judgment as it lands on a new ID. `key` is the reviewer's name, or None for an adjudication."""

    query: str
    doc: str  # the new ID
    key: str | None
    state: dict  # the judgment it takes (grade, reason, collection_version, reviewer, ...)
    sources: list[str]  # the old IDs it came from, in map order


@dataclass
class Plan:
    carried: list[Carried] = field(default_factory=list)
    retired: list[tuple[str, str, str | None]] = field(default_factory=list)  # (query, old doc, key)
    unmapped: list[tuple[str, str, str | None]] = field(default_factory=list)  # (query, doc, key)
    merged: list[Carried] = field(default_factory=list)  # carried from more than one old ID

    def __bool__(self) -> bool:
        return bool(self.carried or self.retired)


def plan(judgments: Iterable[tuple[str, str, str | None, dict]], idmap: IdMap, *,
         drop_unmapped: bool = False) -> Plan:
    """What the map does to `judgments`: (query, doc, key, state) of every standing judgment."""
    rows = list(judgments)
    out = Plan()
    landing: dict[tuple[str, str, str | None], Carried] = {}
    kept: dict[tuple[str, str, str | None], dict] = {}

    def land(q: str, new: str, key, state: dict, source: str) -> None:
        c = landing.get((q, new, key))
        if c is None:
            landing[(q, new, key)] = Carried(q, new, key, state, [source])
            return
        if source not in c.sources:
            c.sources.append(source)
        if state["grade"] > c.state["grade"]:
            c.state = state

    for q, d, key, state in rows:
        targets = idmap.targets.get(d)
        if targets is None:
            out.unmapped.append((q, d, key))
            if drop_unmapped:
                out.retired.append((q, d, key))
            else:
                kept[(q, d, key)] = state
            continue
        for new in targets:
            land(q, new, key, state, d)
        if d not in targets:
            out.retired.append((q, d, key))
    for (q, new, key), c in landing.items():
        if (q, new, key) in kept:  # an unmapped judgment already stands where this one lands: merge them
            state = kept[(q, new, key)]
            c.sources.append(new)
            if state["grade"] > c.state["grade"]:
                c.state = state
        out.carried.append(c)
        if len(c.sources) > 1:
            out.merged.append(c)
    return out
