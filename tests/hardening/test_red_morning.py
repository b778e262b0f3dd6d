"""Red team on the morning's merges (journal v3, FIFO outputs refused, mixed-whitespace qrels, the store's
new checks). Each test names what happened before its fix."""

import json
import os
import stat
import subprocess
import sys

import pytest

from tests.hardening.test_red_input import evil_bench

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo") or not os.path.exists("/dev/fd"),
                                reason="no named pipes or /dev/fd here")


def _gate(b, *extra):
    return [sys.executable, "-m", "rankgate", "gate", "--k", "2", "--qrels", str(b / "qrels.jsonl"),
            "--runs", str(b / "base.jsonl"), "--runs", str(b / "cand.jsonl"), "--baseline", "base",
            "--candidate", "cand", "--quiet", *extra]


@pytest.mark.parametrize("flag", ["-o", "--junit"])
def test_an_output_to_dev_stdout_piped_to_a_reader_is_written_again(tmp_path, flag):
    """Before: `rankgate gate -o /dev/stdout | jq` (a CI habit) failed with "/dev/stdout: is a named pipe
    (FIFO)", exit 2, since outputs refused every pipe. A shell's pipe (no name in any folder) has its reader
    already: it is written into, as before; a named pipe made by mkfifo is still refused."""
    b = evil_bench(tmp_path)
    p = subprocess.run(_gate(b, flag, "/dev/stdout"), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=60)
    assert p.returncode in (0, 3) and "error" not in p.stderr, p.stderr
    if flag == "-o":
        assert json.loads(p.stdout)["baseline"] == "base"
    else:
        assert p.stdout.startswith("<?xml")
    fifo = tmp_path / "named.fifo"
    os.mkfifo(fifo)
    (tmp_path / "link").symlink_to(fifo)
    for path in (fifo, tmp_path / "link"):
        p = subprocess.run(_gate(b, flag, str(path)), capture_output=True, text=True, timeout=60)
        assert p.returncode == 2 and "is a named pipe (FIFO)" in p.stderr and p.stdout == "", p.stderr
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_the_store_never_takes_a_shell_pipe_for_its_own_file(tmp_path):
    """The store's own files (not outputs) refuse every pipe, the shell's too."""
    from rankgate.core.errors import InputError
    from rankgate.store.storage import atomic_write

    r, w = os.pipe()
    try:
        with pytest.raises(InputError, match="named pipe"):
            atomic_write(f"/dev/fd/{w}", b"x")
    finally:
        os.close(r)
        os.close(w)


def _raw_workspace(tmp_path):
    """The app's workspace of a qrels file opened on its own, with one unexported edit and a query's note."""
    from rankgate.store import paths, sync
    from rankgate.store.workspace import Workspace

    qrels = tmp_path / "q.txt"
    qrels.write_text("1 0 a 1\n1 0 b 0\n2 0 c 2\n", encoding="utf-8")
    ws = Workspace.open(paths.qrels_workspace_path(qrels), reviewer="ana")
    imported = ws.import_files([str(qrels)], why=f"{sync.FIRST_REVIEW}{qrels}")
    sync.follow_file(ws, qrels, imported=imported, own=True)
    ws.set_judgment("1", "b", 3, reason="answers it")
    ws.set_notes("1", "ask the author")
    return ws, qrels


@pytest.mark.parametrize("to", [os.devnull, "shell pipe"])
def test_an_export_into_dev_null_or_a_pipe_writes_no_sidecar_into_dev_and_leaves_edits_unexported(
        tmp_path, to):
    """Before: `labels export q.txt -o /dev/null` (or -o /dev/stdout) with a query's notes wrote the notes
    sidecar into /dev (/dev/null.notes.jsonl as root; a permission error after the export for anyone else), and
    recorded the export, so `labels status q.txt` and the app's quit dialog said 0 unexported edits while the
    labels were kept nowhere."""
    from rankgate.store import sync

    ws, qrels = _raw_workspace(tmp_path)
    r, w = os.pipe()
    target = os.devnull if to == os.devnull else f"/dev/fd/{w}"
    sidecar = os.devnull + ".notes.jsonl"
    existed = os.path.exists(sidecar)
    try:
        assert sync.raw_unexported(ws, qrels) == 1
        out, _, notes = sync.export_reviewed(ws, qrels, target)
        assert notes is None and any("notes of 1 query not written" in n for n in out.notes), out.notes
        assert existed or not os.path.exists(sidecar)
        assert not any(p.name.endswith(".notes.jsonl") for p in tmp_path.iterdir())
        assert sync.raw_unexported(ws, qrels) == 1  # still to export: /dev/null keeps nothing
        out, path, notes = sync.export_reviewed(ws, qrels)  # a file: written, its sidecar beside it, recorded
        assert notes is not None and notes.exists() and sync.raw_unexported(ws, qrels) == 0
    finally:
        if not existed and os.path.exists(sidecar):
            os.unlink(sidecar)
        os.close(r)
        os.close(w)
        ws.close()


@pytest.mark.parametrize("text, expected", [
    ("1\t0 d1 1 extra\n1 0 d2 0 x\n", "five.txt:1: 5 columns, expected 4: query iteration document grade"),
    ("1\t0 d1\n1 0 d2\n", "five.txt:1: 3 columns, expected 4: query iteration document grade"),
    ("1\tQ0 d1 1\n1\tQ0 d2 x\n", "five.txt:2: grade 'x' is not an integer"),
])
def test_qrels_with_a_tab_after_the_query_and_a_bad_line_are_refused_as_qrels(tmp_path, capsys, text, expected):
    """Before: `labels import` took these for a queries file (the first line has one tab) and refused them as
    one (`five.txt:2: expected 'query-id<TAB>text' ...`, `query '1' appears twice`), though trec_eval reads them
    as qrels; the qrels reader's hint then said to give them with --queries. Now: the qrels' own error."""
    from rankgate.cli import main

    path = tmp_path / "five.txt"
    path.write_text(text, encoding="utf-8")
    code = main(["labels", "import", "--db", str(tmp_path / "w.json"), str(path)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and expected in err and "--queries" not in err, err
    assert "Traceback" not in err
    path.write_text("1\twhat is x\n1\tthe same query again\n", encoding="utf-8")  # a queries file stays one
    code = main(["labels", "import", "--db", str(tmp_path / "w.json"), str(path)])
    assert code == 2 and "five.txt:2: query '1' appears twice" in capsys.readouterr().err


def test_an_export_deleted_since_no_longer_holds_the_edits_it_held(tmp_path):
    """Before: export the labels, delete (or move) the export, and `labels status q.txt` and the app's quit
    dialog still said 0 unexported edits, counting against a file that is gone."""
    from rankgate.store import sync

    ws, qrels = _raw_workspace(tmp_path)
    try:
        _, path, _ = sync.export_reviewed(ws, qrels, tmp_path / "scratch.txt")
        assert sync.raw_unexported(ws, qrels) == 0
        path.rename(tmp_path / "elsewhere.txt")
        assert sync.raw_unexported(ws, qrels) == 1
    finally:
        ws.close()


def test_an_output_to_dev_stdout_appended_to_a_log_keeps_the_log(tmp_path):
    """Before: `rankgate gate -o /dev/stdout >> ci.log` replaced ci.log with the result (the link was
    followed to the log file, which was then replaced by a rename): the log's earlier lines were lost. The
    shell's own descriptor is written through now, as `>>` appends."""
    b = evil_bench(tmp_path)
    log = tmp_path / "ci.log"
    log.write_text("earlier step\n", encoding="utf-8")
    with open(log, "a", encoding="utf-8") as out:
        p = subprocess.run(_gate(b, "-o", "/dev/stdout", "--junit", "/dev/fd/1"), stdout=out,
                           stderr=subprocess.PIPE, text=True, timeout=60)
    assert p.returncode in (0, 3) and "error" not in p.stderr, p.stderr
    text = log.read_text(encoding="utf-8")
    assert text.startswith("earlier step\n") and text.count('"baseline": "base"') == 1 and "<testsuites" in text


@pytest.mark.parametrize("idle, said", [(30, "after 30 minutes."), (0.5, "after 0.5 minutes."), (1, "after 1 minute.")])
def test_the_too_many_sessions_page_gives_the_idle_timeout_as_set(idle, said):
    """Before: with --idle-timeout 0.5 the page said a forgotten session ends "after 0 minutes"."""
    pytest.importorskip("aiohttp")
    from types import SimpleNamespace

    from rankgate.tui import webguard

    ana = webguard.Person("ana")
    guard = SimpleNamespace(sessions={object(): ana}, limits=webguard.Limits(16, idle * 60, per_reviewer=1))
    response = webguard.Guard.over_limit(guard, SimpleNamespace(remote="127.0.0.1"), ana)
    assert response.status == 429 and said in response.text


@pytest.mark.parametrize("owner", [12, None, ["ws"]])
def test_a_checksummed_record_whose_workspace_is_no_text_is_named_as_such_and_skipped(tmp_path, owner):
    """Before: a record with a good checksum whose `ws` is no text (journal v3) was refused on open as
    "damaged (checksum mismatch)", sending whoever looked into it after a broken disk, not a forged record."""
    from rankgate.core.errors import InputError
    from rankgate.store import storage
    from rankgate.store.workspace import Workspace

    db = tmp_path / "w.json"
    with Workspace.open(db, fold_every=1000) as ws:
        for i in range(3):
            ws.set_judgment("q1", f"d{i}", 1, reason="r", create_query=True)
    journal = tmp_path / "w.json.journal"
    last = storage.read_journal(journal).records[-1]
    with open(journal, "ab") as f:
        f.write(storage.encode_record(dict(last, seq=last["seq"] + 1, ws=owner)))
    with pytest.raises(InputError, match=r"line 5 is damaged \(its checksum holds, but it is no edit record\)"):
        Workspace.open(db)
    report = Workspace.recover(db)
    assert report["replayed"] == 3 and report["judgments"] == 3 and report["lost"]


@pytest.mark.parametrize("column", ["\x1b]0;pwned\x07", "x" * 3000])
def test_an_imported_iteration_column_that_is_an_escape_or_huge_is_not_copied_into_exports(tmp_path, capsys, column):
    """Before: `labels import --db` kept the input's iteration column for its TREC exports whatever it held: a
    terminal escape sequence went out on every line of `labels export -o -`, a 3,000-character one made every
    line 3 KB. trec_eval never reads the column: such a column is exported as trec_eval's `0`."""
    from rankgate.cli import main

    qrels = tmp_path / "q.txt"
    qrels.write_text(f"1 {column} d1 1\n2 {column} d2 0\n", encoding="utf-8")
    db = str(tmp_path / "w.json")
    assert main(["labels", "import", "--db", db, str(qrels)]) == 0
    capsys.readouterr()
    assert main(["labels", "export", "--db", db, "-o", "-"]) == 0
    lines = [ln for ln in capsys.readouterr().out.splitlines() if not ln.startswith("#")]
    assert lines == ["1 0 d1 1", "2 0 d2 0"]


def _gate_into_a_closed_pipe(*argv):
    """`rankgate gate ... | head -c 0`: the reader is gone before rankgate writes a byte."""
    import subprocess
    import sys

    p = subprocess.Popen([sys.executable, "-m", "rankgate", "gate", *argv], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    p.stdout.close()  # nobody reads: every write to stdout fails with a broken pipe
    err = p.stderr.read().decode()
    return p.wait(timeout=120), err


def test_a_reject_stays_exit_3_when_the_reader_of_its_output_is_gone():
    from ..conftest import SAMPLES

    for extra in ([], ["--junit", "/dev/stdout"]):
        code, err = _gate_into_a_closed_pipe(str(SAMPLES / "seed-lab"), *extra)
        assert code == 3, (extra, code, err)  # was 0: with `set -o pipefail` a reject read as a pass
        assert "Traceback" not in err and "BrokenPipe" not in err
