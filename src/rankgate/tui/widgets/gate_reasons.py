"""The gate's reasons in the users' words: one line per failing check (textual-free, plain strings).

The gate pane leads with these lines and the top bar carries the first; passing
checks are counted, not listed, until the reader asks for them.
"""

from __future__ import annotations


def _num(x) -> str:
    return f"{x:.4f}" if isinstance(x, (int, float)) and not isinstance(x, bool) else str(x)


def _where(d: dict) -> str:
    s = d.get("slice")
    return f"slice {s}: " if s and s != "*" else ""


def failing_lines(details: list[dict], k: int) -> list[str]:
    """One line per reason the gate rejects (a must-pass check gives one line per query it misses, first)."""
    out: list[str] = []
    for d in sorted(details, key=lambda d: d.get("kind") != "must_pass"):
        if d.get("passed"):
            continue
        kind = d.get("kind")
        m = d.get("measure", "")
        if kind == "must_pass" and d.get("failed"):
            out.extend(f"must-pass {q}: no relevant document in the candidate's top {k}" for q in d["failed"])
        elif kind == "floor" and "candidate" in d and d.get("floor") is not None:
            out.append(f"{_where(d)}{m} {_num(d['candidate'])} is below the floor {d['floor']}")
        elif kind == "not_lower" and "candidate" in d and "baseline" in d:
            w = "weighted " if d.get("weighted") else ""
            out.append(f"{_where(d)}{w}{m} {_num(d['candidate'])} is lower than the baseline's "
                       f"{_num(d['baseline'])}")
        elif kind == "no_significant_regression" and "p_value" in d and "candidate" in d:
            out.append(f"{_where(d)}{m} {_num(d['candidate'])} fell significantly from the baseline's "
                       f"{_num(d['baseline'])} (p = {d['p_value']:.4f})")
        else:
            out.append(f"{d.get('name', '?')}: {d.get('why', '')}")
    return out


def passing_count(details: list[dict]) -> int:
    return sum(1 for d in details if d.get("passed"))


def pass_summary(details: list[dict]) -> str:
    n = passing_count(details)
    total = len(details)
    if n == 0:
        return "no check passes"
    if n == total:
        return f"all {n} checks pass" if n != 1 else "the 1 check passes"
    return f"{n} check passes" if n == 1 else f"{n} checks pass"


def one_line_reason(details: list[dict], k: int) -> str:
    """The top bar's reason: the first failing line (and how many more), or that every check passes."""
    lines = failing_lines(details, k)
    if not lines:
        return pass_summary(details)
    more = f" (+{len(lines) - 1} more)" if len(lines) > 1 else ""
    return lines[0] + more
