"""Query and corpus readers: a TREC topic without <title> takes its <desc>; a corpus ID given twice is refused."""

from __future__ import annotations

import pytest

from rankgate.core.errors import InputError
from rankgate.core.formats.corpus import read_corpus, read_queries


def test_a_trec_topic_without_a_title_takes_its_description(tmp_path):
    f = tmp_path / "topics.txt"
    f.write_text("<top>\n<num> Number: 7\n<desc> Description:\nhow to restore a backup\n</top>\n"
                 "<top>\n<num> Number: 8\n<title> dns ttl\n<desc> Description:\nwhy records linger\n</top>\n")
    q = read_queries(f)
    assert q["7"].text == "how to restore a backup"
    assert q["8"].text == "dns ttl" and "why records linger" in q["8"].notes


def test_an_xml_topic_without_query_or_title_takes_its_description(tmp_path):
    f = tmp_path / "topics.xml"
    f.write_text('<topics><topic number="3"><description>gpu memory errors</description></topic></topics>\n')
    assert read_queries(f)["3"].text == "gpu memory errors"


@pytest.mark.parametrize("name, body, line", [
    ("c.jsonl", '{"id": "a", "text": "one"}\n{"id": "b", "text": "two"}\n{"id": "a", "text": "three"}\n', 3),
    ("c.tsv", "a\tone\nb\ttwo\n\na\tthree\n", 4),
    ("c.trec", "<DOC>\n<DOCNO>a</DOCNO>\none\n</DOC>\n<DOC>\n<DOCNO>b</DOCNO>\n</DOC>\n"
               "<DOC>\n<DOCNO>a</DOCNO>\nthree\n</DOC>\n", 8),
])
def test_a_document_id_given_twice_is_refused_with_its_line(tmp_path, name, body, line):
    f = tmp_path / name
    f.write_text(body)
    with pytest.raises(InputError) as e:
        read_corpus(f)
    assert e.value.line == line and "'a' appears a second time" in str(e.value)
    assert set(read_corpus(f, wanted={"b"})) == {"b"}  # a duplicate the review does not show is read past
