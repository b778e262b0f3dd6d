"""The app and the benchmark folder's qrels file (tui/screens/sync.py, store/sync.py): the gate and the app
agree; a changed file is said first and can be brought in or not; unexported edits are counted and offered
for export on the way out."""

from __future__ import annotations

import pytest

import json
import os
import shutil
import subprocess
import sys

from rankgate.cli import main
from rankgate.tui.screens.review import ReviewScreen
from rankgate.tui.screens.sync import QuitScreen, SyncScreen
from rankgate.tui.widgets.gate_panel import GatePanel
from tests.conftest import SAMPLES
from tests.tui.conftest import SIZE, make_app


def plain(widget) -> str:
    content = widget.content
    return content.plain if hasattr(content, "plain") else str(content)


async def loaded(pilot) -> None:
    """Until the benchmark is loaded (a dialog may be on top of the review screen)."""
    app = pilot.app
    for _ in range(200):
        await app.workers.wait_for_complete()
        await pilot.pause()
        if (app.review is not None and app.review.model is not None) or app.error is not None:
            break
    await app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.pause()


def cli(capsys, *argv):
    code = main([str(a) for a in argv])
    cap = capsys.readouterr()
    return code, cap.out, cap.err


def gate(*argv):
    """`rankgate ...` as CI runs it: another process (while the app holds the workspace)."""
    return subprocess.run([sys.executable, "-m", "rankgate", *map(str, argv)], capture_output=True, text=True,
                          env=dict(os.environ))


def gate_decision(capsys, folder) -> str:
    out = gate("gate", folder)
    assert out.returncode in (0, 3), out.stderr
    return json.loads(out.stdout)["decision"]


def edit_qrels(folder, change) -> None:
    path = folder / "qrels.json"
    qrels = json.loads(path.read_text())
    change(qrels.get("qrels", qrels))
    path.write_text(json.dumps(qrels, indent=2))


def app_decision(app) -> str:
    return app.review.query_one(GatePanel).view.decision


@pytest.mark.slow
async def test_copy_edit_open_the_gate_and_the_app_agree(tmp_path, capsys):
    """The issue's scenario: a copy of a benchmark with an edited qrels file, opened in the app, then the
    file restored: the gate and the app agree each time, and both say when the file and the workspace differ."""
    original = tmp_path / "seed-lab"
    shutil.copytree(SAMPLES / "seed-lab", original)
    app = make_app(original)  # the original has been reviewed on this machine: it has a workspace
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        assert app_decision(app) == "reject"
    mybench = tmp_path / "mybench"
    shutil.copytree(original, mybench)
    edit_qrels(mybench, lambda q: q.update({"q-recovery": ["doc-rpo"]}))  # candidate_bad is accepted now
    assert gate_decision(capsys, mybench) == "accept"
    app = make_app(mybench)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        assert isinstance(app.screen, ReviewScreen)  # its own workspace, from its own file: nothing to ask
        assert app_decision(app) == "accept" and app.unexported == 0
    # ... then the file is restored: the gate rejects, and the app says the file changed before anything else
    shutil.copy(original / "qrels.json", mybench / "qrels.json")
    assert gate_decision(capsys, mybench) == "reject"
    code, out, _ = cli(capsys, "labels", "status", mybench)
    assert code == 1 and "in the qrels file since then: 1 added, 0 changed, 1 removed" in out
    assert "(not exported): 0 added, 0 changed, 0 removed" in out
    app = make_app(mybench)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        assert isinstance(app.screen, SyncScreen)
        summary = plain(app.screen.query_one("#sync-summary"))
        assert "in the qrels file since then: 1 added, 0 changed, 1 removed" in summary
        await pilot.press("d")  # the differences
        await pilot.pause()
        lines = plain(app.screen.query_one("#sync-lines"))
        assert app.screen.query_one("#sync-differences").display and "doc-rpo" in lines and "file changed" in lines
        await pilot.press("b")  # bring the file's changes in
        await loaded(pilot)
        assert isinstance(app.screen, ReviewScreen)
        assert app_decision(app) == "reject" == gate_decision(capsys, mybench)
        assert app.unexported == 0
    assert cli(capsys, "labels", "status", mybench)[0] == 0
    assert cli(capsys, "labels", "status", original)[0] == 0  # the original's workspace was never touched


@pytest.mark.slow
async def test_keep_the_workspace_then_export_on_the_way_out(tmp_path, capsys):
    folder = tmp_path / "mybench"
    shutil.copytree(SAMPLES / "seed-lab", folder)
    edit_qrels(folder, lambda q: q.update({"q-recovery": ["doc-rpo"]}))
    app = make_app(folder)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
    shutil.copy(SAMPLES / "seed-lab" / "qrels.json", folder / "qrels.json")  # the file is as it was
    app = make_app(folder)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        assert isinstance(app.screen, SyncScreen)
        await pilot.press("k")  # keep the workspace: its two differences are now unexported edits
        await pilot.pause()
        assert isinstance(app.screen, ReviewScreen) and app_decision(app) == "accept"
        assert app.unexported == 2 and "2 unexported" in plain(app.review.query_one("#status-bar"))
        assert gate_decision(capsys, folder) == "reject"  # CI does not have them yet ...
        assert "2 unexported label edits" in gate("gate", folder).stderr  # ... and says so
        await pilot.press("q")
        await pilot.pause()
        assert isinstance(app.screen, QuitScreen) and app.is_running
        await pilot.press("e")  # export to the folder's qrels file, and quit
        await pilot.pause()
    assert app.return_code == 0
    assert gate_decision(capsys, folder) == "accept"  # CI now reads exactly what was reviewed
    code, out, err = cli(capsys, "labels", "status", folder)
    assert code == 0 and "in sync" in out
    assert "unexported" not in gate("gate", folder).stderr


@pytest.mark.slow
async def test_header_counts_edits_and_quitting_can_leave_them_unexported(tmp_path, capsys):
    folder = tmp_path / "mybench"
    shutil.copytree(SAMPLES / "seed-lab", folder)
    before = (folder / "qrels.json").read_bytes()
    app = make_app(folder)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        screen = app.review
        assert "unexported" not in plain(screen.query_one("#status-bar"))
        assert screen.edit("q-recovery", "doc-rpo", 2, "states the RPO")
        assert screen.edit("q-dns", "doc-dnssec", 0, "unrelated")
        await pilot.pause()
        assert app.unexported == 2 and "2 unexported" in plain(screen.query_one("#status-bar"))
        assert screen.edit("q-dns", "doc-dnssec", None)  # removed again: back as the file has it
        await pilot.pause()
        assert app.unexported == 1 and "1 unexported" in plain(screen.query_one("#status-bar"))
        await pilot.press("q")
        await pilot.pause()
        assert isinstance(app.screen, QuitScreen)
        await pilot.press("escape")  # stay
        await pilot.pause()
        assert isinstance(app.screen, ReviewScreen) and app.is_running
        await pilot.press("q", "q")  # quit without exporting
        await pilot.pause()
    assert app.return_code == 0 and (folder / "qrels.json").read_bytes() == before
    code, out, _ = cli(capsys, "labels", "status", folder)
    assert code == 1 and "(not exported): 1 added, 0 changed, 0 removed" in out


@pytest.mark.slow
async def test_a_qrels_file_that_no_longer_parses_is_named_and_the_workspace_kept(tmp_path, capsys):
    folder = tmp_path / "three"
    shutil.copytree(SAMPLES / "three-questions", folder)
    app = make_app(folder)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
    with open(folder / "qrels.trec", "a") as f:
        f.write("q9 0 d1 lots\n")
    app = make_app(folder)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        notes = [n.message for n in app._notifications]  # what the user is told
        assert isinstance(app.screen, ReviewScreen) and app.review.model is not None  # the workspace opens
        assert any("no longer reads" in n and "qrels.trec:6" in n for n in notes), notes
        assert app.review.model.labels.grades("q1") == {"d1": 1}


@pytest.mark.slow
async def test_the_export_key_writes_back_to_the_folder_by_default(tmp_path, capsys):
    folder = tmp_path / "three"
    shutil.copytree(SAMPLES / "three-questions", folder)
    app = make_app(folder)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        assert app.review.edit("q1", "d2", 1, "also answers it")
        assert app.unexported == 1
        await pilot.press("e")
        await pilot.pause()
        assert app.screen.query_one("#export-path").value == str(folder / "qrels.trec")
        await pilot.press("enter")
        await pilot.pause()
        assert app.unexported == 0 and "unexported" not in plain(app.review.query_one("#status-bar"))
        text = (folder / "qrels.trec").read_text()
        assert text.startswith("# The golden-set example") and "\n# version: unfrozen\n" in text  # its own line first
        assert "q1 0 d2 1\n" in text  # TREC stays TREC
        await pilot.press("q")  # nothing unexported: quits at once
        await pilot.pause()
    assert app.return_code == 0
    assert cli(capsys, "labels", "status", folder)[0] == 0


@pytest.mark.slow
async def test_ids_from_the_file_are_shown_escaped(tmp_path):
    folder = tmp_path / "three"
    shutil.copytree(SAMPLES / "three-questions", folder)
    app = make_app(folder)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
    with open(folder / "qrels.trec", "a") as f:
        f.write("q2 0 d\x1b[2J[b]x[/b] 1\n")
    app = make_app(folder)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        assert isinstance(app.screen, SyncScreen)
        await pilot.press("d")
        await pilot.pause()
        lines = plain(app.screen.query_one("#sync-lines"))
        assert "[b]x[/b]" in lines and "\x1b" not in lines


@pytest.mark.slow
async def test_export_on_quit_works_on_a_workspace_named_with_db(tmp_path, capsys):
    """`rankgate review FOLDER --db FILE`: the first open's import is the last sync (recorded beside FILE),
    so quitting with an edit can export it to the folder's qrels file, as with the default workspace. A
    --db workspace made before it had a sync record gets one from its history on the next open."""
    folder = tmp_path / "mybench"
    shutil.copytree(SAMPLES / "seed-lab", folder)
    db = tmp_path / "x.json"
    for round, doc in enumerate(("doc-rpo", "doc-storage-price")):
        if round:  # as a workspace made before --db sessions recorded their sync: no record beside it
            os.remove(f"{db}.sync")
        app = make_app(folder, db=str(db))
        async with app.run_test(size=SIZE) as pilot:
            await loaded(pilot)
            assert isinstance(app.screen, ReviewScreen)  # no "the file changed" question on the way in
            assert app.review.edit("q-recovery", doc, 2, "states the RPO")
            await pilot.pause()
            assert app.unexported == 1 and "1 unexported" in plain(app.review.query_one("#status-bar"))
            await pilot.press("q")
            await pilot.pause()
            assert isinstance(app.screen, QuitScreen)
            await pilot.press("e")  # export to the folder's qrels file, and quit
            await pilot.pause()
        assert app.return_code == 0 and not app.is_running
        qrels = json.loads((folder / "qrels.json").read_text())
        assert doc in qrels.get("qrels", qrels)["q-recovery"], qrels


@pytest.mark.slow
async def test_a_refused_export_on_quit_says_what_to_do_in_the_app(tmp_path, capsys):
    """The folder's file changed while the app was open: `e` on the way out is refused, and the notice names
    the app's key (ctrl+r, which offers to bring the change in), not `rankgate review`, the app one is in."""
    folder = tmp_path / "mybench"
    shutil.copytree(SAMPLES / "seed-lab", folder)
    app = make_app(folder)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        assert app.review.edit("q-dns", "doc-dnssec", 0, "unrelated")
        await pilot.pause()
        edit_qrels(folder, lambda q: q.update({"q-recovery": ["doc-rpo"]}))  # someone changes the file
        changed = (folder / "qrels.json").read_bytes()
        await pilot.press("q")
        await pilot.pause()
        await pilot.press("e")
        await pilot.pause()
        said = [n.message for n in app._notifications if "export failed" in n.message]
        assert len(said) == 1 and "rankgate review" not in said[0] and "--overwrite" not in said[0], said
        assert "changed since the last import or export" in said[0] and "press ctrl+r" in said[0]
        assert app.is_running and (folder / "qrels.json").read_bytes() == changed
        await pilot.press("ctrl+r")  # as it says: read again, and the app offers to bring the change in
        await loaded(pilot)
        assert isinstance(app.screen, SyncScreen)
        await pilot.press("b")
        await loaded(pilot)  # the merged labels opened again (under load, one pause was not enough)
        for _ in range(100):  # and the unexported count read again (a worker after the first frame)
            if app.loaded is not None and app.unexported:
                break
            await pilot.pause(0.05)
        await pilot.press("q")
        await pilot.pause()
        assert isinstance(app.screen, QuitScreen)
        await pilot.press("e")  # then the export goes through
        await pilot.pause()
    assert app.return_code == 0
    code, out, _ = cli(capsys, "labels", "status", folder)
    assert code == 0 and "in sync" in out


@pytest.mark.slow
async def test_a_first_import_the_disk_refuses_is_said_at_once(tmp_path, monkeypatch):
    """The first open's import is written after the first frame; when that write fails (a full disk), the app
    says so then, not first at the next edit ("label not saved"), and keeps showing the labels."""
    from rankgate.store import storage

    folder = tmp_path / "ops"
    shutil.copytree(SAMPLES / "ops-handbook", folder)
    real = storage._write_all

    def full(fd, data):
        if len(data) > 10_000:  # the import's record, not the store's small files
            raise OSError(28, "No space left on device")
        real(fd, data)

    monkeypatch.setattr(storage, "_write_all", full)
    app = make_app(folder)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        said = [str(n.message) for n in app._notifications]
        assert any("could not be written to the workspace" in s and "disk is full" in s for s in said), said
        assert app.review.model is not None and app.error is None
