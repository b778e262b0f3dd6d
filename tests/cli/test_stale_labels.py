"""Stale labels (core/staleness.py): a label records the text it was judged on; a later corpus that changes
that text shows it stale in `labels status`, `labels list --stale`, the queue and the gate."""

import gzip
import json

import pytest

from rankgate.core.staleness import normalise, stale_labels, text_hash
from tests.conftest import CONFORMANCE, write

DL19 = CONFORMANCE / "trec-dl-2019-passage"


def test_reformatting_is_not_a_change_but_a_word_is():
    base = text_hash("Title", "The café opens at nine.")
    assert text_hash(" Title ", "The  cafe\u0301 opens\n\tat nine.\n") == base  # spaces, NFD accent, newline
    assert text_hash("Title", "The café opens at ten.") != base
    assert text_hash("title", "The café opens at nine.") != base  # case counts
    assert normalise("a\u00a0 b\u2003c") == "a b c"  # any Unicode space


def test_stale_labels_counts_only_known_hashes():
    got = stale_labels([("q1", "d1", "aaa"), ("q1", "d2", "bbb"), ("q2", "d1", ""), ("q2", "d9", "ccc")],
                       {"d1": "zzz", "d2": "bbb"})
    assert got.pairs == [("q1", "d1")] and got.checked == 2 and got.unknown == 1


@pytest.fixture
def small(tmp_path):
    qrels = write(tmp_path / "qrels.txt", "q1 0 d1 2\nq1 0 d2 0\nq2 0 d3 1\n")
    old = write(tmp_path / "old.jsonl", "".join(json.dumps({"docid": d, "text": f"text of {d}"}) + "\n"
                                                 for d in ("d1", "d2", "d3")))
    new = write(tmp_path / "new.jsonl", json.dumps({"docid": "d1", "text": "text of d1, rewritten"}) + "\n"
                + json.dumps({"docid": "d2", "text": "  text   of\nd2 "}) + "\n"
                + json.dumps({"docid": "d3", "text": "text of d3"}) + "\n")
    return tmp_path, qrels, old, new


def test_status_list_and_relabel(cli, small):
    tmp, qrels, old, new = small
    db = tmp / "ws.json"
    assert cli("labels", "import", "--db", db, qrels, "--corpus", old)[0] == 0
    code, out, _ = cli("labels", "status", "--db", db, "--corpus", new)
    assert code == 0 and "stale labels: 1 of 3 checked" in out
    code, out, _ = cli("labels", "list", "--db", db, "--stale", "--corpus", new)
    assert out.split()[:3] == ["q1", "d1", "2"] and len(out.strip().splitlines()) == 1
    # judged again on the new text: no longer stale
    assert cli("labels", "set", "--db", db, "q1", "d1", "2", "--reason", "still on topic",
               "--corpus", new)[0] == 0
    assert "stale labels: 0 of 3" in cli("labels", "status", "--db", db, "--corpus", new)[1]


def test_set_with_a_corpus_that_lacks_the_document_refuses(cli, small):
    tmp, qrels, old, _ = small
    db = tmp / "ws.json"
    cli("labels", "import", "--db", db, qrels)
    code, _, err = cli("labels", "set", "--db", db, "q1", "d7", "1", "--reason", "x", "--corpus", old)
    assert code == 2 and "no document 'd7'" in err


def test_reimport_with_texts_records_hashes_of_unchanged_labels(cli, small):
    tmp, qrels, old, new = small
    db = tmp / "ws.json"
    cli("labels", "import", "--db", db, qrels)  # no texts: nothing can be stale
    assert "stale labels: 0 of 0 checked" in cli("labels", "status", "--db", db, "--corpus", new)[1]
    cli("labels", "import", "--db", db, qrels, "--corpus", old)
    assert "stale labels: 1 of 3 checked" in cli("labels", "status", "--db", db, "--corpus", new)[1]


def test_gate_warns_refuses_or_allows(cli, small):
    tmp, qrels, old, new = small
    db = tmp / "ws.json"
    cli("labels", "import", "--db", db, qrels, "--corpus", old)
    run = write(tmp / "run.txt", "q1 Q0 d1 1 3 r\nq1 Q0 d2 2 2 r\nq2 Q0 d3 1 3 r\n")
    other = write(tmp / "other.txt", "q1 Q0 d2 1 3 s\nq1 Q0 d1 2 2 s\nq2 Q0 d3 1 3 s\n")
    args = ["gate", "--qrels", qrels, "--runs", run, "--runs", other, "--baseline", "run", "--candidate", "other",
            "--db", db, "--corpus", new, "--k", "2",
            "--short-rankings", "allow", "--markdown", tmp / "r.md", "-o", tmp / "out.json"]
    code, _, err = cli(*args)
    assert code in (0, 3) and 'stale labels: 1' in err and 'stale_labels = "warn"' in err
    assert json.loads((tmp / "out.json").read_text())["stale_labels"]["pairs"] == [["q1", "d1"]]
    assert "stale labels: 1 (q1 d1)" in (tmp / "r.md").read_text()
    policy = write(tmp / "refuse.toml", 'stale_labels = "refuse"\n')
    code, _, err = cli(*args, "--policy", policy)
    assert code == 2 and "1 stale labels" in err and "q1 d1" in err
    policy = write(tmp / "allow.toml", 'stale_labels = "allow"\n')
    code, _, err = cli(*args, "--policy", policy, "--receipt", tmp / "receipt.json")
    assert code in (0, 3) and "stale labels" not in err
    receipt = json.loads((tmp / "receipt.json").read_text())
    assert receipt["predicate"]["label_trust"]["stale_labels"]["count"] == 1
    code, out, _ = cli("receipt", "verify", tmp / "receipt.json")
    assert code == 0, out


def test_bad_stale_policy_names_the_key(cli, small):
    tmp, qrels, _, new = small
    run = write(tmp / "run.txt", "q1 Q0 d1 1 3 r\n")
    policy = write(tmp / "p.toml", 'stale_labels = "ignore"\n')
    code, _, err = cli("gate", "--qrels", qrels, "--runs", run, "--policy", policy)
    assert code == 2 and "stale_labels" in err and "refuse, warn, allow" in err


@pytest.mark.slow
@pytest.mark.skipif(not DL19.exists(), reason=f"no DL 2019 data at {DL19} (RANKGATE_CONFORMANCE names another place)")
def test_dl19_one_passage_rewritten(cli, tmp_path):
    """The issue's check: on DL19, one judged passage's text changed in a new corpus shows stale in
    `labels status`, the queue and the gate's report."""
    corpus = DL19 / "passages.rankllm-top100-union.dl19.jsonl.gz"
    qrels = DL19 / "qrels.dl19-passage.txt"
    judged = {(ln.split()[0], ln.split()[2]) for ln in qrels.read_text().splitlines()}
    top = next((ln.split()[0], ln.split()[2]) for ln in (DL19 / "runs" / "BM25.dl19.trec").read_text().splitlines()
               if (ln.split()[0], ln.split()[2]) in judged)
    rows = []
    with gzip.open(corpus, "rt") as f:
        for i, line in enumerate(f):
            o = json.loads(line)
            if o["docid"] == top[1]:
                o["text"] += " (rewritten in 2026)"
            elif i % 2:
                o["text"] = "  " + o["text"].replace(" ", "\n ") + "\n"  # reformatted: not a change
            rows.append(json.dumps(o))
    new = tmp_path / "v2.jsonl.gz"
    with gzip.open(new, "wt") as f:
        f.write("\n".join(rows) + "\n")
    db = tmp_path / "ws.json"
    assert cli("labels", "import", "--db", db, qrels, "--corpus", corpus)[0] == 0
    expected = sum(1 for q, d in judged if d == top[1])
    assert f"stale labels: {expected} of " in cli("labels", "status", "--db", db, "--corpus", new)[1]
    runs = ["--runs", DL19 / "runs" / "BM25.dl19.trec", "--runs", DL19 / "runs" / "D_BERT_KD_TASB.dl19.trec"]
    code, out, _ = cli("labels", "queue", "--db", db, *runs, "--baseline", "BM25.dl19", "--candidate",
                       "D_BERT_KD_TASB.dl19", "--corpus", new, "--limit", "1")
    assert f"{top[0]} {top[1]}" in out.splitlines()[1] and "stale" in out.splitlines()[1]
    code, _, err = cli("gate", "--qrels", qrels, *runs, "--baseline", "BM25.dl19", "--candidate",
                       "D_BERT_KD_TASB.dl19", "--db", db, "--corpus", new, "--markdown", tmp_path / "r.md",
                       "-o", tmp_path / "out.json")
    assert f"stale labels: {expected}" in err and f"{top[0]} {top[1]}" in (tmp_path / "r.md").read_text()


def test_gate_with_a_corpus_but_no_workspace_refuses_instead_of_ignoring_it(cli, small, tmp_path):
    """`rankgate gate QRELS --runs ... --corpus FILE` with no workspace for the qrels read nothing of the corpus
    and said nothing: the user believed stale labels were checked."""
    tmp, qrels, _, new = small
    run = write(tmp / "run.txt", "q1 Q0 d1 1 3 r\nq1 Q0 d2 2 2 r\nq2 Q0 d3 1 3 r\n")
    other = write(tmp / "other.txt", "q1 Q0 d2 1 3 s\nq1 Q0 d1 2 2 s\nq2 Q0 d3 1 3 s\n")
    runs = ["--runs", run, "--runs", other, "--baseline", "run", "--candidate", "other"]
    out = tmp / "out.json"
    code, _, err = cli("gate", qrels, *runs, "--corpus", new, "--k", "2", "--short-rankings", "allow", "-o", out)
    assert code == 2 and err.count("\n") == 1 and err.startswith("error: --corpus: ") and "--db" in err
    assert "Traceback" not in err and not out.exists()
    db = tmp / "ws.json"  # with the workspace it is read
    cli("labels", "import", "--db", db, qrels)
    code, _, err = cli("gate", qrels, *runs, "--corpus", new, "--k", "2", "--short-rankings", "allow", "--db", db,
                       "-o", out)
    assert code in (0, 3) and out.exists(), err


def test_import_of_a_benchmark_folder_records_the_texts_of_its_corpus(cli, small):
    """`labels import -b FOLDER` hashed no text of the benchmark's corpus (only an explicit --corpus with files
    did): a later corpus could not show a label stale ("0 of 0 checked")."""
    tmp, qrels, old, new = small
    folder = tmp / "bench"
    folder.mkdir()
    (folder / "qrels.txt").write_text(qrels.read_text())
    (folder / "corpus.jsonl").write_text(old.read_text())
    write(folder / "run.txt", "q1 Q0 d1 1 3 r\n")
    write(folder / "benchmark.toml", 'name = "bench"\nk = 2\nqrels = "qrels.txt"\nruns = ["run.txt"]\n'
          'corpus = "corpus.jsonl"\n')
    assert cli("labels", "import", "-b", folder)[0] == 0
    code, out, _ = cli("labels", "status", folder, "--corpus", new)
    assert code == 0 and "stale labels: 1 of 3 checked" in out
    extra = write(tmp / "extra.txt", "q3 0 d2 1\n")  # files imported into it: its corpus too, without --corpus
    assert cli("labels", "import", "-b", folder, extra)[0] == 0
    assert "stale labels: 1 of 4 checked" in cli("labels", "status", folder, "--corpus", new)[1]
