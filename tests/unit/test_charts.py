"""Charts: the numbers (per-query deltas, Recall@k), Mermaid in Markdown, the SVG of `compare --plot`."""

from __future__ import annotations

import re
import subprocess
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from rankgate.core.charts import curve_points, paired_curves, query_deltas, recall_curve, sparkline
from rankgate.core.compare import pair
from rankgate.core.formats.objects import qrels_from_dict, run_from_dict
from rankgate.core.measures import Measure
from rankgate.core.mermaid import delta_chart, label, recall_chart
from rankgate.core.svgplot import MAX_BARS, comparison_svg
from tests.conftest import ROOT, SAMPLES


def small_pair():
    qrels = qrels_from_dict({"q1": {"d1": 1, "d2": 1, "d9": 0}, "q2": {"d5": 2}, "q3": {"d7": 1}})
    cat = qrels.catalog
    base = run_from_dict({"q1": {"d3": 3, "d1": 2, "d2": 1}, "q2": {"d5": 1}, "q3": {"d8": 2, "d7": 1}},
                         "base", cat)
    cand = run_from_dict({"q1": {"d1": 3, "d2": 2}, "q2": {"d6": 2, "d5": 1}, "q3": {"d8": 1}}, "cand", cat)
    return pair(qrels, base, cand, k=2, measures=[Measure("RR", 2)])


def test_recall_curve_by_hand():
    p = small_pair()
    depth, curves = paired_curves(p)
    assert depth == 3
    # base: q1 finds d1 at 2, d2 at 3 (0, .5, 1); q2 d5 at 1 (1, 1, 1); q3 d7 at 2 (0, 1, 1)
    assert curves["base"] == pytest.approx([1 / 3, (0.5 + 1 + 1) / 3, 1.0])
    # cand: q1 both at 1, 2 (.5, 1, 1); q2 d5 at 2 (0, 1, 1); q3 never (0, 0, 0)
    assert curves["cand"] == pytest.approx([0.5 / 3, 2 / 3, 2 / 3])
    assert recall_curve(p.prepared["baseline"], 1) == pytest.approx([1 / 3])


def test_query_deltas_most_lost_first_with_must_pass_marked():
    p = small_pair()
    d = query_deltas(p, Measure("RR", 2), must_pass=["q3"])
    # RR@2: q1 0.5 -> 1, q2 1 -> 0.5, q3 0.5 -> 0; most lost first, ties by query ID
    assert [(x.query, x.delta, x.must_pass) for x in d] == [("q2", -0.5, False), ("q3", -0.5, True),
                                                            ("q1", 0.5, False)]


def test_sparkline_rises_from_losses_to_gains():
    line = sparkline([-1, -0.5, 0, 0.5, 1], 5)
    assert line == "▁▃▄▅▇"
    assert len(sparkline(np.linspace(-1, 1, 1000), 40)) == 40
    assert sparkline([], 10) == ""


def test_curve_points_cover_the_depth():
    assert curve_points(5) == [1, 2, 3, 4, 5]
    pts = curve_points(1000)
    assert pts[0] == 1 and pts[-1] == 1000 and len(pts) <= 20 and pts == sorted(pts)


HOSTILE = 'q"]\n```\x1b[31m%%{init}%%<b>'


def test_mermaid_labels_cannot_break_the_block():
    lab = label(HOSTILE)
    assert re.fullmatch(r"[\w\-.:/@+…]+", lab), lab
    assert len(lab) <= 20
    from rankgate.core.charts import QueryDelta

    lines = delta_chart([QueryDelta(HOSTILE, -0.5, True), QueryDelta("ok", 0.25, False)], "RR@2")
    block = "\n".join(lines[lines.index("```mermaid"):])
    assert block.count("```") == 2 and "\x1b" not in block and "%%" not in block and "<b>" not in block
    assert 'bar [-0.5, 0.25]' in block and '"★' in block


def test_mermaid_delta_chart_keeps_the_most_changed():
    from rankgate.core.charts import QueryDelta

    deltas = [QueryDelta(f"q{i:03d}", (i - 50) / 100, False) for i in range(101)]
    lines = delta_chart(deltas, "nDCG@10", most=10)
    assert "the 10 most changed of 100 changed queries" in lines[0]
    bars = re.search(r"bar \[(.*)\]", "\n".join(lines)).group(1).split(", ")
    assert [float(b) for b in bars] == [-0.5, -0.49, -0.48, -0.47, -0.46, 0.46, 0.47, 0.48, 0.49, 0.5]
    assert delta_chart([QueryDelta("q", 0.0, False)], "RR@5") == ["No query's RR@5 changed."]


def test_mermaid_recall_chart_one_line_per_run():
    lines = recall_chart(3, {"a": np.array([0.1, 0.2, 0.3]), "b": np.array([0.5, 0.5, 1.0])})
    text = "\n".join(lines)
    assert "x-axis [1, 2, 3]" in text and "line [0.1, 0.2, 0.3]" in text and "line [0.5, 0.5, 1]" in text


def test_svg_is_xml_and_escapes_names():
    from rankgate.core.charts import QueryDelta

    deltas = [QueryDelta(f"q{i}", float(np.sin(i)), i % 500 == 0) for i in range(2000)]
    svg = comparison_svg("<script>alert(1)</script>", [("cand <&> vs base", deltas)], 3,
                         {"base\x1b]0;x\x07": np.array([0.1, 0.5, 0.9]), "cand": np.array([0.2, 0.4, 1.0])})
    root = ET.fromstring(svg)  # well-formed
    assert "<script>" not in svg and "&lt;script&gt;" in svg and "\x1b" not in svg
    rects = [e for e in root.iter("{http://www.w3.org/2000/svg}rect") if e.get("class") in ("gain", "loss")]
    assert 0 < len(rects) <= MAX_BARS
    marks = [e for e in root.iter("{http://www.w3.org/2000/svg}path") if e.get("class") == "must"]
    assert len(marks) == 4
    assert len([e for e in root.iter("{http://www.w3.org/2000/svg}polyline")]) == 2


def rankgate(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "rankgate", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=120)


def test_compare_plot_and_markdown_charts(tmp_path):
    svg = tmp_path / "c.svg"
    out = rankgate("compare", str(SAMPLES / "ops-handbook"), "--plot", str(svg), "--format", "markdown",
                   "--resamples", "200")
    assert out.returncode == 0, out.stderr
    root = ET.parse(svg).getroot()
    titles = "".join(root.itertext())
    assert "bm25-stemmed vs bm25-plain: nDCG@5 delta per query" in titles
    assert "bm25-prf vs bm25-plain" in titles and "Recall@k, k = 1..20" in titles
    assert out.stdout.count("```mermaid") == 4  # a delta and a Recall@k chart per candidate
    assert "★q-leaked-key" in out.stdout  # bm25-prf loses the must-pass query


@pytest.mark.slow
def test_compare_plot_measure_and_bad_input(tmp_path):
    out = rankgate("compare", str(SAMPLES / "ops-handbook"), "--plot", str(tmp_path / "c.svg"),
                   "--plot-measure", "AP", "--resamples", "200")
    assert out.returncode == 0, out.stderr
    assert "AP delta per query" in (tmp_path / "c.svg").read_text()
    bad = rankgate("compare", str(SAMPLES / "ops-handbook"), "--plot", str(tmp_path / "d.svg"),
                   "--plot-measure", "nDCG@5,RR@5", "--resamples", "200")
    bad2 = rankgate("compare", str(SAMPLES / "ops-handbook"), "--plot", str(tmp_path / "nowhere" / "d.svg"),
                    "--resamples", "200")
    for b in (bad, bad2):
        assert b.returncode == 2 and "Traceback" not in b.stderr and len(b.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "d.svg").exists()


def test_gate_markdown_has_the_charts(tmp_path):
    md = tmp_path / "g.md"
    out = rankgate("gate", str(SAMPLES / "ops-handbook"), "--markdown", str(md))
    assert out.returncode == 3
    text = md.read_text()
    charts = text[text.index("### Charts"):]
    assert charts.count("```mermaid") == 2 and "★q-leaked-key" in charts and 'title "Recall@k"' in charts
