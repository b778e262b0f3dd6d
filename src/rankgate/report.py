"""Plain-text tables for people (the CLI's --format table). Untrusted IDs are shown escaped."""

from __future__ import annotations


def safe(text: str) -> str:
    """Control characters (terminal escapes) made visible, never interpreted."""
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in str(text))


def _table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    line = lambda cells: "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))
    return "\n".join([line(header), line(["-" * w for w in widths])] + [line(r) for r in rows])


def score_table(results: list[dict]) -> str:
    out = []
    for res in results:
        k = res["k"]
        extra = list(res["queries"][0].get("measures", {})) if res["queries"] else []
        header = ["query", f"hit@{k}", f"P@{k}", f"R@{k}", f"RR@{k}", *extra, "missing"]
        rows = [[safe(r["query"]), "yes" if r["hit_at_k"] else "NO", f"{r['precision_at_k']:.4f}",
                 f"{r['recall_at_k']:.4f}", f"{r['reciprocal_rank']:.4f}",
                 *(f"{r['measures'][m]:.4f}" for m in extra), safe(", ".join(r["missing"]))]
                for r in res["queries"]]
        mac = res["macro"]
        rows.append(["(mean)", f"{mac['hit_rate_at_k']:.4f}", f"{mac['precision_at_k']:.4f}",
                     f"{mac['recall_at_k']:.4f}", f"{mac['mrr_at_k']:.4f}", *(f"{mac[m]:.4f}" for m in extra), ""])
        out.append(f"run {safe(res['run'])}\n" + _table(header, rows))
    return "\n\n".join(out)
