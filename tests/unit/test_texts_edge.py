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


_LINES = ['{"id": "q1", "text": "a"}', '{"id": "q1", "id": "q2"}', '{"a": {"b": 1, "b": 2}}', '\ufeff{"id": "q1"}',
          '{"id": ', '[1, 2]', '"text"', '{"id": "q\\ud800"}', '{"id": "q1", "tags": ["x", "y"], "weight": 2}',
          '{"x": ' * 3000 + '1' + '}' * 3000]


@pytest.mark.parametrize("raw", _LINES)
def test_a_query_line_reads_as_json_loads_with_the_duplicate_key_hook_reads_it(raw):
    """json_line's strict decoder (one per thread) gives what json.loads with a fresh hook a line gave:
    the same object, or the same InputError (path and line, message)."""
    import json

    from rankgate.core.formats.corpus import json_line
    from rankgate.core.formats.jsonfmt import _MAY_HOLD_SURROGATE, _no_duplicate_keys, refuse_surrogates

    def before(path, raw, lineno):  # the code json_line ran before
        try:
            obj = json.loads(raw, object_pairs_hook=_no_duplicate_keys(f"{path}:{lineno}"))
        except json.JSONDecodeError as e:
            raise InputError(path, f"invalid JSON: {e.msg} (column {e.colno})", line=lineno) from None
        except RecursionError:
            raise InputError(path, "JSON nested too deeply", line=lineno) from None
        if not isinstance(obj, dict):
            raise InputError(path, f"expected a JSON object on each line, found {type(obj).__name__}", line=lineno)
        if _MAY_HOLD_SURROGATE.search(raw):
            refuse_surrogates(obj, path, line=lineno)
        return obj

    got = []
    for read in (before, json_line):
        for lineno in (7, 8):  # twice: the decoder kept from the first call names the second line
            try:
                got.append(("ok", read("queries.jsonl", raw, lineno)))
            except InputError as e:
                got.append(("error", str(e), e.path, e.line))
    assert got[:2] == got[2:]
