"""Files for CI: a Markdown summary (a CI step page) and a JUnit XML report, from a gate or a comparison.

Everything taken from the data (query and document IDs, run names, reasons,
owners) is escaped for where it goes: control characters are shown as
visible escapes (`\\x1b`), never written raw; Markdown gets `& < >` as
entities and its own specials (`\\ ` * _ [ ] | ~`) backslash-escaped, so an ID
can neither break a table nor become a link or HTML; JUnit is built with
ElementTree after removing what XML 1.0 cannot hold.
"""

from __future__ import annotations


from rankgate.core.gate import GateResult, verdict_line  # noqa: F401 (the gate's one line lives with the gate)
from rankgate.core.measures import Measure
from rankgate.core.text import LazyPattern, visible


def _m(family: str, k: int) -> Measure:
    return Measure(family, k)


_MD_SPECIAL = LazyPattern(r"([\\`*_\[\]|~])")


def md(text) -> str:
    """Text for a Markdown table cell or line: visible, HTML-inert, no Markdown meaning."""
    t = visible(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MD_SPECIAL.sub(r"\\\1", t)


def md_list(ids, limit: int = 8) -> str:
    ids = list(ids)
    if not ids:
        return "—"
    shown = ", ".join(md(i) for i in ids[:limit])
    return shown + (f" and {len(ids) - limit} more" if len(ids) > limit else "")


def _f(x, digits: int = 4, sign: bool = False) -> str:
    if x is None:
        return "n/a"
    return f"{x:+.{digits}f}" if sign else f"{x:.{digits}f}"


def _label(key: str, k: int) -> str:
    return {"hit_rate_at_k": f"Success@{k}", "precision_at_k": f"P@{k}", "recall_at_k": f"R@{k}",
            "mrr_at_k": f"RR@{k}"}.get(key, key)  # the names of docs/measures.md, as in the checks


def _row(cells) -> str:
    return "| " + " | ".join(cells) + " |"


# ---- gate: Markdown -----------------------------------------------------------------------------

def gate_markdown(result: GateResult, *, queue_rows: int = 10) -> str:
    d = result.data
    k = d["k"]
    head = _md_head(d, k)
    out = head[:3] + _md_trust(d) + head[3:]  # the judge's vote, stale labels, power: under the decision
    out += _md_measures(d, k) + _md_failed(d, k) + _md_slices(d, k)
    out += _md_charts(result) + _md_coverage(d, k, queue_rows) + _md_budgets(d) + _md_binding(d) + _md_waivers(d)
    out += _md_permissions(d) + _md_funnel(d)
    return "\n".join(out) + "\n"


def trust_lines(d: dict) -> list[str]:
    """What the gate trusts of its labels, a line each: the judge's vote (cli/trust.py), stale labels, and the
    power of the query set (core/power.py); plain text, IDs escaped."""
    out = []
    if d.get("judge"):
        out.append(d["judge"]["line"])
    st = d.get("stale_labels")
    if st and st["count"]:
        what = {"refuse": "refused", "warn": "counted, with this warning", "allow": "counted"}[st["policy"]]
        pairs = ", ".join(f"{visible(q)} {visible(doc)}" for q, doc in st["pairs"][:5])
        more = f" and {st['count'] - 5} more" if st["count"] > 5 else ""
        out.append(f"stale labels: {st['count']}" + (f" ({pairs}{more})" if pairs else "") +
                   f": judged on a text the corpus has changed since; {what} (stale_labels = \"{st['policy']}\")")
    if d.get("power"):
        out.append(d["power"]["line"])
    return out


def _md_trust(d: dict) -> list[str]:
    lines = trust_lines(d)
    return ["", *(f"- {md(x)}" for x in lines)] if lines else []


def chart_measure(measures: list[Measure], k: int) -> Measure:
    """The measure the per-query delta chart shows: nDCG@k when scored, else RR@k."""
    for m in (Measure("nDCG", k), Measure("RR", k)):
        if m in measures:
            return m
    return measures[0]


def paired_charts(p, must_pass=(), measure: Measure | None = None) -> list[str]:
    """Markdown lines: the per-query delta chart and the Recall@k curve of a paired baseline and candidate."""
    from rankgate.core.charts import paired_curves, query_deltas
    from rankgate.core.mermaid import delta_chart, recall_chart

    m = measure or chart_measure(p.measures, p.k)
    depth, curves = paired_curves(p)
    return [*delta_chart(query_deltas(p, m, must_pass), m.name), "", *recall_chart(depth, curves)]


def _md_charts(result: GateResult) -> list[str]:
    if result.paired is None:
        return []
    return ["", "### Charts", "", *paired_charts(result.paired, result.data.get("must_pass", ()))]


def _md_permissions(d: dict) -> list[str]:
    """With an ACL: each run's leaks (query, document, rank), and relevant documents users may not see."""
    perm = d.get("permissions")
    if not perm:
        return []
    out = ["", "### Permissions", "",
           f"ACL {md(perm['acl'])}: {perm['restricted_documents']} restricted documents; measures count only "
           "what each query's user may see."]
    rows = [(role, x) for role in ("baseline", "candidate") for x in perm["leaks"].get(d[role], {}).get("list", [])]
    for role in ("baseline", "candidate"):
        n = perm["leaks"].get(d[role], {}).get("count", 0)
        out.append(f"- {role} {md(d[role])}: {f'**{n} leak' + ('s' if n > 1 else '') + '**' if n else 'no leak'}")
    if rows:
        out += ["", _row(["run", "query", "document", "rank", "may see", "user's groups"]),
                _row(["---", "---", "---", "--:", "---", "---"])]
        for role, x in rows[:50]:
            out.append(_row([f"{role} {md(d[role])}", md(x["query"]), md(x["doc"]), str(x["rank"]),
                             md_list(x["allowed_groups"]), md_list(x["user_groups"])]))
    restricted = perm.get("restricted_relevant") or {}
    if restricted:
        out += ["", "Relevant documents the asking user may not see (not counted as found): "
                + "; ".join(f"{md(q)}: {md_list(docs)}" for q, docs in restricted.items()) + "."]
    return out


def _md_funnel(d: dict) -> list[str]:
    """With pipelines: recall and losses at each stage, baseline and candidate side by side."""
    f = d.get("funnel")
    if not f:
        return []
    out = ["", "### Funnel", "", _row(["run", "stage", "depth", "recall", "relevant present", "lost here"]),
           _row(["---", "---", "--:", "--:", "--:", "--:"])]
    for role in ("baseline", "candidate"):
        x = f.get(role)
        if not x:
            continue
        for st in x["stages"]:
            n = st["name"]
            out.append(_row([f"{role} {md(x['pipeline'])}", md(n), str(st["depth"] or "all"), _f(x["recall"][n], 3),
                             str(x["present"][n]), str(x["lost"][n])]))
    lost = f.get("lost_where_baseline_kept") or []
    if lost:
        out += ["", "Relevant documents the candidate loses at a stage where the baseline kept them: "
                + "; ".join(f"{md(x['doc'])} for {md(x['query'])} at {md(x['stage'])}" for x in lost[:20])
                + (f" and {len(lost) - 20} more" if len(lost) > 20 else "") + "."]
    return out


def _md_head(d: dict, k: int) -> list[str]:
    """The decision, what was compared, and every check."""
    ok = d["accepted"]
    out = [f"## rankgate gate: {'✅ ACCEPT' if ok else '❌ REJECT'}", ""]
    na = len(d.get("no_answer_queries", []))
    against = "no baseline: absolute rules only" if d.get("no_baseline") else f"against baseline **{md(d['baseline'])}**"
    out.append(f"Candidate **{md(d['candidate'])}** {against}, k = {k}, "
               f"{d.get('queries', 0)} queries" + (f" ({na} no-answer queries reported apart)" if na else "")
               + f", as of {d.get('as_of', '')}.")
    failed = [c for c in d["check_details"] if not c["passed"]]
    if failed:
        out.append("")
        out.append("Failed: " + "; ".join(f"**{md(c['name'])}**: {md(c['why'])}" for c in failed))
    out += ["", "### Checks", "", _row(["", "check", "why"]), _row(["---", "---", "---"])]
    for c in d["check_details"]:
        out.append(_row(["✅" if c["passed"] else "❌", md(c["name"]), md(c["why"])]))
    return out + _md_stability(d, k)  # right under the checks: could the unjudged documents flip them?


def _stability_text(c: dict) -> str:
    """A check's stability in words: "stable" or "could flip: judge these 2 documents: q/d, ..."."""
    if c["stable"]:
        return "stable"
    docs = [(x["query"], x["doc"]) for x in c["to_judge"]]
    total = c.get("to_judge_total", len(docs))
    return c["why"] + (": " + ", ".join(f"{visible(q)}/{visible(x)}" for q, x in docs[:10])
                       + (f" and {total - 10} more" if total > 10 else "") if docs else "")


def _md_stability(d: dict, k: int) -> list[str]:
    """Would the unjudged documents change anything: the decision, each check, each measure's bounds."""
    st = d.get("stability")
    if not st:
        return []
    out = ["", "### Stability (unjudged documents)", "", f"Decision: {md(st['summary'])}.", "",
           _row(["check", "stability", "depth", "unjudged", "none relevant", "all relevant"]),
           _row(["---", "---", "--:", "--:", "---", "---"])]
    yes = {True: "pass", False: "fail"}
    for c in st["checks"]:
        if c["depth"] is None:
            continue
        out.append(_row([md(c["name"]), md(_stability_text(c)), str(c["depth"]), str(c["unjudged"]),
                         yes[c["outcomes"]["none"]], yes[c["outcomes"]["all"]]]))
    out += ["", _row(["measure", "depth", "baseline: none → all", "candidate: none → all", "Δ: none → all"]),
            _row(["---", "---", "---", "---", "---"])]
    for key, m in st["measures"].items():
        out.append(_row([md(_label(key, k)), md(m["depth_note"]),
                         f"{_f(m['baseline']['none'])} → {_f(m['baseline']['all'])}",
                         f"{_f(m['candidate']['none'])} → {_f(m['candidate']['all'])}",
                         f"{_f(m['delta']['none'], sign=True)} → {_f(m['delta']['all'], sign=True)}"]))
    return out


def _md_measures(d: dict, k: int) -> list[str]:
    """Each measure: both runs, the delta, its significance and wins/losses."""
    out: list[str] = []
    sig = d.get("significance", {})
    conf = sig.get("confidence", 0.95)
    out += ["", "### Measures", "",
            _row(["measure", "baseline", "candidate", "Δ", f"{conf:.0%} CI", "p", "effect size",
                  "wins / losses / ties", "weighted Δ"]),
            _row(["---", "--:", "--:", "--:", "---", "--:", "--:", "---", "--:"])]
    for key, s in d.get("deltas", {}).items():
        ci = s.get("ci") or [None, None]
        out.append(_row([md(_label(key, k)), _f(s["baseline"]), _f(s["candidate"]), _f(s["delta"], sign=True),
                         f"[{_f(ci[0], sign=True)}, {_f(ci[1], sign=True)}]", _f(s.get("p_value")),
                         _f(s.get("effect_size"), 2, True), f"{s['wins']} / {s['losses']} / {s['ties']}",
                         _f(s["weighted_delta"], sign=True)]))
    if sig:
        out += ["", f"p: {md(sig['test'])}; CI: {md(sig['interval'])}; {sig['resamples']} resamples, "
                    f"seed {sig['seed']}."]
    return out


def _md_failed(d: dict, k: int) -> list[str]:
    """Queries with no relevant document in the candidate's top k; newly fixed ones."""
    out: list[str] = []
    out += ["", f"### Failed queries (no relevant document in the candidate's top {k})", ""]
    if d["failed_queries"]:
        must = set(d.get("must_pass", []))
        newly = set(d.get("newly_failed", []))
        waived = {w["query"] for w in d.get("waivers", []) if w.get("used")}
        out += [_row(["query", "status", "found", "missing"]), _row(["---", "---", "---", "---"])]
        for r in d["failed_queries"]:
            q = r["query"]
            status = ["newly failed" if q in newly else "missed by both"]
            if q in must:
                status.append("must-pass")
            if q in waived:
                status.append("waived")
            out.append(_row([md(q), ", ".join(status), md_list(r["found"]), md_list(r["missing"])]))
    else:
        out.append("None.")
    if d.get("newly_fixed"):
        out += ["", f"Newly fixed (missed by the baseline, hit by the candidate): {md_list(d['newly_fixed'], 20)}."]
    return out


def _md_slices(d: dict, k: int) -> list[str]:
    """Each slice's measures, baseline to candidate."""
    out: list[str] = []
    slices = d.get("slices", {})
    if slices:
        keys = list(next(iter(slices.values()))["measures"])
        out += ["", "### Slices", "",
                _row(["slice", "queries", *(md(_label(x, k)) for x in keys), "newly failed"]),
                _row(["---", "--:", *("---" for _ in keys), "---"])]
        for name, s in slices.items():
            cells = [f"{_f(v['baseline'], 3)} → {_f(v['candidate'], 3)}" for v in s["measures"].values()]
            out.append(_row([md(name), str(s["queries"]), *cells, md_list(s["newly_failed"])]))
    return out


def _md_coverage(d: dict, k: int, queue_rows: int) -> list[str]:
    """Judged coverage and the review queue's first rows."""
    out: list[str] = []
    cov = d.get("coverage")
    if cov:
        out += ["", "### Coverage", ""]
        for role in ("baseline", "candidate"):
            c = cov[role]
            out.append(f"- {role} {md(d[role])}: Judged@{k} {_f(c['judged_at_k'], 3)}, {c['judged']} of {c['ranked']} "
                       f"documents in the top {k} judged ({c['judged_share']:.1%})")
        queue = cov.get("review_queue") or []
        if queue:
            total = cov.get("review_queue_total", len(queue))
            # the gate's pair only (`rankgate review` and `labels queue` walk every loaded run's top k)
            out += ["", f"Unjudged documents to review first ({min(queue_rows, len(queue))} of {total} in the "
                        f"baseline's and the candidate's top {k}, on the queries the gate evaluates; what a "
                        "relevant label would change):", "",
                    _row(["query", "document", "rank b / c", "would flip", "moves a Δ by up to"]),
                    _row(["---", "---", "---", "---", "--:"])]
            for x in queue[:queue_rows]:
                flips = ("**decision**, " if x["changes_decision"] else "") + md_list(x["flips"])
                out.append(_row([md(x["query"]), md(x["doc"]),
                                 f"{x['baseline_rank'] or '—'} / {x['candidate_rank'] or '—'}",
                                 flips, _f(x["impact"])]))
    return out


def _md_budgets(d: dict) -> list[str]:
    """Latency and context budgets of both runs."""
    out: list[str] = []
    budgets = d.get("budgets") or {}
    if budgets:
        fields = sorted({f for r in budgets.values() for f in r})
        out += ["", "### Budgets", "", _row(["run", *(f"{md(f)} {s}" for f in fields for s in ("p50", "p95"))]),
                _row(["---", *("--:" for _ in fields for _ in range(2))])]
        for role in ("baseline", "candidate"):
            if role in budgets:
                vals = [budgets[role].get(f, {}).get(s) for f in fields for s in ("p50", "p95")]
                out.append(_row([f"{role} {md(d[role])}", *("—" if v is None else f"{v:g}" for v in vals)]))
    return out


def _md_binding(d: dict) -> list[str]:
    """The labels' collection version against the runs' corpus snapshots."""
    out: list[str] = []
    b = d.get("binding")
    if b:
        snaps = ", ".join(f"{md(n)} {md(s) if s else '(none)'}" for n, s in b["runs_corpus_snapshot"].items())
        labels = ", ".join(md(v) for v in b["labels_collection_version"]) or "(none)"
        out += ["", "### Binding", "", f"Labels' collection version {labels}; runs' corpus snapshot {snaps}: "
                f"**{md(b['status'])}**" + (f" ({md(b['why'])})" if b.get("why") else "") + "."]
        for p in b.get("problems", []):
            out.append(f"- {md(p)}")
    return out


def _md_waivers(d: dict) -> list[str]:
    """Every waiver: whose, why, until when, used or expired."""
    out: list[str] = []
    if d.get("waivers"):
        out += ["", "### Waivers", "", _row(["query", "owner", "reason", "expires", "used", "expired"]),
                _row(["---", "---", "---", "---", "---", "---"])]
        for w in d["waivers"]:
            out.append(_row([md(w["query"]), md(w["owner"]), md(w["reason"]), md(w["expires"]),
                             "yes" if w["used"] else "no", "**yes**" if w["expired"] else "no"]))
    return out


# ---- gate: JUnit --------------------------------------------------------------------------------

def xml_text(text) -> str:
    """Text XML 1.0 can hold: invisible and control characters as visible escapes (tab and newline kept).
    Only for text whose line breaks are rankgate's own: an ID, a name or a reason goes through `visible`
    first (`_ids`, `xml_line`), so that a newline in it cannot start a line of its own (`::error::`)."""
    s = str(text)
    return "\n".join("\t".join(visible(t) for t in line.split("\t")) for line in s.split("\n"))


def xml_line(text) -> str:
    """An attribute or a one-line text from a file's names and IDs: every control character escaped,
    newlines too (an XML attribute's `&#10;` is a newline again for the tool that reads it)."""
    return visible(text)


def _ids(ids) -> str:
    return ", ".join(visible(x) for x in ids) or "-"


def _rank(rr: float) -> int | None:
    return int(round(1.0 / rr)) if rr > 0 else None


def gate_junit(result: GateResult) -> str:
    """Two suites: `rankgate.checks` (one test case per check) and `rankgate.queries` (one per query).

    A query fails when the candidate newly misses it at k (the baseline hit it) or misses a must-pass
    query; a query both runs miss is skipped (a known failure); a waived query passes, saying so.
    """
    import xml.etree.ElementTree as ET  # only for --junit: the gate's usual path does not load it

    d = result.data
    root = ET.Element("testsuites", name=xml_line(f"rankgate gate: {d['candidate']} vs {d['baseline']}"))
    checks = _junit_checks(ET.SubElement(root, "testsuite", name="rankgate.checks"), d)
    queries = _junit_queries(ET.SubElement(root, "testsuite", name="rankgate.queries"), result)
    root.set("tests", str(int(checks.get("tests")) + int(queries.get("tests"))))
    root.set("failures", str(int(checks.get("failures")) + int(queries.get("failures"))))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _suite_counts(suite, tests: int, failures: int, skipped: int = 0):
    for name, value in (("tests", tests), ("failures", failures), ("errors", 0), ("skipped", skipped)):
        suite.set(name, str(value))
    return suite


def _junit_checks(checks, d: dict):
    """The checks suite: the decision's properties, one test case per check (its stability when computed)."""
    from xml.etree.ElementTree import SubElement

    props = SubElement(checks, "properties")
    for name, value in (("decision", d["decision"]), ("baseline", d["baseline"]), ("candidate", d["candidate"]),
                        ("k", d["k"]), ("as_of", d.get("as_of", ""))):
        SubElement(props, "property", name=name, value=xml_line(value))
    st = d.get("stability") or {}
    if st:
        SubElement(props, "property", name="stability", value=xml_text(st["summary"]))
    stab = {c["name"]: c for c in st.get("checks", [])}
    nfail = 0
    for c in d["check_details"]:
        tc = SubElement(checks, "testcase", classname="rankgate.checks", name=xml_line(c["name"]))
        s = stab.get(c["name"])
        if s is not None and s["depth"] is not None:
            tp = SubElement(tc, "properties")
            SubElement(tp, "property", name="stability", value=xml_text(_stability_text(s)))
        if not c["passed"]:
            nfail += 1
            f = SubElement(tc, "failure", message=xml_line(c["why"]), type=xml_line(c.get("kind", "check")))
            f.text = xml_line(c["why"])
        else:
            SubElement(tc, "system-out").text = xml_line(c["why"])
    return _suite_counts(checks, len(d["check_details"]), nfail)


def _junit_queries(queries, result: GateResult):
    """The queries suite: each query passes, fails (newly missed, must-pass missed, a leak) or is skipped."""
    d = result.data
    p = result.paired
    index = {q: i for i, q in enumerate(p.qids)} if p is not None else {}
    k = d["k"]

    def base(q: str) -> dict:
        i = index.get(q)
        if i is None:
            return {}
        return {"hit_at_k": bool(p.baseline[p.hit][i] > 0), "reciprocal_rank": float(p.baseline[_m("RR", k)][i]),
                "recall_at_k": float(p.baseline[_m("R", k)][i])}
    leaked: dict[str, list[dict]] = {}
    for x in (d.get("permissions") or {}).get("leaks", {}).get(d["candidate"], {}).get("list", []):
        leaked.setdefault(x["query"], []).append(x)
    must = set(d.get("must_pass", []))
    waivers = {w["query"]: w for w in d.get("waivers", [])}
    outcomes = [_junit_query(queries, d, r, base(r["query"]), leaked.get(r["query"]), r["query"] in must,
                             waivers.get(r["query"])) for r in result.rows]
    return _suite_counts(queries, len(outcomes), outcomes.count("failed"), outcomes.count("skipped"))


def _junit_query(queries, d: dict, r: dict, b: dict, leaks: list[dict] | None, must_pass: bool,
                 waiver: dict | None) -> str:
    """One query's test case; returns "passed", "failed" or "skipped"."""
    from xml.etree.ElementTree import SubElement

    q, k = r["query"], d["k"]
    tc = SubElement(queries, "testcase", classname="rankgate.queries", name=xml_line(q))
    if leaks:  # a document its user may not see: a failure whatever the measures say
        msg = "permission leak: " + "; ".join(f"{visible(x['doc'])} at rank {x['rank']} (only {_ids(x['allowed_groups'])})"
                                              for x in leaks)
        SubElement(tc, "failure", message=xml_line(msg), type="permission_leak").text = xml_line(msg)
        return "failed"
    b_hit = bool(b.get("hit_at_k"))
    summary = (f"candidate: hit={r['hit_at_k']} RR={r['reciprocal_rank']:.4f} R@{k}={r['recall_at_k']:.4f}; "
               f"baseline: hit={b_hit} RR={b.get('reciprocal_rank', 0.0):.4f} "
               f"R@{k}={b.get('recall_at_k', 0.0):.4f}\nfound: {_ids(r['found'])}\n"
               f"missing: {_ids(r['missing'])}")
    if r["hit_at_k"]:
        SubElement(tc, "system-out").text = xml_text(summary)
        return "passed"
    reasons = []
    if b_hit:
        reasons.append(f"newly failed: the baseline {visible(d['baseline'])} hits it (first relevant at rank "
                       f"{_rank(b.get('reciprocal_rank', 0.0))}), the candidate {visible(d['candidate'])} has no "
                       f"relevant document in its top {k}")
    if must_pass:
        reasons.append(f"must-pass query missed: no relevant document in the candidate's top {k}")
    if not reasons:
        SubElement(tc, "skipped", message=xml_text(f"missed by both runs in the top {k} (a known failure)"))
        SubElement(tc, "system-out").text = xml_text(summary)
        return "skipped"
    if waiver is not None and not waiver["expired"]:
        SubElement(tc, "system-out").text = xml_text(
            f"waived by {visible(waiver['owner'])} until {visible(waiver['expires'])}: {visible(waiver['reason'])}\n" + "; ".join(reasons)
            + "\n" + summary)
        return "passed"
    msg = "; ".join(reasons)
    if waiver is not None:
        msg += f" (waiver by {visible(waiver['owner'])} expired {visible(waiver['expires'])})"
    f = SubElement(tc, "failure", message=xml_line(msg), type="newly_failed" if b_hit else "must_pass")
    f.text = xml_text(summary)
    return "failed"


# ---- compare: Markdown --------------------------------------------------------------------------

def compare_markdown(data: dict, *, top: int = 15, charts: dict[str, list[str]] | None = None) -> str:
    """A comparison (Comparison.as_dict()) as Markdown: per candidate, measures, charts (Markdown lines per
    candidate name, from `paired_charts`), queries, slices."""
    k = data["k"]
    out = [f"## rankgate compare: {len(data['candidates'])} candidate(s) against **{md(data['baseline'])}**", "",
           f"k = {k}, {data['queries']} queries; p from a {md(data['significance']['test'])} test, "
           f"{data['significance']['resamples']} resamples, seed {data['significance']['seed']}."]
    conf = data["significance"]["confidence"]
    for c in data["candidates"]:
        out += ["", f"### {md(c['candidate'])}", "",
                _row(["measure", "baseline", "candidate", "Δ", f"{conf:.0%} CI", "p", "effect size",
                      "wins / losses / ties", "weighted Δ"]),
                _row(["---", "--:", "--:", "--:", "---", "--:", "--:", "---", "--:"])]
        for name, s in c["summary"].items():
            ci = s.get("ci") or [None, None]
            out.append(_row([md(name), _f(s["baseline"]), _f(s["candidate"]), _f(s["delta"], sign=True),
                             f"[{_f(ci[0], sign=True)}, {_f(ci[1], sign=True)}]", _f(s.get("p_value")),
                             _f(s.get("effect_size"), 2, True), f"{s['wins']} / {s['losses']} / {s['ties']}",
                             _f(s["weighted_delta"], sign=True)]))
        out += ["", f"Newly failed: {md_list(c['newly_failed'], 20)}. Newly fixed: {md_list(c['newly_fixed'], 20)}."]
        if charts and c["candidate"] in charts:
            out += ["", *charts[c["candidate"]]]
        rows = [r for r in c["queries"] if r["change"] > 0][:top]
        if rows:
            names = list(rows[0]["measures"])
            out += ["", "Most changed queries:", "",
                    _row(["query", "status", *(md(n) for n in names), "relevant documents (rank b → c)"]),
                    _row(["---", "---", *("---" for _ in names), "---"])]
            for r in rows:
                ranked = [m for m in r.get("movement", []) if m["baseline_rank"] or m["candidate_rank"]]
                moves = ", ".join(f"{md(m['doc'])} {m['baseline_rank'] or '—'} → {m['candidate_rank'] or '—'}"
                                  for m in ranked[:4])
                out.append(_row([md(r["query"]), r["status"].replace("_", " "),
                                 *(f"{v['baseline']:.3f} → {v['candidate']:.3f}" for v in r["measures"].values()),
                                 moves or "—"]))
        if c["slices"]:
            names = list(next(iter(c["slices"].values()))["measures"])
            out += ["", "Slices:", "", _row(["slice", "queries", *(md(n) for n in names), "newly failed"]),
                    _row(["---", "--:", *("---" for _ in names), "---"])]
            for s, v in c["slices"].items():
                out.append(_row([md(s), str(v["queries"]),
                                 *(f"{x['baseline']:.3f} → {x['candidate']:.3f}" for x in v["measures"].values()),
                                 md_list(v["newly_failed"])]))
        funnel = (data.get("funnel") or {}).get(c["candidate"])
        if funnel and (funnel.get("baseline") or funnel.get("candidate")):
            out += ["", "Funnel:"] + _md_funnel({"funnel": funnel})[2:]
    perm = data.get("permissions")
    if perm:
        out += ["", "Permission leaks (documents returned to users who may not see them): "
                + ", ".join(f"{md(run)} {x['count']}" for run, x in perm["leaks"].items()) + "."]
    return "\n".join(out) + "\n"


# ---- gate: one line ------------------------------------------------------------------------------
