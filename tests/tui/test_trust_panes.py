"""The app's side of issue 38: the gate pane's power line (core/power.py, as `rankgate gate` says it), the
progress line's judgments to certainty (core/bounds.py), and stale labels (core/staleness.py)."""

from __future__ import annotations

from rankgate.tui.widgets.gate_panel import GatePanel
from tests.tui.conftest import SIZE, make_app, ready


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
        assert ("decision certain" in status) if st.stable else ("to certain" in status or "make the" in status)


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
