"""The app's stage funnel (key F) on the ops-handbook sample, and leaks in red in the rankings."""

from __future__ import annotations

from pathlib import Path

from tests.tui.conftest import make_app, ready

OPS = Path(__file__).resolve().parents[2] / "sample_benchmarks" / "ops-handbook"


def _text(row) -> str:
    kind, value = row
    value = value[1] if kind == "doc" else value
    return value.plain if hasattr(value, "plain") else str(value)


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
