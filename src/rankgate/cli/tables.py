"""Plain-text tables for people (the CLI's --format table). Untrusted IDs are shown escaped."""

from __future__ import annotations

import shutil
import unicodedata

from rankgate.core.text import cut_list, more_tail, visible

MIN_LIST_WIDTH = 24  # a cut list keeps at least this many columns, however wide the rest of its table


def table_width() -> int:
    """The terminal's width; 100 columns when the output is piped (COLUMNS overrides both)."""
    return shutil.get_terminal_size((100, 24)).columns


def cut_ids(ids: list[str], width: int) -> str:
    """IDs, escaped, joined with ", " and cut to `width` with " ... and N more" (the JSON keeps every ID)."""
    shown, more = cut_list([visible(x) for x in ids], width)
    text = ", ".join(shown)
    over = len(text) + len(more_tail(more)) - width
    if over > 0 and more:  # one ID alone is too long: it is cut too
        text = text[: max(len(text) - over - 1, 1)] + "…"
    return text + more_tail(more)


def cells(text: str) -> int:
    """The terminal columns `text` takes: 2 for a wide (CJK) character, 0 for a combining one."""
    return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _pad(text: str, width: int, left: bool) -> str:
    gap = " " * max(width - cells(text), 0)
    return text + gap if left else gap + text


def _table(header: list[str], rows: list[list[str]], left_last: bool = False) -> str:
    """Columns padded to their content, in terminal columns (an ID in CJK takes two a character): the first
    (and, with left_last, a trailing list) left-aligned."""
    widths = [max(cells(h), *(cells(r[i]) for r in rows)) if rows else cells(h) for i, h in enumerate(header)]
    last = len(header) - 1

    def line(row):
        out = "  ".join(_pad(c, w, i == 0 or (left_last and i == last))
                        for i, (c, w) in enumerate(zip(row, widths)))
        return out.rstrip() if left_last else out

    return "\n".join([line(header), line(["-" * w for w in widths])] + [line(r) for r in rows])


def score_table(results: list[dict]) -> str:
    out = []
    for res in results:
        k = res["k"]
        shown = [f"Success@{k}", f"P@{k}", f"R@{k}", f"RR@{k}"]  # an asked-for measure among them: once
        extra = [m for m in (res["queries"][0].get("measures", {}) if res["queries"] else {}) if m not in shown]
        header = ["query", *shown, *extra, "missing"]
        rows = [[visible(r["query"]), "yes" if r["hit_at_k"] else "NO", f"{r['precision_at_k']:.4f}",
                 f"{r['recall_at_k']:.4f}", f"{r['reciprocal_rank']:.4f}",
                 *(f"{r['measures'][m]:.4f}" for m in extra)]
                for r in res["queries"]]
        mac = res["macro"]
        rows.append(["(mean)", f"{mac['hit_rate_at_k']:.4f}", f"{mac['precision_at_k']:.4f}",
                     f"{mac['recall_at_k']:.4f}", f"{mac['mrr_at_k']:.4f}", *(f"{mac[m]:.4f}" for m in extra)])
        # The missing IDs take what the other columns leave of the terminal, cut with "... and N more"; with
        # less room than a few IDs take, their count alone (the JSON keeps every ID).
        used = sum(max(cells(h), *(cells(r[i]) for r in rows)) + 2 for i, h in enumerate(header[:-1]))
        room = table_width() - used
        for row, r in zip(rows, res["queries"]):
            row.append(cut_ids(r["missing"], room) if room >= MIN_LIST_WIDTH else str(len(r["missing"])))
        rows[-1].append("")
        out.append(f"run {cut_middle(visible(res['run']), table_width() - 4)}\n" + _table(header, rows, left_last=True))
    if len(results) > 1:
        out.append(summary_table(results))
    return "\n\n".join(out)


def summary_table(results: list[dict]) -> str:
    """The last lines of `score --format table` with several runs: one line per run, the mean of each measure
    (what each run's `(mean)` row says), run names cut in the middle to fit the terminal."""
    k = results[0]["k"]
    first = results[0]["queries"][0].get("measures", {}) if results[0]["queries"] else {}
    shown = [f"Success@{k}", f"P@{k}", f"R@{k}", f"RR@{k}"]
    extra = [m for m in first if m not in shown]
    header = ["run", *shown, *extra]
    widths = sum(max(len(h), 6) + 2 for h in header[1:])
    room = max(table_width() - widths, 12)
    rows = []
    for res in results:
        mac = res["macro"]
        rows.append([cut_middle(visible(res["run"]), room), f"{mac['hit_rate_at_k']:.4f}",
                     f"{mac['precision_at_k']:.4f}", f"{mac['recall_at_k']:.4f}", f"{mac['mrr_at_k']:.4f}",
                     *(f"{mac[m]:.4f}" if m in mac else "n/a" for m in extra)])
    n = max(len(res["queries"]) for res in results)
    return f"summary: the mean over {n} queries, one line per run\n" + _table(header, rows)


def cut_middle(text: str, width: int) -> str:
    """`text` cut in the middle to `width` terminal columns (`msmarco_pa…00_1234567`): its start and its end,
    which tell names apart, stay."""
    if cells(text) <= width or width < 3:
        return text
    keep = width - 1
    head, tail = text[: (keep + 1) // 2], text[len(text) - keep // 2:] if keep // 2 else ""
    while cells(head) + cells(tail) > keep and (head or tail):
        head, tail = (head[:-1], tail) if cells(head) >= cells(tail) else (head, tail[1:])
    return f"{head}…{tail}"


def _f(x, digits: int = 4, sign: bool = False) -> str:
    if x is None:
        return "n/a"
    return f"{x:+.{digits}f}" if sign else f"{x:.{digits}f}"


def compare_table(data: dict, top: int = 10) -> str:
    """A comparison (core.compare.Comparison.as_dict()) as text: per candidate its measures with
    significance, the most changed queries with the rank movement of their relevant documents, slices."""
    out = [f"baseline {visible(data['baseline'])}, k={data['k']}, {data['queries']} queries; "
           f"p: {data['significance']['test']}, {data['significance']['resamples']} resamples, "
           f"seed {data['significance']['seed']}"]
    conf = data["significance"]["confidence"]
    for c in data["candidates"]:
        out.append("")
        out.append(f"candidate {visible(c['candidate'])}")
        rows = []
        for name, s in c["summary"].items():
            ci = s.get("ci") or [None, None]
            rows.append([visible(name), _f(s["baseline"]), _f(s["candidate"]), _f(s["delta"], sign=True),
                         f"[{_f(ci[0], sign=True)}, {_f(ci[1], sign=True)}]", _f(s.get("p_value")),
                         _f(s.get("effect_size"), 2, True), f"{s['wins']}/{s['losses']}/{s['ties']}",
                         _f(s["weighted_delta"], sign=True)])
        out.append(_table(["measure", "baseline", "candidate", "delta", f"{conf:.0%} CI", "p", "effect",
                           "win/loss/tie", "weighted delta"], rows))
        out.append(f"newly failed: {visible(', '.join(c['newly_failed'])) or '-'}")
        out.append(f"newly fixed:  {visible(', '.join(c['newly_fixed'])) or '-'}")
        changed = [r for r in c["queries"] if r["change"] > 0][:top]
        if changed:
            names = list(changed[0]["measures"])
            rows = []
            for r in changed:
                ranked = [m for m in r.get("movement", []) if m["baseline_rank"] or m["candidate_rank"]]
                moves = ", ".join(f"{visible(m['doc'])} {m['baseline_rank'] or 'none'}->{m['candidate_rank'] or 'none'}"
                                  for m in ranked[:3])
                rows.append([visible(r["query"]), r["status"].replace("_", " "),
                             *(_f(v["delta"], 3, True) for v in r["measures"].values()), moves])
            out.append("")
            out.append("most changed queries (delta per measure; relevant documents, rank baseline->candidate)")
            out.append(_table(["query", "status", *names, "movement"], rows, left_last=True))
        if c["slices"]:
            names = list(next(iter(c["slices"].values()))["measures"])
            rows = [[visible(s), str(v["queries"]), *(_f(x["delta"], 3, True) for x in v["measures"].values()),
                     visible(", ".join(v["newly_failed"])) or "-"] for s, v in c["slices"].items()]
            out.append("")
            out.append("slices (delta per measure)")
            out.append(_table(["slice", "queries", *names, "newly failed"], rows))
    return "\n".join(out)
