"""Every part of a benchmark as a flag: raw files need no manifest (score, validate, compare, gate, review)."""

import json

import pytest

from rankgate.cli import build_parser, main
from tests.conftest import SAMPLES, write

NEL = "\x85"


def cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def raw(tmp_path):
    write(tmp_path / "qrels.txt", "1 0 a 3\n1 0 b 1\n2 0 c 2\n2 0 d 0\n")
    write(tmp_path / "x.trec", "1 Q0 b 1 3 x\n1 Q0 a 2 2 x\n1 Q0 e 3 1 x\n2 Q0 d 1 3 x\n2 Q0 c 2 2 x\n2 Q0 f 3 1 x\n")
    write(tmp_path / "y.trec", "1 Q0 a 1 3 y\n1 Q0 b 2 2 y\n1 Q0 e 3 1 y\n2 Q0 c 1 3 y\n2 Q0 d 2 2 y\n2 Q0 f 3 1 y\n")
    write(tmp_path / "topics.tsv", "1\tfirst query\n2\tsecond query\n")
    write(tmp_path / "corpus.jsonl", "".join(json.dumps({"docid": d, "text": f"text{NEL}{d}"}) + "\n" for d in "abce"))
    return tmp_path


def test_score_takes_the_qrels_file_as_its_argument_and_every_part_as_a_flag(raw, capsys):
    code, out, err = cli(capsys, "score", raw / "qrels.txt", "--runs", raw / "x.trec", "--queries",
                         raw / "topics.tsv", "--k", "1", "--rel-level", "2", "-m", "nDCG@3")
    assert code == 0, err
    data = json.loads(out)
    assert data["k"] == 1
    # at rel-level 2 only a and c are relevant; x ranks b and d first
    assert data["macro"]["hit_rate_at_k"] == 0.0
    assert "nDCG@3" in data["macro"]


def test_validate_reports_the_corpus_and_checks_measures(raw, capsys):
    code, out, err = cli(capsys, "validate", raw / "qrels.txt", "--runs", raw / "x.trec", "--corpus",
                         raw / "corpus.jsonl", "--format", "text", "--k", "3")
    assert code == 0, err
    assert "texts for 3 of 4 judged documents" in out
    code, out, err = cli(capsys, "validate", raw / "qrels.txt", "--runs", raw / "x.trec", "-m", "nDCG@x")
    assert code == 2 and "nDCG@x" in err
    write(raw / "bad.jsonl", '{"docid": "a", "text": "ok"}\n{"docid": "b", "text": "cut\n')
    code, out, err = cli(capsys, "validate", raw / "qrels.txt", "--runs", raw / "x.trec", "--corpus", raw / "bad.jsonl",
                         "--k", "3")
    assert code == 2 and "bad.jsonl:2" in err and len(err.strip().splitlines()) == 1


def test_compare_and_gate_take_the_flags(raw, capsys):
    code, out, err = cli(capsys, "compare", raw / "qrels.txt", "--runs", raw / "x.trec", "--runs", raw / "y.trec",
                         "--k", "1", "--baseline", "x")
    assert code == 0, err
    assert json.loads(out)["baseline"] == "x"
    code, out, err = cli(capsys, "gate", raw / "qrels.txt", "--runs", raw / "x.trec", "--runs", raw / "y.trec",
                         "--baseline", "x", "--candidate", "y", "--k", "1", "--queries", raw / "topics.tsv")
    assert code in (0, 3), err
    assert json.loads(out)["decision"] in ("accept", "reject")


def test_review_parses_every_flag():
    args = build_parser().parse_args(["review", "q.txt", "--runs", "r.trec", "--queries", "t.tsv", "--corpus",
                                      "c.jsonl.gz", "--k", "10", "--rel-level", "2", "-m", "nDCG@10",
                                      "--measure", "AP", "--policy", "p.toml"])
    from rankgate.tui.loader import Inputs

    inputs = Inputs.from_args(args)
    assert (inputs.path, inputs.queries, inputs.corpus, inputs.k, inputs.rel_level, inputs.measures,
            inputs.policy) == ("q.txt", "t.tsv", "c.jsonl.gz", 10, 2, ["nDCG@10", "AP"], "p.toml")


def test_review_refuses_a_missing_flag_file_before_opening(raw, capsys):
    code, out, err = cli(capsys, "review", raw / "qrels.txt", "--runs", raw / "x.trec", "--corpus", raw / "nope.jsonl")
    assert code == 2 and "nope.jsonl: no such file (expected a corpus file)" in err


def _deep(tmp_path):
    """Raw files: two runs 12 deep, so k=10 is no short ranking."""
    q = write(tmp_path / "q.trec", "q1 0 d1 1\nq2 0 d12 1\n")
    runs = []
    for name, order in (("a", range(1, 13)), ("b", range(12, 0, -1))):
        lines = [f"{qid} Q0 d{d} {r} {20 - r} {name}\n" for qid in ("q1", "q2") for r, d in enumerate(order, 1)]
        runs += ["--runs", write(tmp_path / f"{name}.trec", "".join(lines))]
    return [q, *runs]


def test_raw_files_default_to_k_10_in_every_face_a_folder_keeps_its_own(tmp_path, capsys):
    """score, compare, gate and validate take k=10 on raw files, as `rankgate review` and `rankgate init` do."""
    from rankgate.cli.review import RAW_K as review_k
    from rankgate.core.policy import RAW_K

    assert RAW_K == review_k == 10
    raw = _deep(tmp_path)
    for argv in (["score"], ["compare"], ["gate", "--baseline", "a", "--candidate", "b"], ["validate"]):
        code, out, err = cli(capsys, *argv, *raw)
        assert code in (0, 3) and json.loads(out)["k"] == 10, (argv, err)
    pol = write(tmp_path / "p.toml", "k = 5\n")
    assert json.loads(cli(capsys, "score", *raw, "--policy", pol)[1])["k"] == 5
    assert json.loads(cli(capsys, "score", *raw, "--k", "2")[1])["k"] == 2
    assert json.loads(cli(capsys, "score", SAMPLES / "seed-lab")[1])["k"] == 3  # its benchmark.toml says 3


def test_a_receipt_made_when_raw_files_defaulted_to_k_3_still_verifies(tmp_path, capsys, monkeypatch):
    from rankgate.core import policy

    raw = _deep(tmp_path)
    monkeypatch.setattr(policy, "RAW_K", 3)  # the default before
    code, _, err = cli(capsys, "gate", *raw, "--baseline", "a", "--candidate", "b", "--receipt", tmp_path / "r.json")
    assert code in (0, 3), err
    monkeypatch.setattr(policy, "RAW_K", 10)
    code, out, err = cli(capsys, "receipt", "verify", tmp_path / "r.json")
    assert code == 0, out + err
