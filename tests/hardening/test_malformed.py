"""The malformed-input collection: every case exits 2 with one line naming the file
(and line or JSON path) and what was expected; no traceback; nothing written."""

import gzip
import json

import pytest

from rankgate.cli import main
from tests.conftest import write

GOOD_QRELS = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n"
GOOD_RUN = "q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\nq2 Q0 d3 1 1.0 t\nq2 Q0 d4 2 0.5 t\n"

# (id, which input, file name, content, expected text in the error, expected "file:line" or None)
CASES = [
    # TREC qrels
    ("trec-qrels-truncated", "qrels", "q.trec", "q1 0 d1 1\nq1 0 d2\n", "3 columns, expected 4", 2),
    ("trec-qrels-too-many", "qrels", "q.trec", "q1 0 d1 1 9\n", "5 columns, expected 4", 1),
    ("trec-qrels-word-grade", "qrels", "q.trec", "q1 0 d1 yes\n", "not an integer", 1),
    ("trec-qrels-1.5", "qrels", "q.trec", "q1 0 d1 1\nq1 0 d2 1.5\n", "'1.5' is not an integer", 2),
    ("trec-qrels-0x37", "qrels", "q.trec", "q1 0 d1 0x37\n", "'0x37' is not an integer", 1),
    ("trec-qrels-1e+8", "qrels", "q.trec", "q1 0 d1 1e+8\n", "'1e+8' is not an integer", 1),
    ("trec-qrels-1.1.11", "qrels", "q.trec", "q1 0 d1 1.1.11\n", "'1.1.11' is not an integer", 1),
    ("trec-qrels-huge-grade", "qrels", "q.trec", "q1 0 d1 99999999999999999999\n", "out of range", 1),
    ("trec-qrels-duplicate", "qrels", "q.trec", "q1 0 d1 1\nq1 0 d1 2\n", "duplicate judgment", 2),
    ("trec-qrels-empty", "qrels", "q.trec", "", "empty file", None),
    ("trec-qrels-blank", "qrels", "q.trec", "  \n\n", "empty file", None),
    ("trec-qrels-only-comments", "qrels", "q.trec", "# nothing\n", "no judgments", None),
    ("trec-qrels-bad-utf8", "qrels", "q.trec", b"q1 0 d1 1\nq1 0 d\xff 1\n", "invalid UTF-8", 2),
    ("trec-qrels-binary", "qrels", "q.trec", b"q1 0 d1 1\n\x00\x01\x02\x03", "binary data", 2),
    ("trec-qrels-long-line", "qrels", "q.trec", "x" * 2_000_000 + "\n", "1 columns, expected 4", 1),
    ("trec-qrels-mixed-ws-bad", "qrels", "q.trec", "q1\t0 d1  1\nq1 \t 0\td2\n", "3 columns", 2),
    # JSON qrels
    ("json-qrels-syntax", "qrels", "q.json", '{"q1": ["d1",]}', "invalid JSON", 1),
    ("json-qrels-list", "qrels", "q.json", '[["q1", "d1"]]', "expected a JSON object of query IDs", None),
    ("json-qrels-number", "qrels", "q.json", '{"q1": 5}', "expected a list of relevant document IDs", None),
    ("json-qrels-string-grade", "qrels", "q.json", '{"q1": {"d1": "2"}}', "is not an integer", None),
    ("json-qrels-float-grade", "qrels", "q.json", '{"q1": {"d1": 1.5}}', "'1.5' is not an integer", None),
    ("json-qrels-bool-grade", "qrels", "q.json", '{"q1": {"d1": true}}', "is not an integer", None),
    ("json-qrels-number-id", "qrels", "q.json", '{"q1": [1]}', "expected a document ID", None),
    ("json-qrels-huge-grade", "qrels", "q.json", '{"q1": {"d1": 99999999999999999999}}', "out of range", None),
    ("json-qrels-dup-key", "qrels", "q.json", '{"q1": {"d1": 1, "d1": 2}}', "duplicate key", None),
    ("json-qrels-deep", "qrels", "q.json", "[" * 100_000 + "]" * 100_000, "", None),
    ("json-qrels-empty-object", "qrels", "q.json", "{}", "no judgments", None),
    ("json-qrels-empty-lists", "qrels", "q.json", '{"q1": [], "q2": []}', "2 queries have no relevant document", None),
    # JSONL judgments
    ("jsonl-qrels-array-line", "qrels", "q.jsonl", '{"query": "q1", "doc": "d1", "grade": 1}\n[1, 2]\n',
     "expected a JSON object on each line", 2),
    ("jsonl-qrels-no-grade", "qrels", "q.jsonl", '{"query": "q1", "doc": "d1"}\n{"query": "q1", "doc": "d2", "grade": 1}\n',
     "'grade' must be an integer", 1),
    ("jsonl-qrels-no-doc", "qrels", "q.jsonl", '{"query": "q1", "doc": "d1", "grade": 1}\n{"query": "q1", "grade": 1}\n',
     "'doc' must be a non-empty string", 2),
    ("jsonl-qrels-bad-line", "qrels", "q.jsonl", '{"query": "q1", "doc": "d1", "grade": 1}\n{"query": \n',
     "invalid JSON", 2),
    ("jsonl-qrels-dup", "qrels", "q.jsonl", '{"query": "q1", "doc": "d1", "grade": 1}\n{"query": "q1", "doc": "d1", "grade": 0}\n',
     "duplicate judgment", 2),
    # BEIR
    ("beir-columns", "qrels", "q.tsv", "query-id\tcorpus-id\tscore\nq1\td1\n", "2 tab-separated columns", 2),
    ("beir-float", "qrels", "q.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t1.5\n", "not an integer", 2),
    # TREC runs
    ("trec-run-short-line", "run", "B.trec", "q1 Q0 d1 1 2.0\n", "5 columns, expected 6", 1),
    ("trec-run-bad-score", "run", "B.trec", "q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 high t\n", "score 'high' is not a number", 2),
    ("trec-run-nan", "run", "B.trec", "q1 Q0 d1 1 nan t\n", "not a finite number", 1),
    ("trec-run-inf", "run", "B.trec", "q1 Q0 d1 1 inf t\n", "not a finite number", 1),
    ("trec-run-empty", "run", "B.trec", "", "empty file", None),
    ("trec-run-bad-gzip", "run", "B.trec.gz", b"\x1f\x8b\x08\x00garbage-not-deflate", "compressed data", None),
    ("trec-run-bad-utf8", "run", "B.trec", b"q1 Q0 d1 1 2.0 t\nq1 Q0 \xc3\x28 2 1.0 t\n", "invalid UTF-8", 2),
    ("trec-run-duplicate-doc", "run", "B.trec", "q1 Q0 d1 1 2.0 t\nq1 Q0 d1 2 1.0 t\nq2 Q0 d3 1 1 t\nq2 Q0 d4 1 0 t\n",
     "ranks document 'd1' twice", 2),
    ("trec-run-unknown-query", "run", "B.trec", GOOD_RUN + "q9 Q0 d1 1 1.0 t\nq9 Q0 d2 1 0.5 t\n", "absent from the qrels", None),
    ("trec-run-missing-query", "run", "B.trec", "q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\n", "no ranking for 1 qrels query", None),
    # JSON runs
    ("json-run-list", "run", "B.json", '[{"q1": ["d1"]}]', "expected a JSON object of run names", None),
    ("json-run-not-object", "run", "B.json", '{"B": ["d1"]}', "expected an object of query IDs", None),
    ("json-run-ranking-string", "run", "B.json", '{"B": {"q1": "d1"}}', "expected a list of document IDs", None),
    ("json-run-number-doc", "run", "B.json", '{"B": {"q1": ["d1", 7]}}', "expected a document ID", None),
    ("json-run-dup-doc", "run", "B.json", '{"B": {"q1": ["d1", "d1"], "q2": ["d3", "d4"]}}', '$["B"]["q1"][1]', None),
    # JSONL runs
    ("jsonl-run-meta-late", "run", "B.jsonl", '{"query": "q1", "ranking": ["d1", "d2"]}\n{"meta": {}}\n',
     "metadata must be the first line", 2),
    ("jsonl-run-ranking-type", "run", "B.jsonl", '{"query": "q1", "ranking": "d1"}\n', "'ranking' must be a list", 1),
    ("jsonl-run-query-twice", "run", "B.jsonl", '{"query": "q1", "ranking": ["d1"]}\n{"query": "q1", "ranking": ["d2"]}\n',
     "appears twice", 2),
    ("jsonl-run-negative-latency", "run", "B.jsonl", '{"query": "q1", "ranking": ["d1"], "latency_ms": -3}\n',
     "'latency_ms' must be a non-negative number", 1),
    ("jsonl-run-nan-score", "run", "B.jsonl", '{"query": "q1", "ranking": [{"doc": "d1", "score": NaN}]}\n',
     "finite number", 1),
    # policy files
    ("policy-unknown-key", "policy", "p.toml", "k = 1\nthreshold = 0.5\n", "unknown policy key 'threshold'", None),
    ("policy-wrong-type", "policy", "p.toml", 'k = "1"\n', "'k' must be an integer", None),
    ("policy-bad-toml", "policy", "p.toml", "k = = 1\n", "invalid TOML", 1),
    ("policy-bad-rule", "policy", "p.toml", '[[rules]]\nmeasure = "R@1"\ncheck = "higher"\n', "'check' must be", None),
    ("policy-bad-measure", "policy", "p.toml", 'measures = ["Recall at 10"]\n', "unknown measure", None),
    ("policy-floor-no-min", "policy", "p.toml", '[[rules]]\nmeasure = "R@1"\ncheck = "floor"\n', "needs 'min'", None),
    ("policy-rule-unknown-key", "policy", "p.toml", '[[rules]]\nmeasure = "R@1"\nmax = 1\n', "key 'max'", None),
]


SEVERAL_PROBLEMS = {"json-qrels-empty-lists"}  # validation lists every problem, one line each


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_malformed_input(tmp_path, capsys, case):
    _, which, name, content, expected, line = case
    qrels = write(tmp_path / "qrels.trec", GOOD_QRELS)
    runs = [write(tmp_path / "A.trec", GOOD_RUN)]
    policy = None
    bad = write(tmp_path / name, content)
    if which == "qrels":
        qrels = bad
        runs.append(write(tmp_path / "B.trec", GOOD_RUN))
    elif which == "run":
        runs.append(bad)
    else:
        runs.append(write(tmp_path / "B.trec", GOOD_RUN))
        policy = bad
    receipt = tmp_path / "out" / "receipt.json"
    receipt.parent.mkdir()
    argv = ["gate", "--qrels", str(qrels), *[a for r in runs for a in ("--runs", str(r))],
            "--baseline", "A", "--candidate", "B", "--k", "1", "--receipt", str(receipt)]
    if policy:
        argv += ["--policy", str(policy)]
    before = sorted(p.name for p in tmp_path.rglob("*"))
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 2, (out, err)
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert lines and all(l.startswith("error: ") for l in lines)
    if case[0] not in SEVERAL_PROBLEMS:
        assert len(lines) == 1, lines
    assert name in err
    assert expected in err
    if line is not None:
        assert f"{name}:{line}" in err
    assert sorted(p.name for p in tmp_path.rglob("*")) == before  # nothing written
    assert not receipt.exists()
    assert len(err) < 2000  # a long bad line is never echoed whole


ACCEPTED = [
    ("bom", b"\xef\xbb\xbfq1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n"),
    ("crlf", b"q1 0 d1 1\r\nq1 0 d2 0\r\nq2 0 d3 2\r\n"),
    ("mixed-tabs-and-spaces", b"q1\t0 d1   1\nq1 0\td2\t0\nq2  0  d3 2\n"),
    ("gzip", gzip.compress(GOOD_QRELS.encode())),
    ("no-final-newline", GOOD_QRELS.rstrip("\n").encode()),
]


@pytest.mark.parametrize("name,content", ACCEPTED, ids=[a[0] for a in ACCEPTED])
def test_tolerated_variations_score_the_same(tmp_path, capsys, name, content):
    plain = write(tmp_path / "plain.trec", GOOD_QRELS)
    odd = write(tmp_path / "odd.qrels", content)
    run = write(tmp_path / "A.trec", GOOD_RUN)
    outs = []
    for q in (plain, odd):
        assert main(["score", "--qrels", str(q), "--runs", str(run), "--k", "1", "-m", "AP"]) == 0
        outs.append(capsys.readouterr().out)
    assert outs[0] == outs[1]


def test_unknown_run_name_and_query(tmp_path, capsys):
    q = write(tmp_path / "q.trec", GOOD_QRELS)
    r = write(tmp_path / "A.trec", GOOD_RUN)
    assert main(["gate", "--qrels", str(q), "--runs", str(r), "--baseline", "A", "--candidate", "Z", "--k", "1"]) == 2
    assert "unknown run 'Z'" in capsys.readouterr().err
    assert main(["gate", "--qrels", str(q), "--runs", str(r), "--baseline", "A", "--candidate", "A", "--k", "1",
                 "--must-pass", "q7"]) == 2
    assert "must-pass query 'q7' is not in the qrels" in capsys.readouterr().err


def test_cli_tables_show_escape_sequences_literally(tmp_path, capsys):
    q = write(tmp_path / "q.json", '{"q\\u001b[31mred": ["d\\u001b]8;;http://x\\u0007link"]}')
    r = write(tmp_path / "r.json", '{"run[bold]": {"q\\u001b[31mred": ["other", "x", "y"]}}')
    assert main(["score", "--qrels", str(q), "--runs", str(r), "--format", "table"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out
    assert "q\\x1b[31mred" in out and "d\\x1b]8;;http://x\\x07link" in out and "run[bold]" in out


def test_a_symlink_loop_or_a_pipe_is_one_line_and_exit_2(tmp_path, capsys):
    import os

    run = write(tmp_path / "r.trec", GOOD_RUN)
    os.symlink(tmp_path / "b", tmp_path / "a")
    os.symlink(tmp_path / "a", tmp_path / "b")
    os.mkfifo(tmp_path / "fifo")
    for qrels, said in ((tmp_path / "a", "cannot be opened"), (tmp_path / "fifo", "expected a regular file")):
        code = main(["score", "--qrels", str(qrels), "--runs", str(run)])
        err = capsys.readouterr().err
        assert code == 2 and said in err and str(qrels) in err and len(err.splitlines()) == 1


def test_trec_output_cannot_be_forged_by_an_id(tmp_path, capsys):
    """A query ID holding a tab and a newline stays on its own line of trec_eval output."""
    forged = "q1\nP_5                   \tall\t1.0000"
    write(tmp_path / "q.jsonl", json.dumps({"query": forged, "doc": "d1", "grade": 1}) + "\n")
    write(tmp_path / "r.jsonl", json.dumps({"query": forged, "ranking": ["d2", "d1"]}) + "\n")
    code = main(["score", "--qrels", str(tmp_path / "q.jsonl"), "--runs", str(tmp_path / "r.jsonl"),
                 "--format", "trec", "-q", "-m", "P@5", "--short-rankings", "allow"])
    out = capsys.readouterr().out
    assert code == 0
    p5 = [line.split("\t") for line in out.splitlines() if line.startswith("P_5")]
    assert [row[1] for row in p5] == ["q1\\x0aP_5                   \\x09all\\x091.0000", "all"]
    assert p5[-1][2] == "0.2000"
