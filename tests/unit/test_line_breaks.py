"""Every reader ends a record at "\\n" (or "\\r\\n") only: U+0085, U+2028, U+2029, a form feed or a
vertical tab inside a text, a reason or an ID is part of it, and a bad line is named by its real
line number (str.splitlines() would count those characters as line breaks)."""

import gzip

import pytest

from rankgate.core.errors import InputError
from rankgate.core.formats import read_qrels, read_runs
from rankgate.core.formats.corpus import read_corpus, read_queries
from rankgate.core.formats.textio import ascii_fields, numbered_lines
from tests.conftest import write

BREAKS = ["\x85", "\u2028", "\u2029", "\x0c", "\x0b", "\x1c", "\x1e"]
NEL = "\x85"


def test_numbered_lines_split_on_newline_only():
    text = f"a{NEL}b\r\nc\u2028d\n\x0ce\n"
    assert list(numbered_lines(text)) == [(1, f"a{NEL}b"), (2, "c\u2028d"), (3, "\x0ce"), (4, "")]
    assert ascii_fields(f" q1\tQ0  d{NEL}1 \x0c 2 ") == ["q1", "Q0", f"d{NEL}1", "2"]


@pytest.mark.parametrize("ch", BREAKS)
def test_trec_qrels(tmp_path, ch):
    p = write(tmp_path / "q.trec", f"q1 0 d2 0\nq1 0 d3 x\nq1 0 d{ch}1 1\n")
    with pytest.raises(InputError) as e:
        read_qrels(p)
    assert e.value.line == 2
    p = write(tmp_path / "q.trec", f"q1 0 d{ch}1 1\r\nq1 0 d2 0\r\n")
    want = {"q1": {"d2": 0}}
    if ch in "\x0c\x0b":  # ASCII whitespace separates fields, as in trec_eval; it ends no line
        with pytest.raises(InputError, match="5 columns") as e:
            read_qrels(p)
        assert e.value.line == 1
        return
    want["q1"][f"d{ch}1"] = 1
    assert read_qrels(p).as_dict() == want


@pytest.mark.parametrize("fast", [False, True])
def test_trec_run_general_and_fast_readers_agree(tmp_path, fast, monkeypatch):
    from rankgate.core.formats import trec_fast

    lines = "".join(f"q1 Q0 d{i}{NEL}x {i} {10 - i} tag\n" for i in range(5)) + "q2 Q0 e\u2028 1 1 tag\n"
    p = write(tmp_path / "r.trec", lines)
    q = read_qrels(write(tmp_path / "q.trec", f"q1 0 d1{NEL}x 1\nq2 0 e\u2028 1\n"))
    if fast:
        if not trec_fast.available():
            pytest.skip("pyarrow not installed")
        monkeypatch.setattr(trec_fast, "MIN_BYTES", 0)
        (run,) = trec_fast.lean_reader(str(p), None, q)
        from rankgate.core.engine import evaluate
        from rankgate.core.measures import parse_measures

        ms = parse_measures("P@2")
        s = evaluate(q, run, ms)
        assert run.qnames == ["q1", "q2"] and run.lines == 6
        assert [float(x) for x in s.values[ms[0]]] == [0.5, 0.5]
    else:
        (run,) = read_runs(p, catalog=q.catalog)
        assert run.ranking("q1") == [f"d{i}{NEL}x" for i in range(5)]
        assert run.ranking("q2") == ["e\u2028"]


def test_trec_run_bad_line_named_by_its_real_number(tmp_path):
    p = write(tmp_path / "r.trec", f"q1 Q0 a{NEL} 1 3 t\nq1 Q0 b\u2028 2 2 t\nq1 Q0 c 3 high t\n")
    with pytest.raises(InputError) as e:
        read_runs(p)
    assert e.value.line == 3 and "not a number" in e.value.what


def test_jsonl_judgments_reason_with_nel(tmp_path):
    p = write(tmp_path / "j.jsonl", f'{{"query": "q1", "doc": "d1", "grade": 2, "reason": "a{NEL}b\u2028c"}}\n'
              '{"query": "q1", "doc": "d2", "grade": 0}\n{"query": "q1", "doc": "d3", "grade": 1.5}\n')
    with pytest.raises(InputError) as e:
        read_qrels(p)
    assert e.value.line == 3
    p = write(tmp_path / "j.jsonl", f'{{"query": "q1", "doc": "d1", "grade": 2, "reason": "a{NEL}b"}}\n')
    assert read_qrels(p).details[("q1", "d1")].reason == f"a{NEL}b"


def test_json_qrels_and_runs_with_nel(tmp_path):
    q = read_qrels(write(tmp_path / "q.json", f'{{"q1": {{"d{NEL}": 1}}}}'))
    assert q.as_dict() == {"q1": {f"d{NEL}": 1}}
    (run,) = read_runs(write(tmp_path / "r.jsonl", f'{{"query": "q1", "ranking": ["d{NEL}", "e"]}}\n'
                             '{"query": "q2", "ranking": ["x"]}\n'))
    assert run.ranking("q1") == [f"d{NEL}", "e"]
    with pytest.raises(InputError) as e:
        read_runs(write(tmp_path / "r.jsonl", f'{{"query": "q{NEL}1", "ranking": ["d"]}}\n{{"query": 5}}\n'))
    assert e.value.line == 2


def test_beir_qrels(tmp_path):
    p = write(tmp_path / "q.tsv", f"query-id\tcorpus-id\tscore\nq1\td{NEL}1\t1\nq1\td2\t2\nq1\td3\n")
    with pytest.raises(InputError) as e:
        read_qrels(p)
    assert e.value.line == 4
    p = write(tmp_path / "q.tsv", f"query-id\tcorpus-id\tscore\r\nq1\td{NEL}1\t1\r\n")
    assert read_qrels(p).as_dict() == {"q1": {f"d{NEL}1": 1}}


@pytest.mark.parametrize("form", ["jsonl", "tsv", "trec"])
def test_queries(tmp_path, form):
    text = {"jsonl": f'{{"id": "q1", "text": "what{NEL} is\u2028 it"}}\n{{"id": "q2", "text": "two"}}\n',
            "tsv": f"q1\twhat{NEL} is\u2028 it\nq2\ttwo\n",
            "trec": f"<top>\n<num> Number: q1\n<title> what{NEL} is\u2028 it\n</top>\n\n"
                    "<top>\n<num> Number: q2\n<title> two\n</top>\n"}[form]
    qs = read_queries(write(tmp_path / f"queries.{form}", text))
    assert list(qs) == ["q1", "q2"]
    assert qs["q1"].text == f"what{NEL} is\u2028 it" and qs["q2"].text == "two"
    bad = {"jsonl": text + '{"id": "q1", "text": "again"}\n', "tsv": text + "q1\tagain\n",
           "trec": text + "\n<top>\n<num> Number: q1\n<title> again\n</top>\n"}[form]
    with pytest.raises(InputError, match="appears twice") as e:
        read_queries(write(tmp_path / f"bad.{form}", bad))
    assert e.value.line == {"jsonl": 3, "tsv": 3, "trec": 11}[form]


@pytest.mark.parametrize("form", ["jsonl", "tsv", "trec"])
def test_corpus(tmp_path, form):
    body = f"one{NEL}two\u2028three\x0cfour"
    text = {"jsonl": f'{{"docid": "d1", "text": "{body[:-5]}\\ffour"}}\n{{"docid": "d2", "text": "x"}}\n',
            "tsv": f"d1\t{body}\nd2\tx\n",
            "trec": f"<DOC>\n<DOCNO> d1 </DOCNO>\n<TEXT>\n{body}\n</TEXT>\n</DOC>\n"
                    "<DOC>\n<DOCNO> d2 </DOCNO>\n<TEXT>\nx\n</TEXT>\n</DOC>\n"}[form]
    p = write(tmp_path / f"corpus.{form}", text)
    docs = read_corpus(p)
    assert docs["d1"].text == body and docs["d2"].text == "x"
    gz = tmp_path / f"corpus.{form}.gz"
    gz.write_bytes(gzip.compress(p.read_bytes()))
    assert read_corpus(gz) == docs
    if form != "trec":
        bad = text + ('{"docid": "d3", "text": "unterminated}\n' if form == "jsonl" else "d3\n")
        with pytest.raises(InputError) as e:
            read_corpus(write(tmp_path / f"bad.{form}", bad))
        assert e.value.line == 3
