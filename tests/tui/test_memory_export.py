"""The app's export with no label store (labels in memory): written whole or not at all, a named pipe refused."""

from __future__ import annotations

import os
import threading

import pytest

from rankgate.core.model import Catalog
from rankgate.core.errors import InputError
from rankgate.core.formats import read_qrels
from rankgate.tui.labels import LabelBook, MemoryBackend

from ..conftest import write


def _book(tmp_path):
    qrels_file = write(tmp_path / "qrels.txt", "q1 0 d1 2\nq1 0 d2 0\nq2 0 d9 1\n")
    qrels = read_qrels(qrels_file, "auto", Catalog())
    return LabelBook(MemoryBackend(qrels, "v1", "ana"), qrels)


def test_a_memory_export_writes_every_label_in_trec_and_jsonl(tmp_path):
    book = _book(tmp_path)
    done = book.export(tmp_path / "out.txt", "trec")
    assert done.labels == 3
    assert sorted((tmp_path / "out.txt").read_text().splitlines()) == ["q1 0 d1 2", "q1 0 d2 0", "q2 0 d9 1"]
    book.export(tmp_path / "out.jsonl", "jsonl")
    assert (tmp_path / "out.jsonl").read_text().count('"query"') == 3


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_memory_export_into_a_named_pipe_is_refused_at_once(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    result = {}

    def export():
        try:
            _book(tmp_path).export(fifo, "trec")
            result["done"] = True
        except InputError as e:
            result["refused"] = str(e)

    t = threading.Thread(target=export, daemon=True)
    t.start()
    t.join(10)
    if t.is_alive():  # unblock the writer so the test run ends, then fail
        os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))
        pytest.fail("the export waited on a named pipe with no reader")
    assert "refused" in result and "pipe" in result["refused"].lower()
