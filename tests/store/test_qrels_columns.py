"""`Workspace.to_qrels` reads the labels now from the snapshot's columns where it can (store/labels.py
`labels_as_qrels`): the same qrels as the record-by-record `as_qrels`, whatever mix of imported, edited,
several-reviewer, adjudicated and removed pairs the store holds, before and after a fold."""

from __future__ import annotations

import json

from rankgate.core.model import Catalog
from rankgate.store import Workspace
from rankgate.store.labels import as_qrels

from .conftest import write


def _record_by_record(ws):
    queries, labels = ws._label_set(None)
    return as_qrels(str(ws.path), queries, labels, Catalog(), {"workspace": str(ws.path), "version": "unfrozen"})


def _same(a, b) -> None:
    from rankgate.tui.model import versions_by_query  # the app's count, from the columns before any dict is made

    assert versions_by_query(a.details) == versions_by_query(dict(b.details))
    assert a.catalog.queries.names == b.catalog.queries.names
    assert a.catalog.docs.names == b.catalog.docs.names
    for f in ("q", "doc", "grade"):
        x, y = getattr(a, f), getattr(b, f)
        assert x.dtype == y.dtype and x.tolist() == y.tolist(), f
    assert list(a.query_codes) == list(b.query_codes)
    assert dict(a.details) == dict(b.details) and len(a.details) == len(b.details)
    assert a.details.get(("q-none", "x")) is None
    assert a.meta == b.meta
    assert list(a.judgments()) == list(b.judgments())


def test_columns_and_records_give_the_same_qrels(tmp_path, db):
    rows = [{"query": f"q{i % 12}", "doc": f"d{i}", "grade": i % 4 - 1, "reason": f"r{i % 3}" if i % 2 else "",
             "collection_version": "" if i % 11 == 0 else "c1" if i % 5 else "c2", "reviewer": "ana" if i % 7 else "bo"}
            for i in range(240)]
    qrels = write(tmp_path / "qrels.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    ws = Workspace.open(db, reviewer="tester")
    ws.import_files([str(qrels)])
    assert ws._labels.raw  # queries kept as columns (the fast path is taken)
    _same(ws.to_qrels(Catalog()), _record_by_record(ws))
    ws.set_judgment("q1", "d1", 3, reason="mine")  # a second reviewer on a pair
    ws.set_judgment("q2", "d-new", 1, create_query=True)
    ws.remove_judgment("q2", "d-new")
    ws.set_judgment("q-empty", "d-x", 2, create_query=True)
    ws.remove_judgment("q-empty", "d-x")  # a query with no label left
    ws.adjudicate("q3", "d3", 0, "settled")
    ws.remove_judgment("q4", "d4", of_reviewer="ana")
    _same(ws.to_qrels(Catalog()), _record_by_record(ws))
    ws.checkpoint()
    ws.close()
    ws = Workspace.open(db, reviewer="tester")
    _same(ws.to_qrels(Catalog()), _record_by_record(ws))
    ws.close()


def test_one_collection_version_is_the_qrels_version(tmp_path, db):
    rows = [{"query": f"q{i % 3}", "doc": f"d{i}", "grade": 1, "collection_version": "v9"} for i in range(150)]
    ws = Workspace.open(db, reviewer="tester")
    ws.import_files([str(write(tmp_path / "q.jsonl", "".join(json.dumps(r) + "\n" for r in rows)))])
    got = ws.to_qrels(Catalog())
    assert got.meta["collection_version"] == "v9"
    _same(got, _record_by_record(ws))
    ws.close()


def test_a_malformed_column_is_named_as_a_read_of_the_query_names_it(tmp_path, db):
    import pytest

    from rankgate.store.storage import DamagedFile

    rows = [{"query": f"q{i % 3}", "doc": f"d{i}", "grade": 1} for i in range(150)]
    ws = Workspace.open(db, reviewer="tester")
    ws.import_files([str(write(tmp_path / "q.jsonl", "".join(json.dumps(r) + "\n" for r in rows)))])
    cols = ws._labels.columns_of("q1")
    cols["grade"] = ["2"] * cols["n"]  # a grade as text, as a damaged snapshot could hold
    with pytest.raises(DamagedFile, match="malformed judgment of query 'q1' \\(row 1\\)"):
        ws.to_qrels(Catalog())
    ws.close()
