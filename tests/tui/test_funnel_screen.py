"""The app's stage funnel (key F) on the ops-handbook sample, and leaks in red in the rankings."""

from __future__ import annotations

import pytest

import io
from pathlib import Path

from tests.tui.conftest import make_app, ready

OPS = Path(__file__).resolve().parents[2] / "sample_benchmarks" / "ops-handbook"


def _text(row) -> str:
    kind, value = row
    value = value[1] if kind == "doc" else value
    return value.plain if hasattr(value, "plain") else str(value)


@pytest.mark.slow
async def test_funnel_key_shows_both_pipelines_at_the_query_and_goes_to_a_document():
    from rankgate.tui.screens.funnel import FunnelScreen

    app = make_app(OPS)
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        review = app.screen
        review.go_to("q-origin-exposed")
        await pilot.pause()
        await pilot.press("F")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, FunnelScreen) and screen.qid == "q-origin-exposed"
        lines = [_text(r) for r in screen.rows]
        assert lines[0] == "baseline bm25-plain" and "candidate bm25-prf" in lines
        assert any(line.split() == ["rerank", "top", "10", "recall", "0.790", "relevant", "93", "lost", "here", "13"]
                   for line in lines)
        cand = lines[lines.index("candidate bm25-prf"):]
        assert any(line.strip().startswith("netsec-origin-isolation-02 g3  3 → 3 → –  lost at context")
                   for line in cand)
        at = next(i for i, r in enumerate(screen.rows) if r[0] == "doc")
        screen.query_one("#funnel-list").cursor = at
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is review and review.doc == screen.rows[at][1][0]


@pytest.mark.slow
async def test_leaks_are_marked_in_the_candidates_ranking():
    from rankgate.tui.widgets.ranking import RankingPane

    app = make_app(OPS / "permissions")
    async with app.run_test(size=(160, 45)) as pilot:
        await ready(pilot)
        app.screen.go_to("q-status-page")
        await pilot.pause()
        lists = app.screen.query_one(RankingPane).lists()
        assert lists["candidate"].leaks == {"ir-security-incident-01"} and lists["baseline"].leaks == set()
        row = next(i for i, r in enumerate(lists["candidate"].rows) if r.doc == "ir-security-incident-01")
        text = lists["candidate"].render_row(row, 60)
        assert text.plain.rstrip().endswith("leak") and "red" in str(text.spans[-1].style)


def _compare_text(screen) -> str:
    """The compare screen's summary as the terminal shows it (rendered at its width)."""
    from rich.console import Console

    console = Console(width=screen.size.width, record=True, file=io.StringIO())
    console.print(screen.query_one("#compare-macros").content)
    return console.export_text()


@pytest.mark.slow
async def test_compare_shows_the_funnels_of_baseline_and_candidate_side_by_side_as_the_cli_does():
    """The app's compare screen: per stage, recall and losses of bm25-plain and bm25-prf (the figures of
    `rankgate compare --format table`), and the document the candidate loses where the baseline kept it."""
    from rankgate.tui.screens.compare import CompareScreen

    app = make_app(OPS)
    async with app.run_test(size=(160, 45)) as pilot:
        await ready(pilot)
        await pilot.press("C")
        for _ in range(50):
            await app.workers.wait_for_complete()
            await pilot.pause()
            if isinstance(app.screen, CompareScreen) and app.screen.comparison is not None:
                break
        screen = app.screen
        assert isinstance(screen, CompareScreen) and screen.comparison is not None
        assert screen.funnels["bm25-plain"].pipeline == "bm25-plain" and screen.funnels["bm25-stemmed"] is None
        text = _compare_text(screen)
        assert "funnel bm25-plain → bm25-prf  recall" in text
        assert "funnel bm25-stemmed: no pipeline" in text
        rows = {tuple(line.split()[:6]) for line in text.splitlines()}
        assert ("retrieve", "0.875", "0.984", "+0.109", "16", "3") in rows
        assert ("context", "0.509", "0.546", "+0.037", "38", "47") in rows
        assert "lost where the baseline kept them: 9, e.g. backup-restore-drill-01 for q-rto-vault at context" in text


@pytest.mark.slow
async def test_compare_in_the_app_applies_the_acl_and_counts_leaks(tmp_path):
    import json
    import shutil
    import subprocess
    import sys

    from rankgate.tui.screens.compare import CompareScreen

    bench = tmp_path / "ops-handbook"
    shutil.copytree(OPS, bench)
    done = subprocess.run([sys.executable, "-m", "rankgate", "compare", str(bench / "permissions"), "--resamples",
                           "200"], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    cli = json.loads(done.stdout)
    app = make_app(bench / "permissions")
    async with app.run_test(size=(160, 45)) as pilot:
        await ready(pilot)
        await pilot.press("C")
        for _ in range(50):
            await app.workers.wait_for_complete()
            await pilot.pause()
            if isinstance(app.screen, CompareScreen) and app.screen.comparison is not None:
                break
        c = app.screen.comparison
        text = _compare_text(app.screen)
    mine = {rep.candidate: rep.summary for rep in c.candidates}
    for cand in cli["candidates"]:
        for m, s in cand["summary"].items():
            assert mine[cand["candidate"]][m]["candidate"] == s["candidate"], (cand["candidate"], m)
            assert mine[cand["candidate"]][m]["baseline"] == s["baseline"]
    assert "permission leaks (documents returned to users who may not see them): bm25-plain 0 · " \
           "bm25-stemmed-cache 1 · bm25-stemmed 0" in text
