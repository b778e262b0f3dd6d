"""The gate pane says whether the unjudged documents could flip the decision, and which to judge."""

from __future__ import annotations

import pytest

from rankgate.tui.widgets.gate_panel import GatePanel
from tests.tui.conftest import SIZE, make_app, ready


@pytest.mark.slow
async def test_the_gate_pane_says_stable_or_which_documents_could_flip_it(tiny):
    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = app.screen
        m = screen.model
        for _ in range(50):
            await app.workers.wait_for_complete()
            await pilot.pause()
            if m.stability() is not None:
                break
        st, edits = m.stability()
        assert edits == 0
        gate = screen.query_one(GatePanel)
        gate.focus()
        await pilot.press("enter")  # the passing checks, and the stability line even when stable
        await pilot.pause()
        body = str(screen.query_one("#gate-body").render())
        if st.stable:
            assert "labels: stable" in body
        else:
            n = len(st.to_judge)
            assert f"could flip: judge {'this document' if n == 1 else f'these {n} documents'}" in body
            q, d = st.to_judge[0]
            assert f"{q} {d}" in body
        # the core's answer on the same labels and runs
        from rankgate.core.gate import run_gate

        runs = {name: ri.run for name, ri in m.runs.items()}
        import dataclasses

        policy = dataclasses.replace(m.policy, baseline=m.baseline, candidate=m.candidate)
        res = run_gate(m.labels.to_qrels(), runs[m.baseline], runs[m.candidate], policy, set(m.no_answer),
                       queries=dict(m.queries))
        assert res.data["stability"]["stable"] == st.stable
        assert [(x["query"], x["doc"]) for x in res.data["stability"]["to_judge"]] == st.to_judge
