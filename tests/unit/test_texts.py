"""Query files and corpora in the forms people have them: JSONL, TSV, TREC topics / <DOC>, BEIR; gzipped."""

import gzip
from pathlib import Path

import pytest

from rankgate.core.errors import InputError
from rankgate.core.formats.corpus import read_corpus, read_queries
from tests.conftest import CONFORMANCE, write

DL19 = CONFORMANCE / "trec-dl-2019-passage"

TOPICS = """<top>
<num> Number: 301
<title> International Organized Crime

<desc> Description:
Identify organizations that participate in international criminal activity.

<narr> Narrative:
A relevant document must as a minimum identify the organization.
</top>

<top>
<num> Number: 302 <title> Poliomyelitis and Post-Polio
</top>
"""

WEB_TOPICS = """<webtrack2013>
<topic number="201" type="single">
  <query>raspberry pi</query>
  <description>What is a raspberry pi?</description>
</topic>
<topic number="202" type="faceted">
  <query>uss carl vinson</query>
</topic>
</webtrack2013>
"""


def gz(path: Path) -> Path:
    out = path.with_name(path.name + ".gz")
    out.write_bytes(gzip.compress(path.read_bytes()))
    return out


def test_trec_topics(tmp_path):
    qs = read_queries(write(tmp_path / "topics.301-302", TOPICS))
    assert list(qs) == ["301", "302"]
    assert qs["301"].text == "International Organized Crime"
    assert qs["301"].notes.startswith("Identify organizations") and "as a minimum" in qs["301"].notes
    assert qs["302"].text == "Poliomyelitis and Post-Polio"
    web = read_queries(write(tmp_path / "web.xml", WEB_TOPICS))
    assert {q: (v.text, v.notes) for q, v in web.items()} == {
        "201": ("raspberry pi", "What is a raspberry pi?"), "202": ("uss carl vinson", "")}


def test_trec_topic_without_number_is_named(tmp_path):
    with pytest.raises(InputError, match="without a <num>") as e:
        read_queries(write(tmp_path / "t", "\n\n<top>\n<title> x\n</top>\n"))
    assert e.value.line == 3


def test_beir_queries_and_corpus(tmp_path):
    qs = read_queries(write(tmp_path / "queries.jsonl",
                            '{"_id": "q1", "text": "what is rankgate", "metadata": {}}\n'
                            '{"_id": "q2", "text": "second", "metadata": {"x": 1}}\n'))
    assert {q: v.text for q, v in qs.items()} == {"q1": "what is rankgate", "q2": "second"}
    docs = read_corpus(write(tmp_path / "corpus.jsonl",
                             '{"_id": "d1", "title": "Title", "text": "Body", "metadata": {}}\n'
                             '{"_id": "d2", "title": "", "text": "Two"}\n'))
    assert docs["d1"].title == "Title" and docs["d1"].text == "Body" and docs["d2"].text == "Two"


def test_query_and_corpus_keys(tmp_path):
    qs = read_queries(write(tmp_path / "q.jsonl", '{"query_id": "1", "query": "text one"}\n'
                            '{"qid": 2, "text": "text two"}\n'))
    assert {q: v.text for q, v in qs.items()} == {"1": "text one", "2": "text two"}
    docs = read_corpus(write(tmp_path / "c.jsonl", '{"id": "a", "contents": "pyserini"}\n'
                             '{"docid": 7, "text": "numeric id"}\n'))
    assert docs["a"].text == "pyserini" and docs["7"].text == "numeric id"


def test_tsv_corpus_columns(tmp_path):
    docs = read_corpus(write(tmp_path / "collection.tsv", "0\tpassage zero\n1\tTitle one\tbody one\n"
                             "D2\thttp://x\tTitle two\tbody two\n"))
    assert docs["0"].text == "passage zero" and docs["0"].title == ""
    assert (docs["1"].title, docs["1"].text) == ("Title one", "body one")
    assert (docs["D2"].title, docs["D2"].text) == ("Title two", "body two")


def test_trec_doc_corpus(tmp_path):
    text = ("<DOC>\n<DOCNO> FT911-1 </DOCNO>\n<HEADLINE>A <i>headline</i></HEADLINE>\n<TEXT>\nFirst part.\n"
            "</TEXT>\n<TEXT>Second.</TEXT>\n</DOC>\n<DOC><DOCNO>X2</DOCNO>no text tags</DOC>\n")
    docs = read_corpus(write(tmp_path / "docs.trec", text))
    assert docs["FT911-1"].title == "A headline"
    assert "First part." in docs["FT911-1"].text and "Second." in docs["FT911-1"].text
    assert docs["X2"].text == "no text tags"
    with pytest.raises(InputError, match="without a <DOCNO>") as e:
        read_corpus(write(tmp_path / "bad.trec", text + "\n<DOC>\n<TEXT>x</TEXT></DOC>\n"))
    assert e.value.line == 11


@pytest.mark.parametrize("name,text", [("q.jsonl", '{"id": "q1", "text": "t"}\n'), ("q.tsv", "q1\tt\n"),
                                       ("q.trec", "<top><num> Number: q1 <title> t </top>\n")])
def test_gzipped_query_files(tmp_path, name, text):
    p = write(tmp_path / name, text)
    assert read_queries(gz(p))["q1"].text == "t"


def test_wanted_documents_only(tmp_path):
    lines = "".join(f'{{"docid": "d{i}", "text": "text {i}"}}\n' for i in range(100))
    lines += '{"meta": {"id": "x"}, "docid": "d100", "text": "two ids on a line"}\n'
    p = write(tmp_path / "c.jsonl", lines)
    got = read_corpus(p, wanted={"d3", "d50", "d100", "missing"})
    assert sorted(got) == ["d100", "d3", "d50"]
    seen = []
    read_corpus(p, progress=lambda done, total: seen.append((done, total)))
    assert seen[-1][0] == seen[-1][1] == p.stat().st_size


def test_a_bad_corpus_line_is_named(tmp_path):
    with pytest.raises(InputError, match="docid") as e:
        read_corpus(write(tmp_path / "c.jsonl", '{"docid": "a", "text": "x"}\n\n{"text": "no id"}\n'))
    assert e.value.line == 3


@pytest.mark.skipif(not DL19.is_dir(), reason=f"no DL19 data at {DL19} (RANKGATE_CONFORMANCE names another place)")
def test_dl19_files_as_they_are():
    qs = read_queries(DL19 / "topics.dl19-passage.tsv")
    assert qs["19335"].text == "anthropological definition of environment"
    (passages,) = DL19.glob("passages*.jsonl.gz")
    docs = read_corpus(passages)
    assert len(docs) > 14000
    assert sum("\x85" in d.text for d in docs.values()) >= 1
