"""Red team on issue 35 (items 3-8) and issue 38: a hostile file's names and IDs, special files as paths,
the judge's overlap and the labelling budget at their edges. Each test names what happened before."""

import json
import os
import stat
import re
import xml.etree.ElementTree as ET

import pytest

from rankgate.cli import main
from tests.conftest import write

FORGED = re.compile(r"^\s*(::|##\[)", re.M)


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    cap = capsys.readouterr()
    return code, cap.out, cap.err


def evil_bench(tmp_path):
    """Query and document IDs that try a CI annotation, a terminal sequence and a bidi override."""
    qids = ["q\n::error::forged", "q\x1b[31mred", "q\u202eevil"]
    docs = ["d\n::warning::forged", "d\x1b[2J", "d3"]
    write(tmp_path / "qrels.jsonl", "".join(json.dumps({"query": q, "doc": d, "grade": (i + j) % 3}) + "\n"
                                            for j, q in enumerate(qids) for i, d in enumerate(docs)))
    write(tmp_path / "base.jsonl", "".join(json.dumps({"query": q, "ranking": docs}) + "\n" for q in qids))
    write(tmp_path / "cand.jsonl", "".join(json.dumps({"query": q, "ranking": docs[::-1]}) + "\n" for q in qids))
    return tmp_path


def test_junit_never_lets_an_id_start_a_line_of_its_own(tmp_path, capsys):
    """Before: the JUnit report kept a document ID's newline in <system-out> (a raw `::warning::forged` line,
    which a CI log printing the report reads as an annotation) and a query ID's as `&#10;` in a test name."""
    b = evil_bench(tmp_path)
    junit = tmp_path / "out.xml"
    code, out, err = run(capsys, "gate", "--k", "2", "--qrels", b / "qrels.jsonl", "--runs", f"base={b / 'base.jsonl'}",
                         "--runs", f"c\n::error::run={b / 'cand.jsonl'}", "--baseline", "base",
                         "--candidate", "c\n::error::run", "--junit", junit, "-o", tmp_path / "out.json")
    assert code in (0, 3), err
    text = junit.read_text(encoding="utf-8")
    assert not FORGED.search(text) and "\x1b" not in text and "\u202e" not in text, text
    root = ET.fromstring(text)  # what a JUnit reader sees: attributes decoded
    for el in root.iter():
        for value in [*el.attrib.values(), el.text or ""]:
            assert not FORGED.search(value) and "\x1b" not in value, (el.tag, value)
    names = [tc.get("name") for tc in root.iter("testcase")]
    assert "q\\x0a::error::forged" in names


@pytest.mark.slow
@pytest.mark.parametrize("flag", ["-o", "--markdown", "--junit", "--receipt"])
def test_an_output_fifo_is_refused_at_once_and_nothing_else_is_written(tmp_path, flag):
    """Before: `gate -o FIFO` (and --markdown, --junit, --receipt; compare's --markdown and --plot; labels
    export -o) waited forever for a reader; then, with a reader that holds the pipe open and stops reading, a
    gate could still hang after writing its other outputs. An output is a regular file (or a character device
    such as /dev/null): a named pipe is refused before anything is written, reader or none."""
    import subprocess
    import sys

    b = evil_bench(tmp_path)
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    others = {f: tmp_path / f"other{f}" for f in ("-o", "--markdown", "--junit", "--receipt") if f != flag}
    argv = [sys.executable, "-m", "rankgate", "gate", "--k", "2", "--qrels", str(b / "qrels.jsonl"),
            "--runs", str(b / "base.jsonl"), "--runs", str(b / "cand.jsonl"), "--baseline", "base",
            "--candidate", "cand", "--quiet", *[str(x) for f, p in others.items() for x in (f, p)]]
    fd = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)  # a reader that holds the pipe open and never reads
    try:
        p = subprocess.run([*argv, flag, str(fifo)], capture_output=True, text=True, timeout=60)
    finally:
        os.close(fd)
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "is a named pipe (FIFO)" in p.stderr, p.stderr
    assert "Traceback" not in p.stderr and not any(path.exists() for path in others.values())
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)  # left as it was
    p = subprocess.run([*argv, flag, os.devnull], capture_output=True, text=True, timeout=60)
    assert p.returncode in (0, 3), p.stderr  # a character device (/dev/null) is still written into


@pytest.mark.parametrize("command", ["status", "list"])
def test_a_missing_corpus_is_named_even_when_no_label_records_a_text(tmp_path, capsys, command):
    """Before: `labels status --corpus TYPO` (and `labels list --stale --corpus TYPO`) said "stale labels: 0 of 0
    checked" and exited 0 when no label had a text hash: a misspelt corpus looked like a clean one."""
    b = evil_bench(tmp_path)
    db = tmp_path / "ws.db"
    assert run(capsys, "labels", "import", "--db", db, b / "qrels.jsonl")[0] == 0
    extra = ["--stale"] if command == "list" else []
    for bad, why in ((tmp_path / "nope.jsonl", "no such file"), (tmp_path, "is a folder")):
        code, out, err = run(capsys, "labels", command, "--db", db, *extra, "--corpus", bad)
        assert code == 2 and why in err and "Traceback" not in err, (out, err)


@pytest.mark.slow
@pytest.mark.parametrize("command", ["trec_eval", "validate"])
def test_a_file_with_no_line_break_is_refused_without_reading_it_whole(tmp_path, capsys, command):
    """Before: a 4 GB file of NUL bytes (no line break) as qrels: `rankgate trec_eval` read it whole and decoded it
    (80 s, 8.4 GB) before saying "1 fields"; `validate` read it whole into the fast TREC reader (17 s, 4.2 GB)
    before the general reader refused it at line 1. Now both stop within the first MAX_LINE bytes."""
    import tracemalloc

    qrels = tmp_path / "qrels.txt"
    with open(qrels, "wb") as f:
        f.truncate(160 << 20)  # sparse: 160 MiB of NUL bytes that take no disk
    run_file = write(tmp_path / "run.txt", "q1 Q0 d1 1 3 t\n")
    argv = ["trec_eval", qrels, run_file] if command == "trec_eval" else ["validate", "--qrels", qrels, "--runs",
                                                                         run_file]
    tracemalloc.start()
    try:
        code, out, err = run(capsys, *argv)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert code == 2 and "qrels.txt:1:" in err and "Traceback" not in err, err
    assert peak < 100 << 20, f"{peak >> 20} MiB held to refuse line 1"


def test_a_qrels_name_swapped_for_a_pipe_after_its_stat_is_never_waited_on(tmp_path, monkeypatch):
    """Before: the fast JSONL reader checked the name with stat, then opened it with a plain open(): a name
    swapped for a FIFO in between (a symlink changed by another process) blocked the open forever."""
    import threading

    from rankgate.core.errors import InputError
    from rankgate.core.formats import jsonl_fast, trec_fast

    path = tmp_path / "qrels.jsonl"
    write(path, "".join(json.dumps({"query": "q1", "doc": f"d{i}", "grade": 1}) + "\n" for i in range(40000)))

    def swap():
        path.unlink()
        os.mkfifo(path)
        return True

    monkeypatch.setattr(trec_fast, "available", swap)
    result = []
    t = threading.Thread(target=lambda: result.append(_quietly(jsonl_fast.read_jsonl_qrels_fast, str(path))),
                         daemon=True)
    t.start()
    t.join(10)
    if t.is_alive():  # unblock the open that waits for a writer, so that the test run ends
        with open(path, "wb"):
            pass
        t.join(5)
        pytest.fail("the fast reader waited on a FIFO")
    assert result == [None] or isinstance(result[0], InputError)


def _quietly(fn, *args):
    try:
        return fn(*args)
    except Exception as e:  # noqa: BLE001 - the test looks at what came out
        return e


def _vote(judge, expert, **kw):
    from rankgate.core.judge_vote import judge_vote

    pairs = [("q", f"d{i}") for i in range(len(judge))]
    overlap = kw.pop("overlap", pairs)
    return judge_vote(dict(zip(pairs, judge)), overlap, dict(zip(pairs, expert)), unjudged=7, level=1,
                      min_kappa=kw.pop("min_kappa", 0.6), min_overlap=kw.pop("min_overlap", 50), **kw)


def test_a_kappa_exactly_at_the_bar_is_counted():
    """Before: 6 pairs both relevant, 3 and 3 disagreeing, 42 both not: kappa 3/5 exactly, computed from
    proportions as 0.5999999999999996, and the gate said "not counted: kappa 0.60 below 0.6"."""
    judge = [1] * 9 + [0] * 45
    expert = [1] * 6 + [0] * 3 + [1] * 3 + [0] * 42
    v = _vote(judge, expert)
    assert v.kappa == 0.6 and v.counted, v.line()
    assert "suggested labels counted: 7 (judge kappa 0.60 on 54 expert-checked pairs" in v.line()


def test_an_overlap_pair_listed_twice_counts_once():
    """Before: a suggestions journal listing an overlap pair twice (a repeated record) counted it twice towards
    min_overlap and in kappa: 2 agreeing pairs listed 25 times each made "kappa 1.00 on 50 pairs"."""
    pairs = [("q", "d0"), ("q", "d1")]
    v = _vote([1, 0], [1, 0], overlap=pairs * 25)
    assert v.checked == 2 and not v.counted and "2 expert-checked pairs, below 50" in v.line()


def test_all_same_grades_and_no_overlap_are_not_counted_and_say_why():
    v = _vote([1] * 60, [1] * 60)
    assert not v.counted and v.kappa is None and "kappa undefined on 60" in v.line()
    v = _vote([], [])
    assert not v.counted and "no expert-checked overlap" in v.line()


FLOOD_JUDGE = r'''
import json, sys
for line in sys.stdin:
    req = json.loads(line)
    sys.stdout.write("log\n" + "\n" * (8 << 20) + json.dumps({"id": 0, "grade": 0}) + "\n")
    print(json.dumps({"id": req["id"], "grade": 2, "reason": "ok"}), flush=True)
'''


@pytest.mark.slow
def test_a_judge_printing_millions_of_blank_lines_is_answered_in_time(tmp_path):
    """Before: each output line was cut off the buffer with a partition that copied the rest: a judge that
    printed 20 MB of blank lines before its answer was still being read at the 60 s timeout."""
    import sys
    import time

    from rankgate.core.judge import JudgeConfig, JudgeRequest, ask

    script = write(tmp_path / "judge.py", FLOOD_JUDGE)
    cfg = JudgeConfig(name="flood", command=(sys.executable, str(script)), timeout=60)
    t0 = time.monotonic()
    answers = list(ask(cfg, [JudgeRequest("q1", "d1"), JudgeRequest("q1", "d2")], [0, 1, 2, 3]))
    assert [a.grade for a in answers] == [2, 2], [a.error for a in answers]
    assert time.monotonic() - t0 < 30


def test_a_lone_cr_inside_a_run_line_is_refused_not_read_as_extra_columns(tmp_path, capsys):
    """Before: a run whose second line held a lone CR ("... t\\rq1 Q0 d3 3 1 t", mixed line ends) was read as one
    line of 12 columns: d3 silently dropped (validate: "ranks 2 documents"; score scored 2 of 3)."""
    q = write(tmp_path / "q.txt", "q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 1\n")
    r = write(tmp_path / "r.txt", b"q1 Q0 d1 1 3 t\r\nq1 Q0 d2 2 2 t\rq1 Q0 d3 3 1 t\n")
    code, out, err = run(capsys, "score", "--qrels", q, "--runs", r, "--k", "3")
    assert code == 2 and "r.txt:2: 12 columns, with a carriage return (CR) inside the line" in err, (out, err)


def test_a_budget_with_nothing_to_judge_says_so(tmp_path, capsys):
    """Before: with every document judged, `labels queue --budget 3` ended "once these 0 are judged ..."."""
    b = evil_bench(tmp_path)
    code, out, err = run(capsys, "labels", "queue", "--qrels", b / "qrels.jsonl", "--runs", b / "base.jsonl",
                         "--runs", b / "cand.jsonl", "--k", "2", "--baseline", "base", "--candidate", "cand",
                         "--budget", "3")
    assert code == 0 and "once these 0" not in out and "no judgment to list: the decision is certain" in out, out


@pytest.mark.parametrize("n", ["0", "-1"])
def test_a_budget_below_one_is_refused(tmp_path, capsys, n):
    b = evil_bench(tmp_path)
    code, out, err = run(capsys, "labels", "queue", "--qrels", b / "qrels.jsonl", "--runs", b / "base.jsonl",
                         "--runs", b / "cand.jsonl", "--k", "2", "--baseline", "base", "--candidate", "cand",
                         f"--budget={n}")
    assert code == 2 and "--budget: N must be at least 1" in err


@pytest.mark.parametrize("command", ["compare --markdown", "compare --plot", "labels export -o",
                                     "labels export QRELS -o", "labels export notes"])
def test_every_other_output_refuses_a_named_pipe_in_one_line(tmp_path, capsys, command):
    """compare's --markdown and --plot, `labels export -o` (a store's, a qrels file's, and the notes sidecar
    beside it): a named pipe held open by a reader that never reads is refused before anything is written."""
    b = evil_bench(tmp_path)
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    other = tmp_path / "other.md"
    qrels = write(tmp_path / "qrels.txt", "q1 Q0 d1 1\nq1 Q0 d2 0\n")
    if command.startswith("compare"):
        flag = command.split()[1]
        argv = ["compare", "--k", "2", "--qrels", b / "qrels.jsonl", "--runs", b / "base.jsonl", "--runs",
                b / "cand.jsonl", "--baseline", "base", "--candidate", "cand", flag, fifo,
                "--plot" if flag == "--markdown" else "--markdown", other]
    elif command == "labels export -o":
        db = tmp_path / "ws.json"
        assert run(capsys, "labels", "import", "--db", db, qrels)[0] == 0
        argv = ["labels", "export", "--db", db, "-o", fifo]
    else:
        from rankgate.core.model import Query
        from rankgate.tui.loader import Inputs
        from rankgate.tui.store_backend import StoreBackend

        backend = StoreBackend.open(Inputs(str(qrels)), None, str(qrels), "ana")  # the app's workspace
        backend.set_notes(Query("q1"), "a note")
        backend.close()
        if command == "labels export notes":  # the export itself is a file; its notes sidecar is the pipe
            os.rename(fifo, tmp_path / "mine.notes.jsonl")
            fifo, other = tmp_path / "mine.notes.jsonl", tmp_path / "mine.txt"
            argv = ["labels", "export", qrels, "-o", other]
        else:
            argv = ["labels", "export", qrels, "-o", fifo]
    fd = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)  # a reader that never reads
    try:
        code, out, err = run(capsys, *argv)
    finally:
        os.close(fd)
    assert code == 2 and err.count("\n") == 1 and "is a named pipe (FIFO)" in err and "Traceback" not in err, err
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and not other.exists()
