"""The app's gate applies the benchmark's ACL as `rankgate gate` does: a candidate that leaks a restricted
document fails `no_permission_leaks` in the gate pane."""

from __future__ import annotations

import shutil

from tests.conftest import SAMPLES
from tests.tui.conftest import SIZE, make_app, ready


async def test_a_leaking_candidate_is_rejected_in_the_app_too(tmp_path):
    bench = tmp_path / "ops-handbook"
    shutil.copytree(SAMPLES / "ops-handbook", bench)
    app = make_app(bench / "permissions")
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        assert app.error is None, app.error
        view = app.screen.model.gate()
        leak = [d for d in view.check_details if d["name"] == "no_permission_leaks"]
        assert len(leak) == 1 and not leak[0]["passed"] and not view.accepted
        assert "ir-security-incident-01" in str(leak[0])
