"""The app's side of issue 38: the gate pane's power line (core/power.py, as `rankgate gate` says it), the
progress line's judgments to certainty (core/bounds.py), and stale labels (core/staleness.py)."""

from __future__ import annotations

import pytest

from rankgate.tui.widgets.gate_panel import GatePanel
from tests.tui.conftest import SIZE, make_app, ready


@pytest.mark.slow
async def test_gate_pane_power_and_progress_to_certainty(tiny):
    app = make_app(tiny)
    async with app.run_test(size=(140, 40)) as pilot:
        await ready(pilot)
        screen = app.screen
        m = screen.model
        view = m.gate()
        assert view.power is not None and view.power["queries"] == view.evaluated
        gate = screen.query_one(GatePanel)
        gate.focus()
        await pilot.press("enter")  # the passing checks, the stability line and the power line
        await pilot.pause()
        body = str(screen.query_one("#gate-body").render())
        assert f"is {view.power['mde']:.3f}" in body
        for _ in range(50):
            await app.workers.wait_for_complete()
            await pilot.pause()
            if m.stability() is not None:
                break
        screen.refresh_status()
        status = str(screen.query_one("#status-bar").render())
        st, _ = m.stability()
        if st.stable:  # the gate pane says "labels: stable"; the progress line has nothing left to count
            assert "certain" not in status
        else:
            left = [(q, d) for q, d in st.to_judge if d not in m.labels.grades(q)]
            assert f"{len(left)} more to certain" in status


async def test_progress_line_counts_judgments_to_a_certain_decision(tiny):
    """A decision the unjudged documents could flip: the progress line says how many judgments settle it."""
    app = make_app(tiny)
    async with app.run_test(size=(160, 40)) as pilot:
        await ready(pilot)
        screen = app.screen
        m = screen.model
        m.review_queue()  # builds the queue and its stability now
        st, _ = m.stability()
        if st.stable:  # make it flip-able: the tiny lab's decision is certain; pretend two documents are left
            st.could_flip, st.to_judge = True, [("q-none", "d-a"), ("q-none", "d-b")]
        screen.refresh_status()
        status = str(screen.query_one("#status-bar").render())
        left = [(q, d) for q, d in st.to_judge if d not in m.labels.grades(q)]
        assert status.endswith(f"{len(left)} more to certain")


async def test_stale_label_marked_and_filtered(tiny):
    from rankgate.core.staleness import text_hash

    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        m = app.screen.model
        qid = next(q for q in m.qids if m.labels.labels(q))
        lab = next(iter(m.labels.labels(qid).values()))
        assert not m.is_stale(lab)
        m.labels.backend.text_hashes = {}
        # judge it on one text, then the corpus changes that text
        m.labels.backend.text_hashes = {lab.doc: text_hash("", "the old text")}
        m.labels.set(qid, lab.doc, lab.grade, "judged on the old text")
        m.text_hashes = {lab.doc: text_hash("", "a  new text")}
        now = m.labels.labels(qid)[lab.doc]
        assert m.is_stale(now)
        stale = [m.qids[i] for i in m.order("is:stale")]
        assert stale == [qid]
        m.text_hashes = {lab.doc: text_hash("", "the   old\ntext ")}  # reformatted only: not stale
        assert not m.is_stale(m.labels.labels(qid)[lab.doc]) and not len(m.order("is:stale"))
