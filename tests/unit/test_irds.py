"""`irds:ID` wherever qrels, queries or a corpus are taken: a small dataset registered from local files
(no network), its relevance level from its documentation, and the messages when it cannot be had."""

import json
import sys

import pytest

from rankgate.cli import main
from rankgate.core.errors import InputError
from rankgate.core.formats import read_qrels
from rankgate.core.formats.corpus import read_corpus, read_queries

NEL = "\x85"
NAME = "rankgate-test/tiny"


@pytest.fixture(scope="session")
def dataset(tmp_path_factory):
    """Register rankgate-test/tiny (once per process): TSV docs and queries, TREC qrels, official measures."""
    ir_datasets = pytest.importorskip("ir_datasets")
    from ir_datasets.datasets.base import Dataset
    from ir_datasets.formats import TrecQrels, TsvDocs, TsvQueries
    from ir_datasets.util import LocalDownload

    d = tmp_path_factory.mktemp("irds")
    (d / "docs.tsv").write_text(f"d1\tfirst{NEL}passage\nd2\tsecond passage\nd3\tthird\n", encoding="utf-8")
    (d / "queries.tsv").write_text("q1\twhat is first\nq2\twhat is third\n", encoding="utf-8")
    (d / "qrels.txt").write_text("q1 0 d1 2\nq1 0 d2 1\nq2 0 d3 3\nq2 0 d2 0\n", encoding="utf-8")

    class Documentation:
        def documentation(self):
            return {"official_measures": ["nDCG@10", "RR(rel=2)", "AP(rel=2)"]}

    if NAME not in ir_datasets.registry:
        ir_datasets.registry.register(NAME, Dataset(
            TsvDocs(LocalDownload(d / "docs.tsv"), namespace="rgt", lang="en"),
            TsvQueries(LocalDownload(d / "queries.tsv"), namespace="rgt", lang="en"),
            TrecQrels(LocalDownload(d / "qrels.txt"), {0: "no", 1: "related", 2: "relevant", 3: "perfect"}),
            Documentation()))
    return d


@pytest.fixture(autouse=True)
def irds_home(tmp_path, monkeypatch):
    monkeypatch.setenv("IR_DATASETS_HOME", str(tmp_path / "irds-home"))


def test_qrels_queries_and_documents(dataset):
    q = read_qrels(f"irds:{NAME}")
    assert q.as_dict() == {"q1": {"d1": 2, "d2": 1}, "q2": {"d3": 3, "d2": 0}}
    assert q.meta["dataset_rel_level"] == 2
    assert read_queries(f"irds:{NAME}")["q2"].text == "what is third"
    docs = read_corpus(f"irds:{NAME}", wanted={"d1", "d9"})
    assert list(docs) == ["d1"] and docs["d1"].text == f"first{NEL}passage"
    assert len(read_corpus(f"irds:{NAME}")) == 3


def test_score_takes_the_dataset_and_its_relevance_level(dataset, tmp_path, capsys):
    run = tmp_path / "r.trec"
    run.write_text("q1 Q0 d2 1 2 r\nq1 Q0 d1 2 1 r\nq2 Q0 d3 1 2 r\nq2 Q0 d2 2 1 r\n")
    assert main(["score", f"irds:{NAME}", "--runs", str(run), "--k", "1"]) == 0
    by_dataset = json.loads(capsys.readouterr().out)["macro"]
    assert main(["score", "--qrels", f"irds:{NAME}", "--runs", str(run), "--k", "1", "--rel-level", "2"]) == 0
    assert json.loads(capsys.readouterr().out)["macro"] == by_dataset
    assert by_dataset["mrr_at_k"] == 0.5  # d2 (grade 1) is not relevant at level 2
    assert main(["score", f"irds:{NAME}", "--runs", str(run), "--k", "1", "--rel-level", "1"]) == 0
    assert json.loads(capsys.readouterr().out)["macro"]["mrr_at_k"] == 1.0  # the flag wins


def test_init_keeps_the_name_and_validate_opens_the_folder(dataset, tmp_path, capsys):
    run = tmp_path / "r.trec"
    run.write_text("q1 Q0 d2 1 2 r\nq1 Q0 d1 2 1 r\nq2 Q0 d3 1 2 r\nq2 Q0 d2 2 1 r\n")
    folder = tmp_path / "bench"
    assert main(["init", str(folder), "--qrels", f"irds:{NAME}", "--queries", f"irds:{NAME}", "--corpus",
                 f"irds:{NAME}", "--runs", str(run), "--k", "2"]) == 0
    out = capsys.readouterr().out
    assert "texts: found for 3 of 3 judged documents" in out
    assert f'qrels = "irds:{NAME}"' in (folder / "benchmark.toml").read_text()
    assert main(["validate", str(folder), "--format", "text"]) == 0
    assert "texts for 3 of 3 judged documents" in capsys.readouterr().out


def test_an_unknown_dataset_is_one_line(dataset, capsys):
    assert main(["score", "irds:no/such/dataset", "--runs", "x.trec"]) == 2
    err = capsys.readouterr().err
    assert "irds:no/such/dataset: no ir_datasets dataset 'no/such/dataset'" in err and len(err.splitlines()) == 1


def test_without_ir_datasets_the_extra_is_named(monkeypatch):
    monkeypatch.setitem(sys.modules, "ir_datasets", None)
    with pytest.raises(InputError, match=r"pip install 'rankgate\[irds\]'"):
        read_qrels("irds:msmarco-passage/trec-dl-2019/judged")


def test_import_rankgate_does_not_import_ir_datasets():
    import subprocess

    code = ("import sys, rankgate.cli, rankgate.core.formats, rankgate.core.formats.corpus\n"
            "assert 'ir_datasets' not in sys.modules\n")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_review_loads_the_dataset(dataset, tmp_path, monkeypatch):
    from rankgate.tui.loader import Inputs, load, load_corpus

    monkeypatch.setenv("RANKGATE_HOME", str(tmp_path / "home"))
    run = tmp_path / "r.trec"
    run.write_text("q1 Q0 d2 1 2 r\nq1 Q0 d1 2 1 r\nq2 Q0 d3 1 2 r\nq2 Q0 d2 2 1 r\n")
    loaded = load(Inputs(f"irds:{NAME}", [str(run)], str(tmp_path / "l.db"), queries=f"irds:{NAME}",
                         corpus=f"irds:{NAME}", k=1))
    try:
        m = loaded.model
        assert m.policy.checks.rel_level == 2 and m.queries["q1"].text == "what is first"
        docs = load_corpus(loaded.corpus_path, loaded.wanted_docs)
        assert docs["d1"].text == f"first{NEL}passage"
    finally:
        loaded.model.labels.close()


def test_a_receipt_needs_files(dataset, tmp_path, capsys):
    run = tmp_path / "r.trec"
    run.write_text("q1 Q0 d2 1 2 r\nq1 Q0 d1 2 1 r\nq2 Q0 d3 1 2 r\nq2 Q0 d2 2 1 r\n")
    code = main(["gate", f"irds:{NAME}", "--runs", f"a={run}", "--runs", f"b={run}", "--baseline", "a",
                 "--candidate", "b", "--k", "1", "--receipt", str(tmp_path / "receipt.json")])
    err = capsys.readouterr().err
    assert code == 2 and "ir_datasets export" in err and not (tmp_path / "receipt.json").exists()


def test_a_download_that_fails_offline_says_what_to_do(monkeypatch, capsys):
    """ir_datasets raises RuntimeError(('All download sources failed', [ConnectionError ...])) when a dataset is
    not in its cache and there is no network: one line saying so and what to do, the cause shortened."""
    from rankgate.core.formats import irds

    class Offline:
        def has_qrels(self):
            return True

        def qrels_iter(self):
            raise RuntimeError(("All download sources failed", ["ConnectionError(" + "x" * 400 + ")"]))

    monkeypatch.setattr(irds, "load", lambda spec: Offline())
    code = main(["score", "--qrels", "irds:msmarco-passage/trec-dl-2019/judged", "--runs", "irds-missing-run.trec"])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "could not download its qrels (no network here?)" in err and "~/.ir_datasets" in err
    assert "All download sources failed" in err and len(err) < 600
