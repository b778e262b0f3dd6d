"""Label migration after rechunking: the map, the plan, and `Workspace.migrate` (a new version, carried labels
flagged, nothing carried silently)."""

from __future__ import annotations

import json

import pytest

from rankgate.core.errors import InputError
from rankgate.core.migrate import parse_map, plan, read_map
from rankgate.store.workspace import Workspace

from .conftest import labels_of, write


# --------------------------------------------------------------------------- the map


def test_the_map_reads_splits_comments_and_crlf(tmp_path):
    m = read_map(write(tmp_path / "m.tsv", "# old\tnew\r\na-01\ta-01a\r\na-01\ta-01b\n\nb-01\tab-01\n"
                       "c-01\tab-01\na-01\ta-01a\n"))
    assert m.targets == {"a-01": ("a-01a", "a-01b"), "b-01": ("ab-01",), "c-01": ("ab-01",)}
    assert (len(m), m.lines) == (3, 5) and "a-01" in m


@pytest.mark.parametrize("text,line,what", [
    ("a\tb\nno tab here\n", 2, "found no TAB"),
    ("a\tb\tc\n", 1, "3 TAB-separated fields"),
    ("a\t\n", 1, "empty new ID"),
    ("\tb\n", 1, "empty old ID"),
    ("a \tb\n", 1, "surrounding spaces"),
])
def test_a_malformed_map_line_is_one_error_naming_file_and_line(tmp_path, text, line, what):
    path = write(tmp_path / "m.tsv", text)
    with pytest.raises(InputError, match=what) as e:
        read_map(path)
    assert (e.value.path, e.value.line) == (str(path), line)
    assert str(e.value).startswith(f"{path}:{line}: ") and "\n" not in str(e.value)


def test_an_empty_or_missing_map(tmp_path):
    with pytest.raises(InputError, match="no mappings"):
        parse_map("# nothing\n\n", "m.tsv")
    with pytest.raises(InputError, match="no such file"):
        read_map(tmp_path / "missing.tsv")
    with pytest.raises(InputError, match=r"m.tsv:2: invalid UTF-8"):
        read_map(write(tmp_path / "m.tsv", b"a\tb\n\xff\tc\n"))


def test_the_plan_splits_merges_and_reports_what_the_map_does_not_name():
    m = parse_map("a\ta1\na\ta2\nb\tab\nc\tab\nd\td\n")
    rows = [("q", "a", "ana", {"grade": 1}), ("q", "b", "ana", {"grade": 0}), ("q", "c", "ana", {"grade": 2}),
            ("q", "d", "ana", {"grade": 1}), ("q", "e", "ana", {"grade": 3}), ("q", "c", None, {"grade": 1})]
    p = plan(rows, m)
    got = {(c.doc, c.key): (c.state["grade"], c.sources) for c in p.carried}
    assert got == {("a1", "ana"): (1, ["a"]), ("a2", "ana"): (1, ["a"]), ("ab", "ana"): (2, ["b", "c"]),
                   ("d", "ana"): (1, ["d"]), ("ab", None): (1, ["c"])}
    assert [(c.doc, c.key) for c in p.merged] == [("ab", "ana")]
    assert p.retired == [("q", "a", "ana"), ("q", "b", "ana"), ("q", "c", "ana"), ("q", "c", None)]  # not d: d -> d
    assert p.unmapped == [("q", "e", "ana")]
    dropped = plan(rows, m, drop_unmapped=True)
    assert ("q", "e", "ana") in dropped.retired and dropped.unmapped == [("q", "e", "ana")]
    # an old ID landing on a document that is not in the map but judged: the two merge
    p = plan([("q", "x", "ana", {"grade": 0}), ("q", "y", "ana", {"grade": 2})], parse_map("x\ty\n"))
    assert [(c.doc, c.state["grade"], c.sources) for c in p.carried] == [("y", 2, ["x", "y"])]


# --------------------------------------------------------------------------- the workspace


@pytest.fixture
def judged(ws):
    """q1: d1 (ana 2, bo 1, adjudicated 2 by cy), d2 (ana 0), d3 (ana 1), d4 (bo 2); q2: d1 (ana 1)."""
    ws.set_judgment("q1", "d1", 2, reason="steps", reviewer="ana", create_query=True)
    ws.set_judgment("q1", "d1", 1, reason="some", reviewer="bo")
    ws.adjudicate("q1", "d1", 2, "the steps are all there", reviewer="cy")
    ws.set_judgment("q1", "d2", 0, reason="other topic", reviewer="ana")
    ws.set_judgment("q1", "d3", 1, reason="half", reviewer="ana")
    ws.set_judgment("q1", "d4", 2, reason="all", reviewer="bo")
    ws.set_judgment("q2", "d1", 1, reason="mentions", reviewer="ana", create_query=True)
    return ws


MAP = "d1\td1-a\nd1\td1-b\nd2\td23\nd3\td23\n"


def test_a_migration_makes_a_new_version_with_the_carried_labels_flagged(judged, tmp_path):
    """Done when: a migration produces a new version with the carried labels flagged."""
    ws = judged
    old_hash = ws.content_hash()
    report = ws.migrate(write(tmp_path / "map.tsv", MAP), version="chunks-2")
    assert (report.before, report.version) == ("chunks-2-before", "chunks-2")
    before, after = {v.name: v for v in ws.versions()}.values()
    assert before.content_hash == old_hash and after.content_hash == ws.content_hash()
    assert ws.export("trec", version="chunks-2").content_hash == after.content_hash  # rebuilt from history
    assert ws.export("trec", version="chunks-2-before").content_hash == old_hash
    # carried: every reviewer's judgment and the adjudication, to each new ID; the old IDs retired
    labels = {(j.query, j.doc): j for j in ws.judgments()}
    assert sorted(labels) == [("q1", "d1-a"), ("q1", "d1-b"), ("q1", "d23"), ("q1", "d4"), ("q2", "d1-a"),
                              ("q2", "d1-b")]
    split = labels[("q1", "d1-a")]
    assert (split.grade, split.reached, split.needs_review, split.migrated_from) == (2, "adjudicated", True,
                                                                                   ("d1",))
    assert [(j.reviewer, j.grade, j.needs_review) for j in ws.reviews("q1", "d1-b")] == [("ana", 2, True),
                                                                                          ("bo", 1, True)]
    merged = labels[("q1", "d23")]  # d2 (0) and d3 (1), both ana's: the higher grade, from both
    assert (merged.grade, merged.reason, merged.migrated_from) == (1, "half", ("d2", "d3"))
    assert not labels[("q1", "d4")].needs_review  # not in the map: left as it was, and reported
    assert report.unmapped == [{"query": "q1", "doc": "d4", "reviewers": ["bo"]}]
    assert [m["doc"] for m in report.merged] == ["d23"] and report.retired == 6 and report.flagged == 5
    # the flag shows in exports and history
    out = ws.export("jsonl")
    lines = [json.loads(x) for x in out.text.splitlines()]
    assert lines[0]["meta"]["needs_review"] == 5 and out.needs_review == 5
    assert all(x.get("needs_review") for x in lines[1:] if x["doc"] != "d4")
    assert any("still need review" in n for n in out.notes)
    events = ws.history("q1", "d23")
    assert [(e.kind, e.scope) for e in events] == [("migrate", "reviewer")]
    assert "[needs review] (from d2, d3)" in events[0].describe() and events[0].why.startswith("migrate map.tsv")
    gone = ws.history("q1", "d2")[-1]
    assert (gone.kind, gone.why) == ("remove", "migrate map.tsv: d2 -> d23")
    assert ws.diff("chunks-2-before", "chunks-2").as_dict()["removed"][0] == {"query": "q1", "doc": "d1",
                                                                               "grade": 2}


def test_flags_clear_by_a_reviewers_new_look_or_a_confirmation(judged, tmp_path):
    ws = judged
    ws.migrate(write(tmp_path / "map.tsv", MAP), version="v2")
    e = ws.set_judgment("q1", "d23", 1, reviewer="ana")  # same grade and reason: a confirmation
    assert e.kind == "confirm" and "needs_review" not in e.after
    assert not ws.judgment("q1", "d23").needs_review
    events = ws.confirm("q1", "d1-a", why="checked the new chunk")
    assert [(e.kind, e.scope, e.reviewer) for e in events] == [("confirm", "reviewer", "ana"),
                                                               ("confirm", "reviewer", "bo"),
                                                               ("confirm", "adjudication", "cy")]
    assert not ws.judgment("q1", "d1-a").needs_review and ws.confirm("q1", "d1-a") == []
    assert ws.judgment("q1", "d1-b").needs_review and ws.stats()["needs_review"] == 3
    v = ws.freeze("v3")
    assert ws.export("jsonl", version="v3").content_hash == v.content_hash


def test_nothing_changes_on_a_bad_map_a_taken_name_or_a_dry_run(judged, tmp_path):
    ws = judged
    before = (labels_of(ws), len(ws.history()), ws.versions())
    with pytest.raises(InputError, match=r"bad.tsv:2: expected OLD_ID<TAB>NEW_ID"):
        ws.migrate(write(tmp_path / "bad.tsv", "d1\td1-a\nd2 d23\n"))
    with pytest.raises(InputError, match="none of its old IDs is a judged document"):
        ws.migrate(write(tmp_path / "other.tsv", "x\ty\n"))
    ws.freeze("taken")
    before = (labels_of(ws), len(ws.history()), ws.versions())
    with pytest.raises(InputError, match="version 'taken' exists already"):
        ws.migrate(write(tmp_path / "map.tsv", MAP), version="taken")
    dry = ws.migrate(tmp_path / "map.tsv", version="v2", dry_run=True)
    assert dry.dry_run and dry.flagged == 5
    assert (labels_of(ws), len(ws.history()), ws.versions()) == before
    # the latest version holds the labels already: it is the "before"
    report = ws.migrate(tmp_path / "map.tsv", version="v2", drop_unmapped=True, collection_version="corpus-2")
    assert report.before == "taken" and [v.name for v in ws.versions()] == ["taken", "v2"]
    assert ("q1", "d4") not in labels_of(ws) and ws.collection_version == "corpus-2"


def test_a_migration_survives_reopen(db, tmp_path):
    with Workspace.open(db, reviewer="ana") as ws:
        ws.set_judgment("q1", "d1", 2, reason="r", create_query=True)
        ws.set_judgment("q1", "d1", 0, reason="s", reviewer="bo")
        ws.migrate(write(tmp_path / "map.tsv", "d1\tn1\n"), version="v2")
        want = [j.as_dict() for j in ws.reviews(include_removed=True)], labels_of(ws), ws.judgment("q1", "n1")
    with Workspace.open(db, readonly=True) as ws:
        assert ([j.as_dict() for j in ws.reviews(include_removed=True)], labels_of(ws),
                ws.judgment("q1", "n1")) == want
        assert want[2].grade == 0 and want[2].reached == "latest"  # bo's judgment is still the later one
        assert ws.export("trec", version="v2").content_hash == ws.versions()[-1].content_hash
