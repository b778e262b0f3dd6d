"""Raw files round-trip (issue 33, item 7): the labels of a qrels file opened on its own go out in the
file's own format, columns and line order (`Q0` stays `Q0`), to `<stem>.reviewed<ext>` beside it, never
over it; query notes go to a sidecar; the commands the app suggests work on its workspace; read-only
commands make nothing; one qrels file has one workspace however it is opened."""

from __future__ import annotations

import difflib
import json
import os

import pytest

from rankgate.store import paths, sync
from rankgate.store.workspace import Workspace
from rankgate.tui.loader import Inputs
from rankgate.tui.store_backend import StoreBackend
from tests.conftest import CONFORMANCE, write

QRELS = "q1 Q0 d3 1\nq1 Q0 d1 0\nq2 Q0 d9 2\nq2 Q0 d4 0\nq1 Q0 d7 1\n"  # not sorted: q1 comes back


def app_open(qrels, reviewer="ana") -> StoreBackend:
    """What `rankgate review QRELS --runs ...` opens for the labels (tui/store_backend.py)."""
    return StoreBackend.open(Inputs(str(qrels)), None, str(qrels), reviewer)


def changed_lines(a, b) -> list[str]:
    old = open(a, encoding="utf-8").read().splitlines()
    new = open(b, encoding="utf-8").read().splitlines()
    return [d for d in difflib.unified_diff(old, new, lineterm="", n=0) if d[:1] in "+-" and d[:3] not in "+++---"]


def test_the_default_export_name_is_stem_reviewed_ext_beside_the_input(tmp_path):
    assert sync.reviewed_path(tmp_path / "qrels.dl19-passage.txt") == tmp_path / "qrels.dl19-passage.reviewed.txt"
    assert sync.reviewed_path(tmp_path / "labels.jsonl") == tmp_path / "labels.reviewed.jsonl"
    assert sync.reviewed_path(tmp_path / "qrels.txt.gz") == tmp_path / "qrels.reviewed.txt"
    assert sync.reviewed_path(tmp_path / "qrels") == tmp_path / "qrels.reviewed"


def test_an_export_keeps_q0_and_the_line_order_and_a_diff_shows_the_changed_lines_only(tmp_path):
    qrels = write(tmp_path / "qrels.txt", QRELS)
    b = app_open(qrels)
    try:
        b.set("q2", "d4", 1, "partly answers")  # a grade changed
        b.set("q1", "dNEW", 2, "a new one")  # a new label: written with its query
        out, target, notes = sync.export_reviewed(b.ws, qrels)
    finally:
        b.close()
    assert target == tmp_path / "qrels.reviewed.txt" and notes is None
    assert qrels.read_text() == QRELS  # the input as it was
    text = target.read_text()
    # the file's line order (q1 comes back after q2), the new label after its query's last line
    assert text.splitlines() == ["q1 Q0 d3 1", "q1 Q0 d1 0", "q2 Q0 d9 2", "q2 Q0 d4 1", "q1 Q0 d7 1",
                                 "q1 Q0 dNEW 2"]
    assert changed_lines(qrels, target) == ["-q2 Q0 d4 0", "+q2 Q0 d4 1", "+q1 Q0 dNEW 2"]


def test_an_export_in_the_files_order_when_its_queries_are_grouped(tmp_path):
    qrels = write(tmp_path / "qrels.txt", "q1 Q0 d3 1\nq1 Q0 d1 0\nq2 Q0 d9 2\nq2 Q0 d4 0\n")
    b = app_open(qrels)
    try:
        b.set("q1", "d1", 3, "the answer")
        b.set("q1", "dNEW", 1, "new")
        sync.export_reviewed(b.ws, qrels)
    finally:
        b.close()
    assert changed_lines(qrels, tmp_path / "qrels.reviewed.txt") == ["-q1 Q0 d1 0", "+q1 Q0 d1 3", "+q1 Q0 dNEW 1"]


def test_the_input_is_never_replaced(tmp_path):
    qrels = write(tmp_path / "qrels.txt", QRELS)
    b = app_open(qrels)
    try:
        b.set("q2", "d4", 1, "partly")
        with pytest.raises(Exception, match="never replaces"):
            sync.export_reviewed(b.ws, qrels, qrels)
        with pytest.raises(Exception, match="never replaces"):  # through a link to it too
            os.symlink(qrels, tmp_path / "link.txt")
            sync.export_reviewed(b.ws, qrels, tmp_path / "link.txt")
    finally:
        b.close()
    assert qrels.read_text() == QRELS


def test_query_notes_go_out_in_a_queries_sidecar_that_reads_back(tmp_path):
    from rankgate.core.formats.corpus import read_queries
    from rankgate.core.model import Query

    qrels = write(tmp_path / "qrels.txt", QRELS)
    b = app_open(qrels)
    try:
        b.set_notes(Query("q2"), "ask the author: is d9 current?")
        out, target, notes = sync.export_reviewed(b.ws, qrels)
    finally:
        b.close()
    assert notes == tmp_path / "qrels.reviewed.notes.jsonl"
    back = read_queries(str(notes))
    assert list(back) == ["q2"] and back["q2"].notes == "ask the author: is d9 current?"


def test_labels_export_qrels_writes_the_apps_labels_beside_it(cli, tmp_path):
    qrels = write(tmp_path / "qrels.txt", QRELS)
    app_open(qrels).close()
    code, out, err = cli("labels", "status", qrels)
    db = paths.qrels_workspace_path(qrels, create=False)
    assert code == 0 and f"--db {db}" in out
    assert cli("labels", "set", "--db", db, "q2", "d4", "1", "--reason", "partly", "--correct")[0] == 0
    code, out, err = cli("labels", "export", qrels)
    assert code == 0, err
    assert "qrels.reviewed.txt" in out
    assert changed_lines(qrels, tmp_path / "qrels.reviewed.txt") == ["-q2 Q0 d4 0", "+q2 Q0 d4 1"]
    code, out, err = cli("labels", "export", "--db", db, "-o", tmp_path / "again.txt")  # -o too: the file's layout
    assert code == 0 and changed_lines(qrels, tmp_path / "again.txt") == ["-q2 Q0 d4 0", "+q2 Q0 d4 1"]


def test_a_disagreement_note_names_the_db_of_a_qrels_files_workspace_not_its_folder(cli, tmp_path):
    qrels = write(tmp_path / "qrels.txt", QRELS)
    b = app_open(qrels)
    try:
        b.set("q2", "d4", 1, "partly")  # beside the file's 0: a disagreement
        out = b.ws.export("trec", tmp_path / "out.txt")
    finally:
        b.close()
    note = next(n for n in out.notes if "disagreement" in n)
    command = note.split("`")[1]
    assert command.startswith("rankgate labels disagreements --db ") and "-b " not in note
    code, listed, err = cli(*command.split()[1:])  # works as printed
    assert code == 0 and "d4" in listed, err


def test_labels_status_of_a_folder_with_no_workspace_makes_nothing(cli, samples, tmp_path):
    import shutil

    folder = tmp_path / "bench"
    shutil.copytree(samples / "three-questions", folder)
    code, out, err = cli("labels", "status", folder)
    assert code == 0 and "no workspace yet" in out and "made nothing" in out
    assert f"path: {paths.benchmark_workspace_path('three-questions', folder, create=False)}" in out
    assert cli("labels", "list", "-b", folder)[0] == 0
    home = paths.workspace_dir(create=False)
    assert not home.exists() or list(home.iterdir()) == []


def test_one_qrels_file_one_workspace_through_a_linked_folder(tmp_path):
    real = write(tmp_path / "data" / "qrels.txt", QRELS)
    os.symlink(tmp_path / "data", tmp_path / "shared")
    b = app_open(tmp_path / "shared" / "qrels.txt")
    try:
        b.set("q2", "d4", 1, "partly")
    finally:
        b.close()
    b = app_open(real)
    try:
        assert b.labels("q2")["d4"].grade == 1  # the same workspace
    finally:
        b.close()
    assert len([p for p in paths.workspace_dir().iterdir() if p.suffix == ".json"]) == 1


def test_one_qrels_file_one_workspace_as_a_file_and_through_a_folder(cli, tmp_path):
    qrels = write(tmp_path / "qrels.txt", QRELS)
    run = write(tmp_path / "a.trec", "q1 Q0 d3 1 9 a\nq2 Q0 d9 1 9 a\n")
    b = app_open(qrels)
    try:
        b.set("q2", "d4", 1, "partly")  # edited as a file ...
    finally:
        b.close()
    assert cli("init", tmp_path / "bench", "--qrels", qrels, "--runs", run)[0] == 0
    code, out, err = cli("labels", "status", tmp_path / "bench")  # ... the folder takes the workspace over
    assert code == 1 and "one qrels file, one workspace" in err
    assert "(not exported): 0 added, 1 changed, 0 removed" in out
    names = [p.name for p in paths.workspace_dir().iterdir() if p.suffix == ".json"]
    assert len(names) == 1 and names[0].startswith("bench-")
    b = app_open(qrels)  # and the file opened alone again uses the folder's
    try:
        assert str(b.ws.path).endswith(names[0]) and b.labels("q2")["d4"].grade == 1
    finally:
        b.close()
    with Workspace.open(paths.workspace_dir() / names[0], readonly=True) as ws:
        assert (ws._meta.get("benchmark") or {}).get("folder") == str((tmp_path / "bench").resolve())


@pytest.mark.slow
@pytest.mark.skipif(not (CONFORMANCE / "trec-dl-2019-passage").exists(), reason=f"no DL 2019 data in {CONFORMANCE} (RANKGATE_CONFORMANCE names another place)")
def test_dl19_as_it_is_diff_shows_exactly_the_changed_lines(cli, tmp_path):
    import shutil

    qrels = tmp_path / "qrels.dl19-passage.txt"
    shutil.copy(CONFORMANCE / "trec-dl-2019-passage" / "qrels.dl19-passage.txt", qrels)
    b = app_open(qrels)
    try:
        b.set("19335", "1017759", 2, "defines the term", corrects=True)
        b.set("47923", "1236611", 1, "partly", corrects=True)
        b.set("1133167", "NEWDOC", 3, "found by hand")
    finally:
        b.close()
    assert cli("labels", "export", qrels)[0] == 0
    assert changed_lines(qrels, tmp_path / "qrels.dl19-passage.reviewed.txt") == [
        "-19335 Q0 1017759 0", "+19335 Q0 1017759 2", "-47923 Q0 1236611 0", "+47923 Q0 1236611 1",
        "+1133167 Q0 NEWDOC 3"]
    assert json.loads(cli("labels", "status", qrels, "--json")[1])["disagreements"] == 0


def test_labels_status_of_a_qrels_file_counts_its_unexported_edits(cli, tmp_path):
    """`labels status QRELS` showed the app's workspace but not how many of its edits no export holds yet
    (the count the app's quit dialog gives)."""
    qrels = write(tmp_path / "qrels.txt", QRELS)
    b = app_open(qrels)
    try:
        b.ws.set_judgment("q2", "d4", 1, reason="partly", corrects=True)
        b.ws.set_judgment("q3", "d5", 2, reason="new", create_query=True)
    finally:
        b.close()
    code, out, err = cli("labels", "status", qrels)
    assert code == 0, err
    assert "unexported: 2 label edits that neither qrels.txt nor the last export holds" in out
    assert "rankgate labels export" in out
    db = paths.qrels_workspace_path(qrels, create=False)
    code, out, _ = cli("labels", "status", "--db", db, "--json")
    assert json.loads(out)["unexported"] == 2
    assert cli("labels", "export", qrels)[0] == 0
    assert "unexported: 0 label edits" in cli("labels", "status", qrels)[1]
    b = app_open(qrels)
    try:
        b.ws.set_judgment("q1", "d3", 3, reason="on second look", corrects=True)
    finally:
        b.close()
    assert "unexported: 1 label edit that" in cli("labels", "status", qrels)[1]


def test_the_notes_sidecar_carries_the_query_texts_of_queries(tmp_path):
    """`rankgate review QRELS --queries TOPICS`: the store knows the queries by ID only (the qrels name no text),
    and the notes sidecar was written with `"text": ""` though the app showed the texts."""
    from rankgate.core.formats.corpus import read_queries
    from rankgate.core.model import Query

    qrels = write(tmp_path / "qrels.txt", QRELS)
    topics = write(tmp_path / "topics.tsv", "q1\thow long are backups kept\nq2\twhy does dns fail\n")
    b = StoreBackend.open(Inputs(str(qrels), queries=str(topics)), None, str(qrels), "ana")
    try:
        b.set_notes(Query("q2"), "is d9 current?")
        done = b.export_reviewed(str(qrels), tmp_path / "qrels.reviewed.txt")
    finally:
        b.close()
    assert any("query notes in" in n for n in done.notes)
    back = read_queries(str(tmp_path / "qrels.reviewed.notes.jsonl"))
    assert list(back) == ["q2"] and back["q2"].text == "why does dns fail" and back["q2"].notes == "is d9 current?"


def test_the_store_writes_the_json_the_circular_check_encoder_wrote():
    """storage.dumps skips the check for circular containers (never circular here): the same text."""
    import json

    from rankgate.store.storage import dumps

    doc = {"judgments": {"1": {"query": "q\ud800", "n": 2, "doc": ["d1", "é"], "grade": {"all": 1},
                               "reason": ["a \"b\"", "\n"], "removed": {"all": None}, "x": [1.5, -0.0, 1e300, True]}},
           "meta": {"1": {"format": "rankgate-labels", "journal_seq": 3}}, "empty": [{}, []]}
    assert dumps(doc) == json.JSONEncoder(separators=(",", ":")).encode(doc)
    assert dumps(doc).isascii()
