"""Every reader: the forms it accepts, detection, gz, names, and what it refuses."""

import gzip

import pytest

from rankgate.core.errors import InputError
from rankgate.core.formats import read_qrels, read_runs
from rankgate.core.model import Catalog
from tests.conftest import write


def test_qrels_forms_agree(tmp_path):
    seed = write(tmp_path / "a.json", '{"q1": ["d1", "d2"], "q2": ["d3"]}')
    graded = write(tmp_path / "b.json", '{"q1": {"d1": 1, "d2": 1}, "q2": {"d3": 1}}')
    trec = write(tmp_path / "c.trec", "# header\nq1 0 d1 1\nq1 0 d2 1\nq2 0 d3 1\n")
    beir = write(tmp_path / "d.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t1\nq2\td3\t1\n")
    jsonl = write(tmp_path / "e.jsonl", '{"query": "q1", "doc": "d1", "grade": 1, "reason": "says so"}\n'
                  '{"query": "q1", "doc": "d2", "grade": 1}\n{"query": "q2", "doc": "d3", "grade": 1}\n')
    gz = tmp_path / "f.trec.gz"
    gz.write_bytes(gzip.compress(trec.read_bytes()))
    want = {"q1": {"d1": 1, "d2": 1}, "q2": {"d3": 1}}
    kinds = {}
    for p in (seed, graded, trec, beir, jsonl, gz):
        q = read_qrels(p)
        assert q.as_dict() == want, p
        kinds[p.name] = q.format
    assert kinds == {"a.json": "json", "b.json": "json-graded", "c.trec": "trec", "d.tsv": "beir",
                     "e.jsonl": "jsonl", "f.trec.gz": "trec"}
    assert read_qrels(jsonl).details[("q1", "d1")].reason == "says so"


def test_hash_inside_an_id_is_part_of_the_id(tmp_path):
    q = read_qrels(write(tmp_path / "q", "# comment line\nq1 0 doc#4_17 2\n"))
    assert q.as_dict() == {"q1": {"doc#4_17": 2}}


def test_negative_grades_are_kept(tmp_path):
    assert read_qrels(write(tmp_path / "q", "q1 0 d1 -1\nq1 0 d2 3\n")).as_dict() == {"q1": {"d1": -1, "d2": 3}}


@pytest.mark.parametrize("grade", ["1.5", "0.3", "1e+8", "0x37", "1.1.11", "one"])
def test_malformed_grades_are_refused_naming_the_line(tmp_path, grade):
    p = write(tmp_path / "q.trec", f"q1 0 d1 1\nq1 0 d2 {grade}\n")
    with pytest.raises(InputError) as e:
        read_qrels(p)
    assert e.value.line == 2 and grade in str(e.value) and "integer" in str(e.value)


def test_duplicate_judgment_refused(tmp_path):
    with pytest.raises(InputError, match="duplicate judgment.*first at line 1"):
        read_qrels(write(tmp_path / "q", "q1 0 d1 1\nq1 0 d1 2\n"))


def test_duplicate_json_key_refused(tmp_path):
    with pytest.raises(InputError, match="duplicate key"):
        read_qrels(write(tmp_path / "q.json", '{"q1": {"d1": 1, "d1": 2}}'))


def test_seed_json_repeated_relevant_id_is_a_problem(tmp_path):
    q = read_qrels(write(tmp_path / "q.json", '{"q1": ["d1", "d1"]}'))
    assert [p.rule for p in q.problems] == ["duplicate-relevant"]
    assert '$["q1"][1]' in q.problems[0].where


def test_trec_run_order_is_score_desc_then_docid_desc(tmp_path):
    # the rank column is ignored; equal scores fall back to the document id, descending
    p = write(tmp_path / "r.trec", "q1 Q0 a 1 1.0 t\nq1 Q0 c 2 1.0 t\nq1 Q0 b 3 2.0 t\nq1 Q0 z 4 0.5 t extra junk\n")
    (run,) = read_runs(p)
    assert run.name == "r"
    assert run.ranking("q1") == ["b", "c", "a", "z"]


def test_run_names_and_json_runs(tmp_path):
    p = write(tmp_path / "runs.json", '{"A": {"q1": ["d2", "d1"]}, "B": {"q1": ["d1"]}}')
    runs = read_runs(p)
    assert [r.name for r in runs] == ["A", "B"]
    assert runs[0].ranking("q1") == ["d2", "d1"]
    t = write(tmp_path / "x.trec", "q1 Q0 d1 1 1 t\n")
    assert read_runs(f"mine={t}")[0].name == "mine"


def test_jsonl_run_with_metadata_and_budgets(tmp_path):
    p = write(tmp_path / "r.jsonl", '{"meta": {"name": "bm25", "corpus_snapshot": "v1"}}\n'
              '{"query": "q1", "ranking": ["d1", "d2"], "latency_ms": 12.5, "context_tokens": 300}\n'
              '{"query": "q2", "ranking": [{"doc": "d3", "score": 1.0}, {"doc": "d4", "score": 2.0}]}\n')
    (run,) = read_runs(p)
    assert run.name == "bm25" and run.meta["corpus_snapshot"] == "v1"
    assert run.latency_ms == {"q1": 12.5} and run.context_tokens == {"q1": 300.0}
    assert run.ranking("q1") == ["d1", "d2"] and run.ranking("q2") == ["d4", "d3"]


def test_regular_and_irregular_trec_blocks_give_the_same_run(tmp_path):
    rows = "".join(f"q{i % 7} Q0 d{i} {i} {1.0 / (i + 1):.6f} tag\n" for i in range(500))
    fast = read_runs(write(tmp_path / "fast.trec", rows))[0]
    slow = read_runs(write(tmp_path / "slow.trec", "# a comment forces the line-by-line path\n" + rows))[0]
    assert fast.rankings() == slow.rankings()


@pytest.mark.parametrize("text,line,what", [
    ("q1 Q0 d1 1 1.0\n", 1, "5 columns, expected 6"),
    ("q1 Q0 d1 1 1.0 t\nq1 Q0 d2 2 abc t\n", 2, "not a number"),
    ("q1 Q0 d1 1 nan t\n", 1, "finite"),
])
def test_bad_trec_run_lines(tmp_path, text, line, what):
    with pytest.raises(InputError) as e:
        read_runs(write(tmp_path / "r.trec", text))
    assert e.value.line == line and what in str(e.value)


@pytest.mark.parametrize("data", [b"", b"   \n", b"\xff\xfe\x00garbage", b"q1 0 d1 1\n\xc3\x28 0 d2 1\n"])
def test_empty_binary_and_invalid_utf8(tmp_path, data):
    with pytest.raises(InputError):
        read_qrels(write(tmp_path / "q", data))


def test_bom_and_crlf_are_accepted(tmp_path):
    p = write(tmp_path / "q", b"\xef\xbb\xbfq1 0 d1 1\r\nq1\t0\td2   2\r\n")
    assert read_qrels(p).as_dict() == {"q1": {"d1": 1, "d2": 2}}


def test_invalid_json_names_line(tmp_path):
    with pytest.raises(InputError) as e:
        read_qrels(write(tmp_path / "q.json", '{\n"q1": [\n"d1",\n]\n}'))
    assert e.value.line == 4


def test_catalog_shared_between_qrels_and_runs(tmp_path):
    cat = Catalog()
    read_qrels(write(tmp_path / "q", "q1 0 d1 1\n"), catalog=cat)
    read_runs(write(tmp_path / "r", "q1 Q0 d1 1 1 t\nq1 Q0 d9 2 0.5 t\n"), catalog=cat)
    assert cat.docs.names == ["d1", "d9"]


def test_long_reads_report_progress(tmp_path):
    p = write(tmp_path / "r.trec", "".join(f"q{i % 5} Q0 d{i} {i} {i} t\n" for i in range(2000)))
    seen = []
    read_runs(p, progress=lambda done, total: seen.append((done, total)))
    size = p.stat().st_size
    assert seen[0] == (0, size) and seen[-1] == (size, size)
    assert all(a[0] <= b[0] for a, b in zip(seen, seen[1:]))


def test_terminal_progress_only_on_a_tty(tmp_path, monkeypatch, capsys):
    from rankgate.cli import progress

    p = write(tmp_path / "r.trec", "q1 Q0 d1 1 1 t\n")
    assert progress.terminal_progress(str(p)) is None  # small file
    monkeypatch.setattr(progress, "MIN_BYTES", 0)
    monkeypatch.setattr(progress.sys.stderr, "isatty", lambda: True, raising=False)
    report = progress.terminal_progress(str(p))
    report(p.stat().st_size, p.stat().st_size)
    assert "reading r.trec: 100.0%" in capsys.readouterr().err
