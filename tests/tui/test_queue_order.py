"""The app's review queue ordered by a judge's suggestions (U): on ops-handbook, with the sample's lexical
judge asked by `rankgate labels suggest` as docs/reviewers.md says."""

from __future__ import annotations

import pytest

import shutil

from rankgate.cli import main
from rankgate.store.suggestions import SuggestionBook
from tests.conftest import SAMPLES
from tests.tui.conftest import SIZE, make_app, ready


def suggested_ops(tmp_path, capsys):
    """A copy of ops-handbook whose review queue's first 30 documents and first 60 judged pairs the lexical
    judge graded."""
    folder = tmp_path / "ops"
    shutil.copytree(SAMPLES / "ops-handbook", folder)
    assert main(["labels", "suggest", str(folder), "--queue", "30", "--trust-judge"]) == 0
    assert main(["labels", "suggest", str(folder), "--judged", "--limit", "60"]) == 0
    capsys.readouterr()
    return folder


def highlighted(screen) -> tuple[str, str]:
    return screen.qid, screen.doc


@pytest.mark.slow
async def test_u_walks_the_order_u_chose(tmp_path, capsys):
    app = make_app(suggested_ops(tmp_path, capsys))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = app.screen
        m = screen.model
        book = SuggestionBook.beside(m.labels.backend.ws.path)
        latest = book.latest()
        level = m.policy.checks.rel_level
        grades = lambda q: m.labels.grades(q)  # noqa: E731
        relevant_unjudged = {k for k, s in latest.items() if s.grade >= level and k[1] not in grades(k[0])}
        assert len(relevant_unjudged) >= 2  # the sample's judge finds some in the queue's first 30

        await pilot.press("u")  # decisive: the queue's first item, whatever the judge said
        await pilot.pause()
        first_decisive = highlighted(screen)
        assert first_decisive == (m.review_queue().items[0].query, m.review_queue().items[0].doc)

        await pilot.press("U")  # suggested relevant (unjudged) first
        await pilot.pause()
        assert screen.queue_order.order == "suggested"
        assert any("suggested relevant" in str(n.message) for n in app._notifications)
        seen = []
        for _ in range(len(relevant_unjudged)):
            await pilot.press("u")
            await pilot.pause()
            seen.append(highlighted(screen))
        assert set(seen) == relevant_unjudged  # every one of them, before any other document
        q, d = seen[-1]
        assert any(f"{q} · {d}: suggested {latest[(q, d)].grade} by lexical; " in str(n.message) for n in app._notifications)
        shown = [latest[k].grade for k in seen]
        assert shown == sorted(shown, reverse=True)  # the highest suggested grade first
        await pilot.press("u")  # then the rest of the queue, in its order
        await pilot.pause()
        assert highlighted(screen) not in relevant_unjudged and highlighted(screen)[1] not in grades(screen.qid)

        await pilot.press("U")  # judged pairs where the judge and the label disagree
        await pilot.pause()
        assert screen.queue_order.order == "disagreement"
        disagree = {k for k, s in latest.items() if k[1] in grades(k[0]) and grades(k[0])[k[1]] != s.grade}
        assert disagree
        await pilot.press("u")
        await pilot.pause()
        first = highlighted(screen)
        assert first in disagree
        q, d = first
        assert (latest[first].grade >= level) != (grades(q)[d] >= level)  # relevant or not disagree first
        await pilot.press("u")
        await pilot.pause()
        assert highlighted(screen) != first and highlighted(screen) in disagree  # u goes on
        await pilot.press("u")
        await pilot.pause()
        now = highlighted(screen)
        await pilot.press("A")  # the expert takes the judge's grade: no disagreement left there
        await pilot.pause()
        assert grades(now[0])[now[1]] == latest[now].grade
        assert screen.queue_order.next_item(m, book, None) is not None
        left = {(it.query, it.doc) for it in _walk(screen, m, book)}
        assert now not in left and left == disagree - {now}
        assert "judge and label disagree" in str(screen.query_one("#status-bar").render())

        await pilot.press("U")  # back to the most decisive first
        await pilot.pause()
        assert screen.queue_order.order == "decisive"


def _walk(screen, m, book):
    """Every item of the current order, following it from the top until it wraps round."""
    out, after = [], None
    while True:
        it = screen.queue_order.next_item(m, book, after)
        if it is None or (out and (it.query, it.doc) == (out[0].query, out[0].doc)):
            return out
        out.append(it)
        after = (it.query, it.doc)


@pytest.mark.slow
async def test_the_orders_are_in_the_palette_and_the_help(tmp_path, capsys):
    from rankgate.tui import commands

    key = {c.title: c.key for c in commands.COMMANDS}
    assert key["Review queue order: decisive, suggested, disagreement"] == "U"
    app = make_app(suggested_ops(tmp_path, capsys))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = app.screen
        entries = commands.ReviewCommands(screen)._entries()
        actions = {a for _, a, _ in entries}
        assert {"set_queue_order('suggested')", "set_queue_order('disagreement')"} <= actions
        await pilot.press("question_mark")  # the help lists it beside its key
        await pilot.pause()
        from rich.console import Console

        console = Console(width=150, record=True, color_system=None)
        console.print(app.screen.query_one("#help-keys").content)  # the rich Table given to the Static
        assert any(line.split() == ["U", "Review", "queue", "order:", "decisive,", "suggested,", "disagreement"]
                   for line in console.export_text().splitlines())
        await pilot.press("escape")
        await pilot.pause()
        await screen.run_action("set_queue_order('disagreement')")
        await pilot.pause()
        assert screen.queue_order.order == "disagreement"


@pytest.mark.slow
async def test_the_app_and_the_gate_say_what_their_review_queues_count(tmp_path, capsys):
    """The app's queue (`u`) covers every loaded run's top k, the gate's report only the baseline's and the
    candidate's on the queries it evaluates (123 against 82 on ops-handbook): each says which, so the numbers
    do not look contradictory."""
    import json
    import re

    from tests.tui.test_sync import plain

    folder = tmp_path / "ops"
    shutil.copytree(SAMPLES / "ops-handbook", folder)
    md = tmp_path / "gate.md"
    assert main(["gate", str(folder), "--markdown", str(md)]) == 3
    report = json.loads(capsys.readouterr().out)
    total = report["coverage"]["review_queue_total"]
    text = md.read_text(encoding="utf-8")
    line = next(x for x in text.splitlines() if x.startswith("Unjudged documents to review first"))
    assert f"of {total} in the baseline's and the candidate's top {report['k']}, on the queries the gate " \
           "evaluates" in line, line
    app = make_app(folder)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        m = app.screen.model
        assert len(m.runs) == 3 > 2
        queue = m.review_queue()
        assert {r for it in queue.items for r in it.ranks} == set(m.runs)  # every loaded run's top k
        status = plain(app.screen.query_one("#status-bar"))
        assert re.search(rf"queue {m.queue_left()} left in 3 runs\b", status), status
        assert m.queue_left() > total
        await pilot.resize_terminal(80, 24)  # shorter words, and the queue's runs still in view
        await pilot.pause()
        await pilot.pause()
        bar = app.screen.query_one("#status-bar")
        status = plain(bar)
        assert re.search(rf"queue {m.queue_left()}, 3 runs$", status) and len(status) <= bar.size.width, status
