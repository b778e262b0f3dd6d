"""Importing: all or nothing, conflicts, query files, benchmark folders."""

from __future__ import annotations

import json
import shutil

import pytest

from rankgate.core.errors import InputError
from rankgate.core.formats import detect_kind
from rankgate.core.model import Query
from rankgate.store import ImportConflicts, Workspace, paths

from .conftest import LABELS, labels_of, qrels_files, write


@pytest.fixture
def files(tmp_path):
    return qrels_files(tmp_path / "in")


def _journal_bytes(ws):
    return (ws.path.parent / (ws.path.name + ".journal")).read_bytes()


def test_import_records_one_event_per_label_and_query(ws, files):
    report = ws.import_files([files["jsonl"]])
    assert (report.added, report.queries_added, report.changed) == (6, 3, 0)
    assert labels_of(ws) == LABELS
    events = ws.history()
    assert [e.kind for e in events].count("import") == 6 and [e.kind for e in events].count("query") == 3
    assert {e.why for e in events} == {f"import {files['jsonl']}"}
    j = ws.judgment("q-dns", "doc-spam")
    assert (j.reason, j.collection_version, j.reviewer) == ("why doc-spam", "lab-2", "priya")


def test_reimporting_the_same_file_changes_nothing(ws, files):
    ws.import_files([files["trec"]])
    n = len(ws.history())
    report = ws.import_files([files["trec"], files["beir"]])
    assert (report.added, report.unchanged, report.changed) == (0, 6, 0)
    assert len(ws.history()) == n


def test_a_bad_file_imports_nothing(ws, files, tmp_path):
    ws.import_files([files["trec"]])
    before = (labels_of(ws), len(ws.history()), _journal_bytes(ws))
    bad = write(tmp_path / "bad.trec", "q9 0 d1 1\nq9 0 d2 1.5\n")
    with pytest.raises(InputError, match=r"bad.trec:2: grade '1.5' is not an integer"):
        ws.import_files([files["jsonl"], bad])
    assert (labels_of(ws), len(ws.history()), _journal_bytes(ws)) == before
    with pytest.raises(InputError, match="no such file"):
        ws.import_files([files["jsonl"], tmp_path / "missing.trec"])
    assert labels_of(ws) == before[0]


def test_conflicts_stop_by_default_and_are_listed(ws, files, tmp_path):
    ws.import_files([files["trec"]])
    ws.set_judgment("q-gpu", "doc-gpu-memory", 1, reason="mentions memory")
    ws.remove_judgment("q-backup", "doc-billing", of_reviewer="file:qrels.trec")  # the file's own judgment
    changed = write(tmp_path / "changed.trec", "q-backup 0 doc-backup-policy 1\nq-backup 0 doc-billing 0\n"
                    "q-backup 0 doc-new 2\nq-dns 0 doc-spam -1\n")
    before = (labels_of(ws), _journal_bytes(ws))
    with pytest.raises(ImportConflicts) as e:
        ws.import_files([changed])
    assert (labels_of(ws), _journal_bytes(ws)) == before
    conflicts = {(c.query, c.doc): c for c in e.value.conflicts}
    assert set(conflicts) == {("q-backup", "doc-backup-policy"), ("q-backup", "doc-billing")}
    assert "the store has grade 2" in str(conflicts[("q-backup", "doc-backup-policy")])
    assert "removed on" in str(conflicts[("q-backup", "doc-billing")])
    assert "nothing was imported" in str(e.value)


def test_conflicts_keep_or_overwrite(db, files, tmp_path):
    changed = write(tmp_path / "changed.trec", "q-backup 0 doc-backup-policy 1\nq-backup 0 doc-new 2\n")
    with Workspace.open(db) as ws:
        ws.import_files([files["trec"]])
        ws.remove_judgment("q-dns", "doc-spam", of_reviewer="file:qrels.trec")
        report = ws.import_files([changed], on_conflict="keep")
        assert (report.added, report.kept, report.changed, len(report.conflicts)) == (1, 1, 0, 1)
        assert ws.grades("q-backup")["doc-backup-policy"] == 2
        report = ws.import_files([files["trec"]], on_conflict="keep")
        assert (report.kept, report.unchanged) == (1, 5) and ws.judgment("q-dns", "doc-spam") is None
    with Workspace.open(db) as ws:
        with pytest.raises(InputError, match="judged grade 2 here but grade 1 in .*changed.trec"):
            ws.import_files([changed, files["trec"]], on_conflict="overwrite")  # two files disagree
        report = ws.import_files([changed], on_conflict="overwrite")
        assert report.changed == 1 and ws.grades("q-backup")["doc-backup-policy"] == 1
        ev = ws.history("q-backup", "doc-backup-policy")[-1]
        assert (ev.kind, ev.before["grade"], ev.after["grade"]) == ("import", 2, 1)
        report = ws.import_files([files["trec"]], on_conflict="overwrite")
        assert ws.judgment("q-dns", "doc-spam").grade == -1  # brought back, as asked


def test_a_different_reason_is_a_conflict_but_an_empty_one_is_not(ws, files):
    ws.import_files([files["jsonl"]])
    report = ws.import_files([files["trec"]])  # grades equal, no reasons in TREC: nothing to say
    assert report.unchanged == 6 and not report.conflicts
    edited = files["jsonl"].read_text().replace("why doc-spam", "spam page")
    with pytest.raises(ImportConflicts):
        ws.import_files([write(files["jsonl"].parent / "edited.jsonl", edited)])


def test_dry_run_reports_and_changes_nothing(ws, files):
    report = ws.import_files([files["trec"]], dry_run=True)
    assert report.added == 6 and report.dry_run
    assert len(ws) == 0 and ws.history() == []


def test_query_files_jsonl_and_tsv(ws, tmp_path, files):
    ws.import_files([files["trec"]])  # declares q-backup, q-dns, q-gpu with no text
    qjsonl = write(tmp_path / "queries.jsonl", "".join(json.dumps(o) + "\n" for o in [
        {"id": "q-backup", "text": "how long are backups kept", "tags": ["backups"], "must_pass": True},
        {"id": "q-new", "text": "new one", "held_out": True, "weight": 2.0, "no_answer": True},
    ]))
    qtsv = write(tmp_path / "topics.tsv", "q-dns\twhy does dns fail\n")
    assert detect_kind(qjsonl) == detect_kind(qtsv) == "queries"
    assert all(detect_kind(f) == "qrels" for f in files.values())
    report = ws.import_files([qjsonl, qtsv])
    assert (report.queries_added, report.queries_updated) == (1, 2)
    assert ws.query("q-backup") == Query("q-backup", "how long are backups kept", "", ("backups",), True)
    assert ws.query("q-new").held_out and ws.query("q-new").no_answer and ws.query("q-new").weight == 2.0
    other = write(tmp_path / "other.jsonl", json.dumps({"id": "q-backup", "text": "something else"}) + "\n")
    with pytest.raises(ImportConflicts, match="1 conflict"):
        ws.import_files([other])
    ws.import_files([], queries=[other], on_conflict="overwrite")
    assert ws.query("q-backup").text == "something else"


def test_a_content_hash_that_does_not_match_is_noted(ws, tmp_path):
    ws.set_judgment("q1", "d1", 1, create_query=True)
    text = ws.export("trec", header=True).text.replace("d1 1", "d1 2")
    with Workspace.open(tmp_path / "other.json") as other:
        report = other.import_files([write(tmp_path / "edited.trec", text)])
        assert any("do not match the content_hash" in n for n in report.notes)


def _bench(tmp_path, samples, name="seed-lab"):
    folder = tmp_path / name
    shutil.copytree(samples / name, folder)
    return folder


def test_a_benchmark_opens_its_workspace_by_name_and_folder(tmp_path, samples, private_home):
    folder = _bench(tmp_path, samples)
    with Workspace.open_benchmark(folder) as ws:
        assert ws.path == paths.benchmark_workspace_path("seed-lab", folder)
        assert ws.path.name == f"seed-lab-{paths.folder_key(folder)}.json"
        assert ws.collection_version == "lab-1"
        assert ws.to_qrels().as_dict() == {q: dict.fromkeys(docs, 1) for q, docs in
                                           json.loads((folder / "qrels.json").read_text()).items()}
        assert {j.collection_version for j in ws.judgments()} == {"lab-1"}
        ws.set_judgment("q-dns", "doc-dns-negative-cache", 2, reason="explains the negative TTL")
        ws.set_judgment("q-dns", "doc-new", 0, reason="unrelated")
        assert ws.judgment("q-dns", "doc-new").collection_version == "lab-1"
    (folder / "qrels.json").write_text(json.dumps({"q-other": ["x"]}))  # later opens use the store
    with Workspace.open_benchmark(folder, readonly=True) as ws:
        assert ws.grades("q-dns") == {"doc-dns-negative-cache": 2, "doc-new": 0}
        assert "q-other" not in {q.id for q in ws.queries()}
        assert ws.stats()["benchmark"]["name"] == "seed-lab"


def test_a_benchmark_with_queries_and_graded_jsonl(tmp_path, samples):
    folder = samples / "ops-handbook"
    with Workspace.open_benchmark(folder) as ws:
        queries = {q.id: q for q in ws.queries()}
        assert len(queries) == 40 and queries["q-pitr-dropped-table"].must_pass
        assert queries["q-pitr-dropped-table"].weight == 3.0
        first = ws.judgments("q-pitr-dropped-table")[0]
        assert (first.grade, first.reviewer) == (3, "priya") and first.reason.startswith("Gives the complete")
    with pytest.raises(InputError, match="no workspace yet"):
        Workspace.open_benchmark(samples / "three-questions", readonly=True)


@pytest.mark.parametrize("text", [
    "q1\t0 d1 1\nq1 0 d2 0\nq2\t0 d3 2\n",  # a tab after the query ID, spaces after
    "q1 0 d1\t1\nq1 0 d2 0\nq2 0 d3 2\n",  # a tab before the grade
    "q1\tQ0 d1 1\nq1\tQ0 d2 0\nq2\tQ0 d3 2\n",  # one tab a line, but an iteration column on every line
])
def test_qrels_mixing_tabs_and_spaces_import_as_qrels_as_trec_eval_reads_them(cli, tmp_path, text):
    """A qrels file whose first line has one tab was taken for `qid<TAB>text` queries: `labels import` failed
    with `expected 'query-id<TAB>text'`, or imported the judgment lines as query texts."""
    path = write(tmp_path / "mixed.txt", text)
    assert detect_kind(path) == "qrels"
    db = tmp_path / "work.json"
    code, out, err = cli("labels", "import", "--db", db, path)
    assert code == 0, err
    assert "3 new judgments" in out
    with Workspace.open(db, readonly=True) as ws:
        assert labels_of(ws) == {("q1", "d1"): 1, ("q1", "d2"): 0, ("q2", "d3"): 2}


def test_a_queries_file_whose_texts_end_in_a_number_is_still_queries(tmp_path):
    path = write(tmp_path / "topics.tsv", "q1\twhat is 42\nq2\tbest of 2020\n")
    assert detect_kind(path) == "queries"
    bad = write(tmp_path / "bad.tsv", "q1\twhat is 42\nq2 no tab here\n")  # neither: the reader names the line
    assert detect_kind(bad) == "queries"
