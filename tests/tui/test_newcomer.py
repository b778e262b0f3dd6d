"""What a newcomer met in the app (notes/s7/newcomer.md), each as they met it."""

from __future__ import annotations

import pytest

from rankgate.tui.screens.review import ReviewScreen
from tests.tui.conftest import SIZE, make_app, ready
from tests.tui.factory import RUNS


def _top(app) -> str:
    return str(app.screen.query_one("#top-bar").render())


def _gate(app) -> str:
    return str(app.screen.query_one("#gate-body").render())


@pytest.mark.slow
async def test_a_candidate_left_out_gives_no_decision_not_the_baseline_against_itself(tiny):
    """F20: the candidate's file has a bad line: no ACCEPT of the baseline against itself, but no decision,
    naming the run and its file:line; picking another candidate gives a decision again."""
    (tiny / "runs" / "prf.jsonl").write_text('{"meta": {"name": "prf"}}\n{"query": "q-tls", "ranking": 7}\n')
    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        assert isinstance(app.screen, ReviewScreen) and app.error is None
        top, gate = _top(app), _gate(app)
        for shown in (top, gate):
            assert "NO DECISION" in shown and "candidate prf left out" in shown and "prf.jsonl:2" in shown
            assert "ACCEPT" not in shown and "REJECT" not in shown
        assert "plain vs plain" not in gate and "candidate plain" not in top
        app.screen.action_set_run("candidate", "stemmed")  # picked by the reviewer (c): a decision again
        await pilot.pause()
        assert app.screen.model.candidate == "stemmed"
        assert "NO DECISION" not in _top(app) and ("ACCEPT" in _top(app) or "REJECT" in _top(app))


@pytest.mark.slow
async def test_raw_files_with_the_candidate_unreadable_give_no_decision(tiny):
    """F20 with raw files: the second run given is the candidate, read or not."""
    bad = tiny / "bad.trec"
    bad.write_text("q-tls 0 d-cert 1\n")
    app = make_app(tiny / "judgments.jsonl", runs=[str(tiny / "runs" / "plain.jsonl"), str(bad)])
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        top = _top(app)
        assert "NO DECISION" in top and "candidate bad left out" in top and "bad.trec:1" in top
        assert "ACCEPT" not in top and "REJECT" not in top


@pytest.mark.slow
async def test_a_run_ranking_a_document_twice_is_left_out_and_named(tiny):
    """F19: `gate` refuses a run with a document ranked twice for a query (file:line); the app did not say a
    word and used it. Now it is left out and named, as a run with a bad score is."""
    path = tiny / "runs" / "stemmed.trec"
    lines = [f"{q} Q0 {d} {i + 1} {10 - i} stemmed" for q, docs in RUNS["stemmed"].items() for i, d in enumerate(docs)]
    path.write_text("\n".join(lines + [lines[1]]) + "\n")  # its second line again, as the last line
    manifest = tiny / "benchmark.toml"
    manifest.write_text(manifest.read_text().replace("runs/stemmed.jsonl", "runs/stemmed.trec"))
    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        assert sorted(app.screen.model.runs) == ["plain", "prf"]
        gate = _gate(app)
        assert "run left out:" in gate and f"stemmed.trec:{len(lines) + 1}" in gate and "twice for query" in gate
        assert any("twice for query" in n.message for n in app._notifications)
        assert "NO DECISION" not in _top(app)  # not a run of the gate's pair: the decision stands


@pytest.mark.slow
async def test_the_pane_with_the_keys_and_the_query_shown_are_marked_without_colour(tiny):
    """F22: on open the arrows move the query list while a grade key grades the rankings' ▸ document. The
    query shown has ▸ on its row, the pane the keys go to says so in its title, and the reason prompt of a
    grade names the query and the document it graded. First, in the same app session (a start costs ~0.7
    CPU s), F7/F8: the rankings and the label line say what they count in plain words ("misses 1 in top 3"
    read as a count among the top 3; "0-3 grades it" as a description)."""
    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = app.screen
        screen.go_to("q-restore", "d-rpo")
        await pilot.pause()
        missing = str(screen.query_one("#column-candidate .ranking-missing").render())
        assert missing == "1 relevant not in the top 3: d-restore"
        detail = str(screen.query_one("#label-detail").render())
        assert detail.startswith("d-rpo  unjudged · press 0-3 to grade it")
        lst = screen.query_one("#query-list")
        titles = lambda: {w: str(screen.query_one(f"#{w}").border_title) for w in ("queries", "gate", "labels", "rankings")}  # noqa: E731
        assert titles() == {"queries": "Queries ◂ keys", "gate": "Gate", "labels": "Query", "rankings": "Rankings"}
        rows = [lst.render_row(i, 60).plain for i in range(lst.count)]
        assert rows[lst.cursor].startswith("▸") and sum(r.startswith("▸") for r in rows) == 1
        await pilot.press("down")
        await pilot.pause()
        assert lst.render_row(lst.cursor, 60).plain.startswith("▸")
        assert not lst.render_row(lst.cursor - 1, 60).plain.startswith("▸")
        await pilot.press("tab", "tab", "tab")  # queries -> gate -> query and labels -> rankings
        await pilot.pause()
        assert titles() == {"queries": "Queries", "gate": "Gate", "labels": "Query", "rankings": "Rankings ◂ keys"}
        qid, doc = screen.qid, screen.doc
        await pilot.press("1")
        await pilot.pause()
        label = str(screen.query_one("#reason-label").render())
        assert f"grade 1 of {qid} · {doc}" in label


@pytest.mark.slow
async def test_the_footer_always_shows_help_and_the_pane_key_where_panes_are_hidden(tiny):
    """F2: `? help` at every width; `p pane` below 120 columns (the only way to the Query and Document panes
    there); `q quit` where it fits (from 140), and `n next` still from 100."""
    from textual.widgets._footer import FooterKey

    from rankgate.tui.widgets.footer import FittingFooter

    app = make_app(tiny)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        for width, want, not_want in ((80, {"help", "next_pane"}, {"quit"}),
                                      (100, {"help", "next_pane", "next_review"}, {"quit"}),
                                      (160, {"help", "quit", "next_review", "next_queued"}, {"next_pane"})):
            await pilot.resize_terminal(width, 30)
            for _ in range(3):
                await pilot.pause()
            await pilot.pause(0.1)
            shown = {k.action for k in app.screen.query_one(FittingFooter).query(FooterKey)}
            assert want <= shown and not (not_want & shown), (width, shown)


def _status(app) -> str:
    return str(app.screen.query_one("#status-bar").render())


@pytest.mark.slow
async def test_unexported_edits_and_the_reviewer_are_seen_at_80_and_100_columns(tiny):
    """F17/F5/F4: "N unexported" sits beside "judged N this session" (it was last in the top bar, cut at any
    width up to 260); the reviewer leads line 2 from 100 columns; both lines keep only whole pieces."""
    app = make_app(tiny)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        await pilot.press("1", "escape")
        await pilot.pause()
        assert app.unexported == 1
        status = _status(app)
        assert status.startswith("judged 1 this session, 1 today · 1 unexported · ") and len(status) <= 78
        assert "tester" not in status
        await pilot.resize_terminal(100, 30)
        for _ in range(3):
            await pilot.pause()
        status, top = _status(app), _top(app)
        assert status.startswith("tester judged 1 this session") and "1 unexported" in status
        for line in (status, top):  # every piece whole: no piece cut by the edge
            assert len(line) <= 98 and not line.endswith("·") and "…" not in line.split(" · ")[-1][-2:]
        await pilot.resize_terminal(160, 45)
        for _ in range(3):
            await pilot.pause()
        assert _top(app).endswith("candidate prf · collection tiny-1")


@pytest.mark.slow
async def test_help_page_down_moves_by_the_visible_height(tiny):
    """F1 (not reproduced: at 100x30 `?`, Home, PageDown moves from "U" to "/", one visible height): PageDown
    and PageUp move by the visible height, Home and End to the ends."""
    from textual.containers import VerticalScroll

    from rankgate.tui.screens.help import HelpScreen

    app = make_app(tiny)
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        box = app.screen.query_one(VerticalScroll)
        page = box.scrollable_content_region.height
        await pilot.press("end")
        await pilot.wait_for_scheduled_animations()  # the scroll's animation done
        assert box.scroll_y > page  # the help is longer than two pages at 100x30
        await pilot.press("home", "pagedown")
        await pilot.wait_for_scheduled_animations()  # the scroll's animation done
        assert box.scroll_y == page
        await pilot.press("pageup")
        await pilot.wait_for_scheduled_animations()  # the scroll's animation done
        assert box.scroll_y == 0


@pytest.mark.slow
async def test_the_quit_dialog_is_centred_like_the_others(tiny):
    """F3: the "N label edits not exported" dialog was drawn at the top-left corner, over the status bar."""
    from rankgate.tui.screens.sync import QuitScreen

    app = make_app(tiny)
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        await pilot.press("1", "escape", "q")
        await pilot.pause()
        assert isinstance(app.screen, QuitScreen)
        box = app.screen.query_one("#quit-dialog").region
        assert abs((box.x + box.right) / 2 - 50) <= 1 and abs((box.y + box.bottom) / 2 - 15) <= 1, box
        await pilot.press("escape")


@pytest.mark.slow
async def test_a_folder_with_one_run_gives_no_decision_where_the_cli_refuses(tmp_path):
    """Red team: three-questions has one run (baseline = candidate = golden) and the default rules compare
    the two: `rankgate gate` exits 2, and the app showed ACCEPT golden vs golden. Now no decision, saying why;
    with absolute rules only (a floor) the app decides, as the CLI does."""
    import shutil

    from tests.conftest import SAMPLES

    folder = shutil.copytree(SAMPLES / "three-questions", tmp_path / "tq")
    app = make_app(folder)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        top, gate = _top(app), _gate(app)
        for shown in (top, gate):
            assert "NO DECISION" in shown and "ACCEPT" not in shown and "REJECT" not in shown
            assert "would compare it with itself" in shown
    manifest = folder / "benchmark.toml"
    text = manifest.read_text()
    manifest.write_text(text + '\n[[gate.rules]]\ncheck = "floor"\nmeasure = "R@3"\nmin = 0.1\n')
    app = make_app(folder)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        assert "NO DECISION" not in _top(app) and "ACCEPT" in _top(app)
