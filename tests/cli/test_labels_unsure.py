"""`rankgate labels unsure`, `list --unsure`, `disagreements` and `queue` with unsure labels; `remove` of
one's own judgment only; history lines of imports."""

import json

import pytest

from tests.conftest import SAMPLES, write


@pytest.fixture
def db(tmp_path, cli):
    """q1: d1 (2) and d2 (0) imported from a file that names no reviewer, by tester."""
    db = tmp_path / "l.json"
    code, _, err = cli("labels", "import", "--db", db, write(tmp_path / "qrels.trec", "q1 0 d1 2\nq1 0 d2 0\n"))
    assert code == 0, err
    return db


def test_mark_list_and_clear_unsure(cli, db):
    code, out, _ = cli("labels", "unsure", "--db", db, "q1", "d1", "is this the current runbook?")
    assert code == 0 and out.startswith("q1 d1: marked unsure: is this the current runbook? (event #")
    code, out, _ = cli("labels", "unsure", "--db", db, "q1", "d1", "is this the current runbook?")
    assert code == 0 and "unchanged" in out
    code, out, _ = cli("labels", "list", "--db", db, "--unsure")
    assert out.splitlines() == [out.splitlines()[0]] and out.startswith("q1 d1 2 [file:qrels.trec, ")
    assert "[unsure: is this the current runbook?]" in out
    code, out, _ = cli("labels", "list", "--db", db, "--unsure", "--json")
    assert [(r["doc"], r["unsure"]) for r in map(json.loads, out.splitlines())] == [("d1", "is this the current "
                                                                                      "runbook?")]
    code, out, _ = cli("labels", "history", "--db", db, "q1", "d1")
    assert 'tester unsure q1 d1: unsure "is this the current runbook?" [file qrels.trec\'s judgment]' in out
    code, out, _ = cli("labels", "unsure", "--db", db, "q1", "d1", "--clear")
    assert code == 0 and "unsure mark cleared" in out
    assert cli("labels", "list", "--db", db, "--unsure")[1] == ""


@pytest.mark.parametrize("argv, what", [
    (["q1", "d1"], "give a NOTE"),
    (["q1", "d1", "  "], "give a NOTE"),
    (["q1", "d1", "note", "--clear"], "not both"),
    (["q1", "d2", "--clear"], "is not marked unsure"),
    (["q1", "d9", "note"], "is not judged"),
    (["q9", "d1", "note"], "unknown query 'q9'"),
])
def test_unsure_bad_input_is_one_line_and_changes_nothing(cli, db, argv, what):
    before = cli("labels", "history", "--db", db)[1]
    code, out, err = cli("labels", "unsure", "--db", db, *argv)
    assert code == 2 and what in err and err.count("\n") == 1 and "Traceback" not in err
    assert cli("labels", "history", "--db", db)[1] == before


def test_disagreements_list_unsure_labels_too(cli, db):
    cli("labels", "set", "--db", db, "--reviewer", "tomas", "q1", "d2", "1", "--reason", "a start")
    cli("labels", "unsure", "--db", db, "q1", "d1", "ask ops")
    cli("labels", "unsure", "--db", db, "--reviewer", "tomas", "q1", "d2", "v2 or v3?")
    code, out, _ = cli("labels", "disagreements", "--db", db)
    lines = out.splitlines()
    assert code == 0 and len(lines) == 2
    assert lines[0].startswith("q1 d2: file:qrels.trec 0") and lines[0].endswith("(unsure: v2 or v3?)")
    assert lines[1] == 'q1 d1: file:qrels.trec 2 "" -> unsure: ask ops'
    code, out, _ = cli("labels", "disagreements", "--db", db, "--json")
    rows = [json.loads(x) for x in out.splitlines()]
    assert [(r["doc"], r["unsure"]) for r in rows] == [("d2", "v2 or v3?"), ("d1", "ask ops")]


def test_remove_is_of_your_own_judgment(cli, db):
    code, _, err = cli("labels", "remove", "--db", db, "q1", "d1")
    assert code == 2 and "judged by file:qrels.trec, not by you (tester)" in err and "adjudicate instead" in err
    cli("labels", "set", "--db", db, "q1", "d1", "3", "--reason", "the answer")
    code, out, _ = cli("labels", "remove", "--db", db, "q1", "d1")
    assert code == 0 and out.startswith("q1 d1: your judgment removed (was 3;")
    code, out, _ = cli("labels", "list", "--db", db, "q1", "d1")
    assert out.startswith("q1 d1 2 [file:qrels.trec,")  # the file's judgment stands
    code, out, _ = cli("labels", "remove", "--db", db, "q1", "d1", "--of-reviewer", "file:qrels.trec")
    assert code == 0 and out.startswith("q1 d1: file:qrels.trec's judgment removed (was 2;")
    assert cli("labels", "list", "--db", db, "q1", "d1")[1] == ""


def test_history_credits_the_file_and_the_importer_apart(cli, db):
    code, out, _ = cli("labels", "history", "--db", db, "q1", "d1")
    assert "tester import q1 d1: - -> 2 (imported by tester, judged by file qrels.trec)" in out
    code, out, _ = cli("labels", "history", "--db", db, "q1", "d1", "--json")
    e = json.loads(out)
    assert (e["who"], e["after"]["reviewer"]) == ("tester", "file:qrels.trec")


def test_queue_puts_unsure_labels_of_the_top_k_first(cli, tmp_path):
    folder = SAMPLES / "ops-handbook"
    db = tmp_path / "ops.json"
    assert cli("labels", "import", "--db", db, folder / "judgments.jsonl", "--queries", folder / "queries.jsonl")[0] == 0
    code, out, _ = cli("labels", "queue", str(folder), "--db", db, "--json")
    plain = json.loads(out)
    assert plain["unsure"] == 0
    first = plain["items"][0]
    # a judged document in the baseline's top 5
    rows = [json.loads(x) for x in (folder / "runs" / "bm25-plain.jsonl").read_text().splitlines()]
    labels = {(j["query"], j["doc"]) for j in map(json.loads, (folder / "judgments.jsonl").read_text().splitlines())}
    q, d = next((r["query"], x["doc"]) for r in rows if "ranking" in r for x in r["ranking"][:5]
                if (r["query"], x["doc"]) in labels)
    assert cli("labels", "unsure", "--db", db, q, d, "two readings of the question")[0] == 0
    code, out, _ = cli("labels", "queue", str(folder), "--db", db, "--json")
    queue = json.loads(out)
    assert queue["total"] == plain["total"] + 1 and queue["unsure"] == 1
    top = queue["items"][0]
    assert (top["query"], top["doc"], top["unsure"], top["why"]) == (q, d, "two readings of the question",
                                                                      "unsure: two readings of the question")
    assert queue["items"][1]["doc"] == first["doc"] and queue["items"][1]["unsure"] == ""
    code, out, _ = cli("labels", "queue", str(folder), "--db", db, "--limit", "1")
    assert "unjudged documents and 1 labels marked unsure (first)" in out.splitlines()[0]
    assert out.splitlines()[1].endswith("unsure: two readings of the question")


def test_queue_next_does_not_skip_unsure_labels_as_judged():
    from rankgate.core.queue import QueueItem, ReviewQueue

    queue = ReviewQueue([QueueItem("q1", "d1", {"r": 2}, False, unsure="ask ops"),
                         QueueItem("q1", "d2", {"r": 1}, False)], k=5)
    judged = {("q1", "d1"), ("q1", "d2")}
    assert queue.next(judged=judged).doc == "d1"  # judged, but unsure: to be looked at again
    assert queue.next(after=("q1", "d1"), judged=judged) is None
    assert queue.unsure == 1 and queue.as_dict()["items"][0]["why"] == "unsure: ask ops"
