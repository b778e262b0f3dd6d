"""`--db` given a qrels or run file by mistake (s8 newcomer F5): one line saying what the file looks like and
what --db expects, the file untouched and nothing left beside it (no .lock); a real damaged store keeps its
recovery advice."""

from __future__ import annotations

import shutil

from tests.conftest import SAMPLES


def _beside(folder):
    return sorted(p.name for p in folder.iterdir())


def test_a_qrels_file_as_db_is_named_as_one_and_nothing_is_left_beside_it(cli, tmp_path):
    qrels = tmp_path / "qcopy.json"
    shutil.copy(SAMPLES / "seed-lab" / "qrels.json", qrels)
    before = qrels.read_bytes()
    code, out, err = cli("labels", "set", "--db", qrels, "q-dns", "doc-dnssec", "1")
    assert code == 2 and err.count("\n") == 1
    assert "looks like a qrels file, not a label store" in err and "--db work.json" in err
    assert f"rankgate labels import --db work.json {qrels}" in err
    assert "damaged" not in err and ".bak" not in err
    assert qrels.read_bytes() == before and _beside(tmp_path) == ["qcopy.json"]


def test_a_trec_qrels_or_run_file_as_db(cli, tmp_path):
    trec = tmp_path / "qc.trec"
    trec.write_text("q1 0 d1 1\nq1 0 d2 0\n", encoding="utf-8")
    run = tmp_path / "run.trec"
    run.write_text("q1 Q0 d1 1 2.5 bm25\nq1 Q0 d2 2 1.5 bm25\n", encoding="utf-8")
    code, _, err = cli("labels", "import", "--db", trec, SAMPLES / "seed-lab" / "qrels.json")
    assert code == 2 and "qc.trec: looks like a qrels file, not a label store" in err
    code, _, err = cli("labels", "set", "--db", run, "q1", "d1", "1")
    assert code == 2 and "run.trec: looks like a run file, not a label store" in err
    assert _beside(tmp_path) == ["qc.trec", "run.trec"]


def test_a_damaged_store_still_gets_its_recovery_advice(cli, tmp_path):
    db = tmp_path / "work.json"
    assert cli("labels", "import", "--db", db, SAMPLES / "seed-lab" / "qrels.json")[0] == 0
    db.write_text("{\"q1\": [\"d1\"]}", encoding="utf-8")  # a store's snapshot overwritten: its other files remain
    code, _, err = cli("labels", "status", "--db", db)
    assert code == 2 and "looks like" not in err
