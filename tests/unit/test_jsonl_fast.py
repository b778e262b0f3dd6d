"""The fast JSONL qrels reader (core/formats/jsonl_fast.py) gives what the general reader gives, and
leaves every file it does not take, good or bad, to the general reader (which names any fault)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from rankgate.core.errors import InputError
from rankgate.core.formats import jsonl_fast, read_qrels
from rankgate.core.formats.jsonfmt import qrels_from_jsonl
from rankgate.core.formats.textio import iter_lines


@pytest.fixture(autouse=True)
def fast_path_for_small_files(monkeypatch):
    monkeypatch.setattr(jsonl_fast, "MIN_BYTES", 0)
    monkeypatch.setenv("RANKGATE_FAST", "1")


def _rows(n: int = 60) -> list[dict]:
    rows = []
    for i in range(n):
        r = {"query": f"q{i % 7}", "doc": f"d{i}", "grade": i % 5 - 1}
        if i % 3:
            r["reason"] = f"reason {i % 4} é \u2028 \\ \" tab\\t"
        if i % 4 == 0:
            r["collection_version"] = "c1"
        if i % 5 == 0:
            r["reviewer"] = None if i % 10 else "ana"
        rows.append(r)
    return rows


def _write(path, rows, extra: str = "") -> str:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows) + extra, encoding="utf-8")
    return str(path)


def _same(a, b) -> None:
    assert a.catalog.queries.names == b.catalog.queries.names and a.catalog.docs.names == b.catalog.docs.names
    assert a.q.tolist() == b.q.tolist() and a.doc.tolist() == b.doc.tolist() and a.grade.tolist() == b.grade.tolist()
    assert (a.q.dtype, a.doc.dtype, a.grade.dtype) == (b.q.dtype, b.doc.dtype, b.grade.dtype)
    assert (a.query_codes, a.details, a.meta, a.format) == (b.query_codes, b.details, b.meta, b.format)


def test_the_fast_reader_gives_what_the_general_reader_gives(tmp_path):
    path = _write(tmp_path / "q.jsonl", _rows())
    fast = jsonl_fast.read_jsonl_qrels_fast(path)
    assert fast is not None
    _same(fast, qrels_from_jsonl(path, iter_lines(path)))
    _same(read_qrels(path), fast)


def test_the_fast_reader_imports_neither_pandas_nor_pyarrow_compute(tmp_path):
    path = _write(tmp_path / "q.jsonl", _rows())
    code = ("import sys\nfrom rankgate.core.formats import jsonl_fast\njsonl_fast.MIN_BYTES = 0\n"
            "assert jsonl_fast.read_jsonl_qrels_fast(sys.argv[1]) is not None\n"
            "print(sorted(m for m in ('pandas', 'pyarrow.compute') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code, path], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


ODD = {  # text added as the last line -> taken by the general reader (None: it reads the file fine)
    "meta line": '{"meta": {"collection_version": "c2"}}\n',
    "another key": '{"query": "q1", "doc": "x", "grade": 1, "needs_review": true}\n',
    "blank line": "\n",
    "two objects on a line": '{"query": "q1", "doc": "x", "grade": 1}{"query": "q1", "doc": "y", "grade": 1}\n',
    "float grade": '{"query": "q1", "doc": "x", "grade": 1.0}\n',
    "string grade": '{"query": "q1", "doc": "x", "grade": "1"}\n',
    "bool grade": '{"query": "q1", "doc": "x", "grade": true}\n',
    "grade out of range": '{"query": "q1", "doc": "x", "grade": 9007199254740993}\n',
    "no grade": '{"query": "q1", "doc": "x"}\n',
    "empty doc": '{"query": "q1", "doc": "", "grade": 1}\n',
    "number query": '{"query": 5, "doc": "x", "grade": 1}\n',
    "pair twice": '{"query": "q1", "doc": "d1", "grade": 1}\n',
    "duplicate key": '{"query": "q1", "doc": "x", "grade": 1, "grade": 2}\n',
    "lone surrogate": '{"query": "q1", "doc": "x\\ud800", "grade": 1}\n',
    "control character": '{"query": "q1", "doc": "x\ty", "grade": 1}\n',
    "an array": "[1, 2]\n",
    "cut short": '{"query": "q1", "doc": "x", "gra',
}


@pytest.mark.parametrize("case", sorted(ODD))
def test_an_odd_file_goes_to_the_general_reader_with_the_same_outcome(tmp_path, case, monkeypatch):
    path = _write(tmp_path / "q.jsonl", _rows(), ODD[case])
    assert jsonl_fast.read_jsonl_qrels_fast(path) is None
    try:
        want = qrels_from_jsonl(path, iter_lines(path))
    except InputError as e:
        with pytest.raises(InputError) as got:
            read_qrels(path)
        assert str(got.value) == str(e)
    else:
        _same(read_qrels(path), want)


def test_a_gzipped_or_small_file_is_not_taken(tmp_path, monkeypatch):
    import gzip

    path = tmp_path / "q.jsonl.gz"
    path.write_bytes(gzip.compress(b"".join(json.dumps(r).encode() + b"\n" for r in _rows())))
    assert jsonl_fast.read_jsonl_qrels_fast(str(path)) is None
    monkeypatch.setattr(jsonl_fast, "MIN_BYTES", 1 << 20)
    assert jsonl_fast.read_jsonl_qrels_fast(_write(tmp_path / "q.jsonl", _rows())) is None


def test_a_line_longer_than_a_block_goes_to_the_general_reader(tmp_path, monkeypatch):
    rows = _rows()
    rows[5]["reason"] = "long " * 100
    path = _write(tmp_path / "q.jsonl", rows)
    monkeypatch.setattr(jsonl_fast, "BLOCK", 256)
    assert jsonl_fast.read_jsonl_qrels_fast(path) is None
    _same(read_qrels(path), qrels_from_jsonl(path, iter_lines(path)))
    monkeypatch.setattr(jsonl_fast, "BLOCK", 1 << 20)
    assert jsonl_fast.read_jsonl_qrels_fast(path) is not None
