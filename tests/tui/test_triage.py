"""Triage at a glance (issue 16): the gate's reasons first, one name per measure, the run picker's refusal,
each run's top k in view, long ID lists cut."""

from __future__ import annotations

import pytest

from rankgate.tui.widgets.gate_panel import GatePanel
from rankgate.tui.widgets.gate_reasons import failing_lines, one_line_reason, pass_summary
from tests.tui.conftest import SIZE, make_app, ready


def plain(widget) -> str:
    content = widget.content
    return content.plain if hasattr(content, "plain") else str(content)


DETAILS = [
    {"name": "RR@5_no_significant_regression", "passed": True, "kind": "no_significant_regression",
     "measure": "RR@5", "why": "fine"},
    {"name": "slice_hit_floor[dns]", "passed": False, "kind": "floor", "slice": "dns", "measure": "Success@5",
     "candidate": 0.5, "baseline": 0.9, "floor": 0.75, "why": "slice dns (8 queries): Success@5 0.5000, floor 0.75"},
    {"name": "judged_share", "passed": True, "kind": "judged", "why": "ok"},
    {"name": "must_pass_queries_hit", "passed": False, "kind": "must_pass", "queries": ["q-a", "q-b"],
     "failed": ["q-b"], "why": "no relevant document in the top 5 for q-b"},
]


def test_failing_checks_in_users_words_passing_counted():
    assert failing_lines(DETAILS, 5) == [  # must-pass misses first
        "must-pass q-b: no relevant document in the candidate's top 5",
        "slice dns: Success@5 0.5000 is below the floor 0.75",
    ]
    assert pass_summary(DETAILS) == "2 checks pass"
    assert one_line_reason(DETAILS, 5) == "must-pass q-b: no relevant document in the candidate's top 5 (+1 more)"
    passing = [d for d in DETAILS if d["passed"]]
    assert failing_lines(passing, 5) == []
    assert one_line_reason(passing, 5) == "all 2 checks pass"


@pytest.mark.slow
async def test_gate_pane_leads_with_the_decision_and_its_reason_and_the_run_picker_refuses_one_run_twice(tiny):
    """One app session (each start costs ~0.7 CPU s): the gate pane, then the run picker's refusal."""
    from rankgate.tui.screens.run_picker import RunPicker

    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = app.screen
        reason = "must-pass q-restore: no relevant document in the candidate's top 3"
        lines = str(screen.query_one("#gate-body").render()).splitlines()
        assert lines[0].lstrip().startswith("REJECT")
        assert lines[2] == "✗ " + reason  # right under the decision, before the measures
        assert lines[3:5] == ["✗ R@3 0.8000 is lower than the baseline's 0.9000",
                              "✗ RR@3 0.7000 is lower than the baseline's 0.8000"]
        assert lines[5].startswith("✔ no check passes")
        assert "must_pass_queries_hit" not in "\n".join(lines)  # no check names, no passing list
        top = plain(screen.query_one("#top-bar"))
        assert top.startswith(" REJECT  " + reason + " (+2 more)")
        gate = screen.query_one(GatePanel)
        gate.focus()
        await pilot.press("enter")  # lists the passing checks under their count
        await pilot.pause()
        body = str(screen.query_one("#gate-body").render())
        assert gate.show_passing and "(enter: fold)" in body
        # One name per measure, as the checks and docs/measures.md name them: Success@k, RR@k.
        assert "Success@3" in body and "RR@3" in body
        assert "Hit@" not in body and "MRR@" not in body
        await pilot.press("enter")
        await pilot.pause()
        assert "(enter lists them)" in str(screen.query_one("#gate-body").render())
        # The run picker refuses the same run on both sides.
        before = (screen.model.baseline, screen.model.candidate, screen.model.version)
        assert before[:2] == ("plain", "prf")
        await pilot.press("c")  # the candidate picker opens on prf; plain (the baseline) is first
        await pilot.pause()
        await pilot.press("up", "enter")
        await pilot.pause()
        assert isinstance(app.screen, RunPicker)  # still open: nothing chosen
        notes = [n.message for n in app._notifications]
        assert any("plain is already the baseline: a run cannot be both baseline and candidate" in n
                   for n in notes)
        assert (screen.model.baseline, screen.model.candidate, screen.model.version) == before
        await pilot.press("escape")
        await pilot.pause()
        screen.action_set_run("baseline", "prf")  # from the command palette, by name: refused the same way
        await pilot.pause()
        assert (screen.model.baseline, screen.model.candidate, screen.model.version) == before
        assert any("prf is already the candidate" in n.message for n in app._notifications)
        assert "plain vs plain" not in app.export_screenshot()


@pytest.mark.slow
async def test_passing_checks_are_counted_and_listed_on_enter(tiny):
    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = app.screen
        await pilot.press("2", *"states the RPO", "enter")
        await pilot.pause()
        body = str(screen.query_one("#gate-body").render())
        assert "✔ all 3 checks pass" in body and "must_pass_queries_hit" not in body
        assert plain(screen.query_one("#top-bar")).startswith(" ACCEPT  all 3 checks pass")
        screen.query_one(GatePanel).focus()
        await pilot.press("enter")
        await pilot.pause()
        assert "✔ must_pass_queries_hit  the must-pass query hits at 3" in str(
            screen.query_one("#gate-body").render())


OPS = __import__("pathlib").Path(__file__).resolve().parents[2] / "sample_benchmarks" / "ops-handbook"


@pytest.mark.slow
async def test_rankings_open_on_each_runs_top_k(tmp_path):
    """ops-handbook opens on a query whose highlighted document sits at candidate rank 19: both lists still
    start at rank 1 with their top 5 in view; in the list, the cursor's rank is reachable."""
    from rankgate.tui.widgets.ranking import RankingPane

    app = make_app(OPS)
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        screen = app.screen
        lists = screen.query_one(RankingPane).lists()
        cand = lists["candidate"]
        assert cand.rows[cand.cursor].rank > 10  # the highlighted document is far below k
        for lst in lists.values():
            assert int(lst.scroll_offset.y) == 0
            assert lst.scrollable_content_region.height - 1 >= screen.model.k  # all of the top k shows
        cand.focus()
        await pilot.pause()
        top = int(cand.scroll_offset.y)
        assert top <= cand.cursor < top + cand.scrollable_content_region.height - 1
        await pilot.press("end")
        await pilot.pause()
        assert cand.cursor == len(cand.rows) - 1  # below k stays reachable
        assert int(cand.scroll_offset.y) > 0
        assert int(lists["baseline"].scroll_offset.y) == 0  # the other list follows, its top k stays in view


def test_cut_list_keeps_what_fits_and_counts_the_rest():
    from rankgate.core.text import cut_list, more_tail

    assert cut_list(["a", "b"], 10) == (["a", "b"], 0)
    ids = [f"doc-{i:03d}" for i in range(100)]
    shown, more = cut_list(ids, 40)
    assert more == 100 - len(shown) and len(shown) >= 1
    assert len(", ".join(shown) + more_tail(more)) <= 40
    assert more_tail(3) == " ... and 3 more" and more_tail(0) == ""


@pytest.mark.slow
async def test_long_missing_list_is_cut(tiny):
    import json

    with open(tiny / "judgments.jsonl", "a", encoding="utf-8") as f:
        for i in range(300):
            f.write(json.dumps({"query": "q-restore", "doc": f"d-extra-{i:03d}", "grade": 2,
                                "collection_version": "tiny-1", "reviewer": "seed"}) + "\n")
    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        text = plain(app.screen.query_one("#column-candidate .ranking-missing"))
        assert text.startswith("301 relevant not in the top 3: d-extra-000, d-extra-001")
        assert " ... and " in text and text.endswith(" more (M lists them)")
        shown = text.split(": ", 1)[1].split(" ... and ")[0].split(", ")
        assert int(text.rsplit(" ... and ", 1)[1].split()[0]) == 301 - len(shown)
        assert len(text) < 3 * 60


@pytest.mark.slow
async def test_narrow_screens_show_one_bottom_pane_and_zoom_widens_any(tiny):
    """Below 120 columns the bottom row shows Rankings, Document or Query at full width (p switches);
    zoom (z) gives the focused pane the whole width; at 160 columns all three show side by side."""
    app = make_app(tiny)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        screen = app.screen
        shown = lambda: [w.id for w in screen.query_one("#row-bottom").children if w.display]  # noqa: E731
        assert screen.has_class("-narrow") and shown() == ["rankings"]
        assert screen.query_one("#rankings").outer_size.width == 80
        assert screen.query_one("#gate").outer_size.width >= 39  # the top row in halves, not a fixed 62
        await pilot.press("p")
        await pilot.pause()
        assert shown() == ["doc"] and screen.focused is screen.query_one("#doc")
        await pilot.press("p")
        await pilot.pause()
        assert shown() == ["labels"] and screen.focused.id == "label-list"
        await pilot.press("p")
        await pilot.pause()
        assert shown() == ["rankings"]
        screen.query_one("#gate").focus()
        await pilot.press("z")
        await pilot.pause()
        assert screen.maximized is screen.query_one("#gate") and screen.query_one("#gate").outer_size.width == 80
        await pilot.press("z")
        await pilot.pause()
        assert screen.maximized is None
        footer = app.export_screenshot()
        assert "palettev" not in footer
    async with make_app(tiny).run_test(size=(160, 45)) as pilot:
        await ready(pilot)
        screen = pilot.app.screen
        assert not screen.has_class("-narrow")
        assert [w.id for w in screen.query_one("#row-bottom").children if w.display] == ["labels", "rankings", "doc"]


@pytest.mark.slow
async def test_blind_review_hides_run_names_decision_and_measures(tiny):
    from rankgate.tui.widgets.query_list import QueryList
    from rankgate.tui.widgets.ranking import RankingPane

    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        review = app.screen
        await pilot.press("B")
        await ready(pilot)
        assert app.inputs.blind
        top = plain(review.query_one("#top-bar"))
        assert "BLIND" in top and "B shows them" in top
        gate = str(review.query_one("#gate-body").render())
        assert "BLIND REVIEW" in gate
        for shown in (top, gate):
            for hidden in ("REJECT", "ACCEPT", "plain", "prf", "must-pass", "R@3"):
                assert hidden not in shown
        pane = review.query_one(RankingPane)
        titles = [plain(t) for t in pane.query(".ranking-title")]
        misses = [plain(t) for t in pane.query(".ranking-missing")]
        assert [t.split()[:2] for t in titles] == [["run", "1"], ["run", "2"]]
        assert not any("plain" in t or "prf" in t or "RR" in t for t in titles)
        assert all("in the top" not in t and "hidden" in t for t in misses)
        ql = review.query_one(QueryList)
        assert "RR" not in ql.render_header(100).plain and "measures hidden" in ql.render_header(100).plain
        assert "→" not in ql.render_row(0, 100).plain
        for key in ("C", "M"):  # compare, the missed documents: refused while blind
            await pilot.press(key)
            await pilot.pause()
            assert app.screen is review
        pair, sort = (review.model.baseline, review.model.candidate), review.queries.sort
        await pilot.press("b", "s")  # the run picker (names) and sorting by change: refused while blind
        await pilot.pause()
        assert app.screen is review and (review.model.baseline, review.model.candidate) == pair
        assert review.queries.sort == sort
        review.action_filter("is:miss")
        review.action_set_run("baseline", "prf")
        await pilot.pause()
        assert (review.model.baseline, review.model.candidate) == pair
        from rankgate.tui.commands import ReviewCommands

        titles = [t for t, _, _ in ReviewCommands(review)._entries()]
        assert titles and not any(t.startswith(("Baseline:", "Candidate:")) for t in titles)  # the palette too
        # Off again: names, decision and measures are back.
        await pilot.press("B")
        await ready(pilot)
        assert not app.inputs.blind
        assert plain(review.query_one("#top-bar")).startswith(" REJECT")
        assert "prf" in plain(review.query_one(RankingPane).query_one("#column-candidate .ranking-title"))
        assert "RR" in review.query_one(QueryList).render_header(100).plain


def _help_rows(screen) -> dict[str, str]:
    """The help screen's keys table as drawn: key column -> description."""
    import re

    from rich.console import Console

    console = Console(width=160, record=True, color_system=None, file=open("/dev/null", "w"))
    console.print(screen.query_one("#help-keys").content)
    rows = {}
    for line in console.export_text().splitlines():
        cells = re.split(r"\s{2,}", line.strip(), maxsplit=1)
        if len(cells) == 2:
            rows[cells[0]] = cells[1]
    return rows


@pytest.mark.slow
async def test_help_lists_every_key_as_pressed_and_agrees_with_the_docs(tiny):
    from pathlib import Path

    from rankgate.tui.commands import COMMANDS, grade_commands, keys_pressed, pressed
    from rankgate.tui.screens.help import HelpScreen

    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        review = app.screen
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        rows = _help_rows(app.screen)
        for c in grade_commands(review.grades):  # "1" is listed as "1", never "0-3"
            assert c.key_display in rows, c.key_display
            assert rows[c.key_display].startswith(f"Grade {c.key_display}")
        assert "0-3" not in rows
        for c in COMMANDS:  # every key of every binding, as it is typed
            assert keys_pressed(c) in rows, keys_pressed(c)
            assert rows[keys_pressed(c)] == c.title
        assert rows["x / delete"] == "Remove my judgment" and rows["?"] == "Keys and legend"
        assert rows["n"] == "Next unjudged document"

    # docs/review.md's keys table names every key of COMMANDS, as pressed.
    import re
    docs = Path(__file__).resolve().parents[2] / "docs" / "review.md"
    text = docs.read_text(encoding="utf-8")
    table = text.split("## Keys", 1)[1].split("\n\n", 2)[1]
    named = set()
    for line in table.splitlines()[2:]:
        named.update(re.findall(r"`([^`]+)`", line.split(" | ")[0]))
    for c in COMMANDS:
        for k in c.key.split(","):
            assert pressed(k) in named, f"docs/review.md's keys table lacks {pressed(k)!r} ({c.title})"
    for d in "0123":
        assert d in named
    assert "next unjudged document" in table  # n, in the same words as help


@pytest.mark.slow  # drives a burst of keys or several screens: over a second
async def test_compare_screen_candidate_first_moves_shown_columns_fit(tiny):
    from rich.console import Console

    from rankgate.tui.screens.compare import CompareScreen, QueryChangeList

    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        review = app.screen
        review.action_set_run("candidate", "stemmed")  # the gate's candidate is now the last loaded run
        await ready(pilot)
        assert review.model.candidate == "stemmed"
        await pilot.press("C")
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        c = screen.comparison
        assert [r.candidate for r in c.candidates] == ["stemmed", "prf"]  # the gate's candidate first
        lst = screen.query_one(QueryChangeList)
        assert lst.report.candidate == "stemmed"
        # The relevant-documents line is there before any cursor move, for the first row.
        first = lst.report.rows[0].query
        moves = str(screen.query_one("#compare-moves").render())
        assert moves.startswith("relevant documents of " + first)
        # Columns sized to their content: the query column is the longest ID, a measure column its values.
        longest = max(len(r.query) for r in lst.report.rows)
        head = lst.render_header(200).plain
        assert head.startswith("query".ljust(longest) + " status")
        assert len(lst.render_row(0, 200).plain) == len(head)
        console = Console(width=300, record=True, file=open("/dev/null", "w"))
        console.print(screen.macro_table())
        lines = console.export_text().splitlines()
        names = [m.name for m in c.measures]
        measure_col = lines[0].index("baseline") - lines[0].index("measure")
        assert measure_col <= max(len(n) for n in names) + 3  # not as wide as a list of query IDs
        assert all("newly" not in line for line in lines)
        # A slice's newly failed queries are cut too, with how many more.
        rep = c.candidates[0]
        assert rep.slices  # the tiny lab's queries carry slice tags
        name = next(iter(rep.slices))
        rep.slices[name]["newly_failed"] = [f"q-lost-{i:03d}" for i in range(300)]
        console = Console(width=300, record=True, file=open("/dev/null", "w"))
        for part in screen.details():
            console.print(part)
        text = console.export_text()
        assert "q-lost-000" in text and "q-lost-299" not in text and "more" in text


@pytest.mark.slow
async def test_full_missing_list_one_key_away(tiny):
    import json

    from rankgate.tui.screens.missing import MissingList, MissingScreen

    odd = "d-[b]odd[/b]\x1b[31m"
    with open(tiny / "judgments.jsonl", "a", encoding="utf-8") as f:
        for doc in [f"d-extra-{i:03d}" for i in range(300)] + [odd]:
            f.write(json.dumps({"query": "q-restore", "doc": doc, "grade": 2,
                                "collection_version": "tiny-1", "reviewer": "seed"}) + "\n")
    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        review = app.screen
        review.go_to("q-restore")
        await pilot.pause()
        review.query_one("#query-list").focus()
        m = review.model
        cand_missing = m.missing(m.qindex["q-restore"], m.candidate)
        assert len(cand_missing) == 302 and odd in cand_missing
        await pilot.press("M")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, MissingScreen)
        lst = screen.query_one(MissingList)
        heads = [v for kind, v in lst.rows if kind == "head"]
        assert heads[1] == "candidate misses 302 in its top 3"
        docs = [v for kind, v in lst.rows if kind == "doc"]
        assert docs[-302:] == cand_missing  # the whole list, none cut
        i = lst.rows.index(("doc", odd))
        row = lst.render_row(i, 80).plain
        assert "\x1b" not in row and "[b]odd[/b]" in row  # escaped, shown literally
        # Enter on an ID: back on the review, that document highlighted.
        target = next(j for j, (kind, v) in enumerate(lst.rows) if v == "d-extra-007")
        lst.cursor = target
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is review and (review.qid, review.doc) == ("q-restore", "d-extra-007")
        await pilot.press("M")
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is review
