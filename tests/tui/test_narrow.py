"""At 80 columns: the footer drops whole keys (never a key without its label); the compare screen's macro
table keeps every figure whole (each run's name heads its own table, short headers)."""

from __future__ import annotations

import pytest

import re

from textual.events import Paste
from textual.widgets._footer import FooterKey

from rankgate.tui.widgets.footer import FittingFooter, priority_actions
from tests.tui.conftest import make_app, ready


@pytest.mark.slow
async def test_the_footer_shows_whole_keys_at_every_width(tiny):
    app = make_app(tiny)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        for width in (80, 100, 160, 80):
            await pilot.resize_terminal(width, 24)
            for keys in ((), ("p",), ("p",), ("p",)):  # each bottom pane focused in turn (Query: "a add n▏")
                await pilot.press(*keys)
                for _ in range(3):
                    await pilot.pause()
                await pilot.pause(0.1)
                footer = app.screen.query_one(FittingFooter)
                keys = [k for k in footer.query(FooterKey) if not k.has_class("-command-palette")]
                palette = footer.query_one(".-command-palette", FooterKey)
                assert keys and all(k.display and k.region.right <= palette.region.x for k in keys)  # all whole
                active = list(dict.fromkeys(b.action for _, b, _, _ in app.screen.active_bindings.values() if b.show))
                first = [a for a in priority_actions(width) if a in active]  # ? help (p pane, q quit): kept, last
                assert [k.action for k in keys][-len(first):] == first
                actions = [k.action for k in keys if k.action not in first]
                rest = [a for a in active if a not in first]
                assert actions == rest[:len(actions)]  # the first keys, in order: the rest are left out whole
                assert len(actions) < len(active) if width == 80 else True
                nxt = [k for k in keys if k.action == "next_review"]
                assert bool(nxt) == (width >= 100)  # `n next`: whole from 100 columns, left out at 80 (was "n")
        # Asked to compose again with the same keys and width (the focus went away and came back): the
        # mounted keys stay, not mounted anew.
        footer = app.screen.query_one(FittingFooter)
        mounted = list(footer.children)
        await footer.recompose()
        await pilot.pause()
        assert list(footer.children) == mounted and all(k.is_attached for k in mounted)


@pytest.mark.slow
async def test_compare_macros_fit_at_80_columns(tiny):
    from rich.console import Console

    from rankgate.tui.screens.compare import CompareScreen

    app = make_app(tiny)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        await pilot.press("C")
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, CompareScreen) and screen.comparison is not None
        console = Console(width=74, record=True, file=open("/dev/null", "w"))
        console.print(screen.macro_table())
        text = console.export_text()
        assert "…" not in text and "w/l/t" in text
        runs = [r.candidate for r in screen.comparison.candidates]
        lines = text.splitlines()
        assert [line.strip() for line in lines if line.strip() in runs] == runs  # each run heads its rows
        cis = re.findall(r"\[[-+]\d\.\d{3}, [-+]\d\.\d{3}\]", text)
        assert len(cis) == len(runs) * len(screen.comparison.measures)  # every CI whole, on its row
        wide = Console(width=200, record=True, file=open("/dev/null", "w"))
        wide.print(screen.macro_table(width=160))
        assert "wins/losses/ties" in wide.export_text()


@pytest.mark.slow
async def test_the_document_pane_shows_its_query_at_every_width(tiny):
    """At 80 and 100 columns the Query pane and the Document pane are not on screen together: the Document
    pane shows the query's ID and text at its top (escaped), and after `u` the next query's."""
    import json

    from rankgate.core.text import visible
    from rankgate.tui.widgets.doc_view import DocView
    from rankgate.tui.widgets.text_static import TextStatic

    queries = tiny / "queries.jsonl"
    rows = [json.loads(line) for line in queries.read_text(encoding="utf-8").splitlines()]
    for row in rows:
        row["text"] += " [bold]not markup[/bold]\x1b[31m"
    queries.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    app = make_app(tiny)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        for width, height in ((80, 24), (100, 30), (160, 45)):
            await pilot.resize_terminal(width, height)
            await pilot.pause()
            screen = app.screen
            if width < 120:
                while not screen.query_one(DocView).has_class("-shown"):
                    await pilot.press("p")
            seen = []
            for _ in range(2):
                await pilot.pause()
                doc = screen.query_one(DocView)
                bar = doc.query_one("#doc-query", TextStatic)
                query = screen.model.query(screen.qi)
                assert doc.doc is not None and bar.display
                assert bar._shown.plain == f"{visible(query.id)}  {visible(query.text, lines='space')}"
                assert "\x1b" not in bar._shown.plain and "[bold]" in bar._shown.plain  # escaped, not markup
                assert 1 <= bar.region.height <= 2 and bar.region.y > doc.region.y  # on screen, in the pane
                assert doc.region.contains(bar.region.x, bar.region.y) and bar.region.bottom <= height - 1
                seen.append(query.id)
                for _ in range(8):  # `u` until the queue moves to another query
                    await pilot.press("u")
                    await app.workers.wait_for_complete()
                    await pilot.pause()
                    if screen.qi is not None and screen.model.qids[screen.qi] != query.id:
                        break
            assert len(set(seen)) == 2  # `u` moved to another query and the pane followed it


@pytest.mark.slow
async def test_the_add_form_fits_at_80x24_and_100x30(tiny):
    """Every field, the reason field Tab reaches and the Enter/Escape line are on screen inside the form (was
    cut after the version field at 80x24); the long "in no run" question too."""
    from rankgate.tui.screens.label_form import LabelForm

    app = make_app(tiny)  # one app session, opened at 80x24 then resized (a start costs ~0.7 CPU s)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        review = app.screen
        for size in ((80, 24), (100, 30), (160, 45)):
            await pilot.resize_terminal(*size)
            await pilot.pause()
            await pilot.press("a")
            await pilot.pause()
            form = app.screen
            assert isinstance(form, LabelForm)
            box = form.query_one(".dialog").content_region

            def inside(wid: str) -> bool:
                r = form.query_one(wid).region
                return r.height > 0 and box.contains_region(r)

            assert all(inside(w) for w in ("#form-doc", "#form-grade", "#form-version", "#form-reason"))
            assert inside("#form-help") and "Escape cancels" in str(form.query_one("#form-help").render())
            await pilot.press("tab", "tab", "tab")
            await pilot.pause()
            assert form.focused is form.query_one("#form-reason") and inside("#form-reason")
            await pilot.press("shift+tab", "shift+tab", "shift+tab")
            app.post_message(Paste("no-such-document-with-a-long-name"))  # pasted, as IDs are (typed: 10 s)
            await pilot.pause()
            await pilot.press("enter", "2", "enter", "enter", "enter")
            await pilot.pause()
            assert app.screen is form and "Enter again to add it anyway" in str(form.query_one("#form-help").render())
            assert inside("#form-help") and inside("#form-reason")
            await pilot.press("escape")  # cancelled: nothing added, the next size opens a new form
            await pilot.pause()
            assert app.screen is review and "no-such-document-with-a-long-name" not in review.model.labels.labels(
                review.qid)


@pytest.mark.slow
async def test_the_footer_shows_the_review_queue_keys_where_they_fit(tiny):
    """`u` (the review queue) and `U` (its order) follow `n next N prev` in the footer, whole, from the width
    they fit at; narrower, they are left out whole (the palette and `?` list them)."""
    app = make_app(tiny)
    async with app.run_test(size=(120, 30)) as pilot:
        await ready(pilot)
        for width, shown in ((80, False), (120, True), (160, True)):
            await pilot.resize_terminal(width, 30)
            for _ in range(3):
                await pilot.pause()
            await pilot.pause(0.1)
            footer = app.screen.query_one(FittingFooter)
            keys = [(k.key_display or k.key, k.description, k.action) for k in footer.query(FooterKey)
                    if not k.has_class("-command-palette")]
            actions = [a for _, _, a in keys]
            assert ("cycle_queue_order" in actions) == shown, (width, keys)
            if shown:
                at = actions.index("prev_review")
                assert keys[at + 1:at + 3] == [("u", "queue", "next_queued"), ("U", "order", "cycle_queue_order")]


@pytest.mark.slow
async def test_n_at_80_columns_shows_the_document_it_highlights(tmp_path):
    """s8 newcomer F11: `n` highlighted a document of a third run (on no ranking shown) while the bottom row
    showed the Rankings pane: a digit then graded a document the expert never saw. Now the Document pane
    comes up with it; at 160 columns nothing moves (the Document pane is always shown)."""
    import shutil

    from tests.conftest import SAMPLES
    from rankgate.tui.widgets.doc_view import DocView
    from rankgate.tui.widgets.ranking import RankingPane

    folder = tmp_path / "ops"
    shutil.copytree(SAMPLES / "ops-handbook", folder)
    app = make_app(folder)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        screen = app.screen
        assert screen.qid == "q-leaked-key" and screen.query_one(RankingPane).display
        for _ in range(10):  # to the first unjudged document on no ranking shown
            await pilot.press("n")
            await pilot.pause()
            if screen.doc == "dns-dnssec-01":
                break
        assert screen.doc == "dns-dnssec-01"
        doc = screen.query_one(DocView)
        assert doc.display and doc.region.width > 0 and not screen.query_one(RankingPane).display
        assert "dns-dnssec-01" in app.export_screenshot()


@pytest.mark.slow
@pytest.mark.parametrize("width", [120, 132])
async def test_at_120_to_132_columns_each_ranking_row_fits_with_its_id_and_move(tmp_path, width):
    """Was: at 120 columns the Rankings pane had 38 columns: each list 17, IDs cut to "nets…-…" and the moves
    cut off; now it takes half of the bottom row up to 159 columns (app.tcss `-mid`)."""
    import shutil

    from rich.cells import cell_len

    from rankgate.tui.widgets.ranking import RankingList
    from tests.conftest import ROOT

    bench = tmp_path / "ops-handbook"
    shutil.copytree(ROOT / "sample_benchmarks" / "ops-handbook", bench)
    app = make_app(bench)
    async with app.run_test(size=(width, 40)) as pilot:
        await ready(pilot)
        await pilot.pause()
        screen = app.screen
        assert screen.has_class("-mid") and screen.query_one("#rankings").outer_size.width >= width // 2
        for lst in screen.query(RankingList):
            inner = lst.scrollable_content_region.width
            for i, row in enumerate(lst.rows[:5]):
                text = lst.render_row(i, inner).plain
                assert cell_len(text) <= inner, (text, inner)  # the move column is on screen
                assert text.rstrip().endswith(("gone", "new", "=")) or re.search(r"[▲▼]\d+$", text.rstrip())
                shown = text[9:].split(" ")[0]  # after "▸   1 ✔3 ": the document ID, cut in the middle
                assert len(shown) >= 12 and (shown == row.doc or "…" in shown), shown
        for title in screen.query(".ranking-title"):  # each figure whole (was "RR 1.00 · R" at 120 columns)
            text = title._shown.plain.rstrip()
            assert re.fullmatch(r"[BC]  bm25-\w+  RR \d\.\d\d( · R \d\.\d\d)?", text), text
            assert cell_len(text) <= title.content_region.width, (text, title.content_region.width)


async def test_the_gate_panes_hint_is_whole_at_80_columns(tiny):
    """At 80x24 the line `✔ N checks pass  (enter lists them)` was cut to `(enter lists`: a shorter hint."""
    from rankgate.tui.widgets.gate_panel import GatePanel

    app = make_app(tiny)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        panel = app.screen.query_one(GatePanel)
        if panel.view is not None:
            panel.show(panel.view)  # drawn again at its laid-out width
        await pilot.pause()
        line = next((ln for ln in str(app.screen.query_one("#gate-body").render()).splitlines() if ln.startswith("✔")), "")
        room = panel.size.width - panel.styles.gutter.width
        assert "(enter" in line and line.rstrip().endswith(")") and len(line.rstrip()) <= room, (line, room)


@pytest.mark.slow
async def test_the_gate_panes_measures_keep_a_row_each_at_every_width(tiny):
    """At 80x24 the Gate pane is 36 columns: its measures table (43 columns wide) shortens its heads and columns
    ('base', 'cand'), so no row wraps (the Δ head had a line of its own); from 100 columns, the full heads.
    A difference of zero is left blank."""
    from rankgate.tui.widgets.gate_panel import GatePanel

    app = make_app(tiny)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        for width, height, heads in ((80, 24, "base"), (100, 30, "baseline"), (160, 45, "baseline"), (80, 24, "base")):
            await pilot.resize_terminal(width, height)
            for _ in range(3):
                await pilot.pause()
            panel = app.screen.query_one(GatePanel)
            table = panel._measures(panel.view).plain.splitlines()
            room = panel.scrollable_content_region.width
            assert table[0].split()[:2] == ["measure", heads] and table[0].rstrip().endswith("Δ")
            assert len(table) > 2 and all(len(row) < room for row in table)  # a row each: nothing wraps
            assert all(re.fullmatch(r"\S.*\s+\d\.\d{4}\s+\d\.\d{4}(\s+[-+]\d\.\d{4}|\s*)", row) for row in table[1:]), table
