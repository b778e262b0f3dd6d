"""`rankgate labels` where the user names a benchmark: a grade off the scale it declares ([grades]) is
refused by `set` and `adjudicate` and noted by `import`; messages name the command, not the workspace
file; `history` of an unknown query says so as `set` does."""

from __future__ import annotations

import shutil

import pytest

from tests.conftest import SAMPLES, write


@pytest.fixture
def oh(tmp_path):
    """A copy of ops-handbook, whose benchmark.toml declares the scale 0-3."""
    folder = tmp_path / "oh"
    shutil.copytree(SAMPLES / "ops-handbook", folder)
    return folder


def history(cli, folder, qid, doc):
    code, out, err = cli("labels", "history", "-b", folder, qid, doc)
    assert code == 0, err
    return out


def test_set_refuses_a_grade_off_the_declared_scale_and_stores_nothing(cli, oh, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert cli("labels", "import", "-b", "oh")[0] == 0  # the workspace (a read before it makes none)
    before = history(cli, "oh", "q-leaked-key", "netsec-vpn-01")
    code, out, err = cli("labels", "set", "-b", "oh", "q-leaked-key", "netsec-vpn-01", "7", "--reason", "typo")
    assert (code, out) == (2, "")
    assert err == "error: labels set: grade 7 is not on oh's scale 0–3 ([grades] in benchmark.toml)\n"
    assert history(cli, "oh", "q-leaked-key", "netsec-vpn-01") == before
    code, out, err = cli("labels", "adjudicate", "-b", "oh", "q-leaked-key", "netsec-vpn-01", "-1", "--reason", "x")
    assert code == 2 and "grade -1 is not on oh's scale 0–3" in err
    code, out, err = cli("labels", "set", "-b", "oh", "q-leaked-key", "netsec-vpn-01", "3", "--reason", "on the scale")
    assert code == 0 and "-> 3" in out, err


def test_a_scale_with_a_gap_is_listed(cli, oh, tmp_path, monkeypatch):
    toml = oh / "benchmark.toml"
    text = toml.read_text().replace('"1" = "partly relevant"\n', '"-2" = "junk"\n')
    toml.write_text(text)
    monkeypatch.chdir(tmp_path)
    code, _, err = cli("labels", "set", "-b", "oh/", "q-leaked-key", "netsec-vpn-01", "1", "--reason", "x")
    assert code == 2 and "grade 1 is not on oh's scale -2, 0, 2, 3 ([grades] in benchmark.toml)" in err


def test_without_a_declared_scale_the_default_scale_holds_as_in_the_app(cli, tmp_path):
    """s8 newcomer F16: the CLI took grade 7 on a benchmark without [grades] while the app's keys follow the
    default scale 0-3 (a digit off it does nothing): both faces now refuse it, saying how to widen the scale;
    a --db store of no benchmark takes any grade, as a TREC qrels does."""
    folder = tmp_path / "sl"
    shutil.copytree(SAMPLES / "seed-lab", folder)
    assert "[grades]" not in (folder / "benchmark.toml").read_text()
    code, out, err = cli("labels", "set", "-b", folder, "q-dns", "zz", "7", "--reason", "a wider scale")
    assert code == 2 and "grade 7 is not on" in err and "scale 0–3 (the default" in err and "[grades]" in err
    code, out, err = cli("labels", "set", "-b", folder, "q-dns", "zz", "3", "--reason", "on the scale")
    assert code == 0 and "-> 3" in out, err
    code, out, err = cli("labels", "set", "--db", tmp_path / "w.json", "q1", "zz", "7", "--reason", "x",
                         "--add-query")
    assert code == 0 and "-> 7" in out, err


def test_import_notes_grades_off_the_declared_scale_and_imports_them(cli, oh, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    wide = write(tmp_path / "wide.trec", "q-leaked-key 0 zz 4\nq-leaked-key 0 zy 2\n")
    code, out, err = cli("labels", "import", "-b", "oh", wide)
    assert code == 0 and "2 new judgments" in out, err
    assert err == ("note: 1 label with a grade off oh's scale 0–3 ([grades] in benchmark.toml): q-leaked-key zz 4; "
                   "they count in the gate as they are: add their grades to [grades] or regrade them with "
                   "`rankgate labels set`\n")
    code, out, err = cli("labels", "import", "-b", "oh", write(tmp_path / "ok.trec", "q-leaked-key 0 zx 1\n"))
    assert code == 0 and "zz 4" in err  # still there: said again until it is fixed


def test_errors_name_the_command_not_the_workspace_file_the_user_never_named(cli, oh, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cases = [
        (("set", "q-leaked-key", "zz", "1"), "labels set: a new label needs --reason (why is 'zz' graded 1 for "
                                             "'q-leaked-key'?)"),
        (("set", "q-nope", "zz", "1", "--reason", "x"), "labels set: unknown query 'q-nope'"),
        (("remove", "q-leaked-key", "zz"), "labels remove: no judgment to remove"),
        (("confirm", "q-leaked-key", "zz"), "labels confirm: no label to confirm"),
        (("diff", "nov"), "labels diff: no version 'nov'"),
        (("freeze", ""), "labels freeze: version name ''"),
    ]
    for argv, says in cases:
        code, out, err = cli("labels", argv[0], "-b", "oh", *argv[1:])
        assert code == 2 and err.startswith(f"error: {says}") and err.count("\n") == 1, (argv, err)
        assert "workspaces" not in err and ".json" not in err
    db = tmp_path / "w.json"  # a workspace file the user names is still named
    code, _, err = cli("labels", "set", "--db", db, "-b", "oh", "q-nope", "zz", "1", "--reason", "x")
    assert code == 2 and err.startswith(f"error: {db}: unknown query 'q-nope'")


def test_history_of_an_unknown_query_says_so_as_set_does(cli, tmp_path):
    db = tmp_path / "w2.json"
    code, _, err = cli("labels", "import", "--db", db, write(tmp_path / "q.trec", "q-one 0 d1 1\n"))
    assert code == 0, err
    code, out, err = cli("labels", "history", "--db", db, "zzz")
    assert (code, out) == (2, "")
    assert err == f"error: {db}: unknown query 'zzz'; import its queries or qrels first\n"
    code, out, err = cli("labels", "history", "--db", db, "q-onr")
    assert code == 2 and "did you mean q-one?" in err
    code, out, err = cli("labels", "history", "--db", db, "q-one")
    assert code == 0 and "q-one d1" in out, err


def test_history_of_a_document_never_judged_for_the_query_says_so(cli, tmp_path):
    """Red team: `labels history Q DOC` of a document never judged for Q printed nothing; now one line on
    stderr (exit 0, stdout empty: no history is an answer), and the judged one still prints its events."""
    db = tmp_path / "w.json"
    assert cli("labels", "import", "--db", db, write(tmp_path / "q.trec", "q-one 0 d1 1\n"))[0] == 0
    code, out, err = cli("labels", "history", "--db", db, "q-one", "nodoc")
    assert (code, out) == (0, "")
    assert err == "no history: document 'nodoc' was never judged for query 'q-one'\n"
    code, out, err = cli("labels", "history", "--db", db, "q-one", "d1")
    assert code == 0 and "q-one d1" in out and err == ""


def test_a_pair_imported_with_a_control_character_can_be_graded(cli, tmp_path):
    """Red team: `labels import` took IDs holding ESC (the formats read them), `labels set` refused them, and
    the app showed such pairs to grade and then said "label not saved". A pair the store holds is graded;
    a new ID with a control character is still refused (a typing or paste slip)."""
    esc = "q\x1b[31mRED"
    db = tmp_path / "w.json"
    assert cli("labels", "import", "--db", db, write(tmp_path / "q.trec", f"{esc} 0 d\x1bx 1\n"))[0] == 0
    code, out, err = cli("labels", "set", "--db", db, esc, "d\x1bx", "2", "--reason", "checked")
    assert code == 0, err
    assert "\x1b" not in out + err  # shown escaped
    code, _, err = cli("labels", "set", "--db", db, esc, "new\x1bdoc", "1", "--reason", "typo")
    assert code == 2 and "control characters" in err
