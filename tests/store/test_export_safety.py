"""An export back never harms a file it should not write (store/sync.py's export_back): a file or folder with
no write bit is read-only even for root; a qrels file outside the benchmark folder (`rankgate init` without
--copy points at one) is written only when asked (`--outside-folder`), else a copy goes into the folder; a
TREC file keeps its own iteration column (`Q0`), so its diff is the changed labels and the header."""

from __future__ import annotations

import errno
import os
import shutil
import stat

import pytest

from rankgate.store import paths, sync
from tests.conftest import write

QRELS = "".join(f"{q} Q0 {d} {g}\n" for q, d, g in (("q1", "d1", 1), ("q1", "d4", 0), ("q2", "d5", 1),
                                                     ("q3", "d7", 2)))


def _store_files():
    """Every workspace file (the snapshot, journal, history, sync record), but the lock."""
    return {p.name: p.read_bytes() for p in paths.workspace_dir(create=False).iterdir() if not p.name.endswith(".lock")}


def _bench(samples, tmp_path, qrels_text=QRELS):
    folder = tmp_path / "bench"
    shutil.copytree(samples / "three-questions", folder)
    (folder / "qrels.trec").write_text(qrels_text)
    return folder


@pytest.fixture
def as_root(monkeypatch):
    """os.access as root sees it: everything writable. Only the mode bits can say read-only then."""
    monkeypatch.setattr(os, "access", lambda *a, **kw: True)


@pytest.mark.parametrize("what", ["file", "folder"])
def test_no_write_bit_is_read_only_even_for_root(cli, samples, tmp_path, as_root, what):
    folder = _bench(samples, tmp_path)
    assert cli("labels", "set", "-b", folder, "q1", "d2", "1", "--reason", "r")[0] == 0
    qrels = folder / "qrels.trec"
    locked = qrels if what == "file" else folder
    before, store = qrels.read_bytes(), _store_files()
    mode = stat.S_IMODE(locked.stat().st_mode)
    locked.chmod(0o444 if what == "file" else 0o555)
    try:
        code, out, err = cli("labels", "export", folder)
    finally:
        locked.chmod(mode)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, err
    assert "cannot write here (read-only); nothing was changed" in err and str(qrels) in err
    assert qrels.read_bytes() == before and sorted(os.listdir(folder)) == sorted(os.listdir(samples /
                                                                                          "three-questions"))
    assert _store_files() == store  # the sync record too
    code, out, err = cli("labels", "export", folder)  # writable again: written
    assert code == 0, err


def _outside(cli, samples, tmp_path):
    """A folder made by `rankgate init` without --copy: its benchmark.toml points at ../shared files."""
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "qrels.trec").write_text(QRELS)
    shutil.copy(samples / "three-questions" / "run.trec", shared / "run.trec")
    folder = tmp_path / "bench"
    code, out, err = cli("init", folder, "--qrels", shared / "qrels.trec", "--runs", shared / "run.trec")
    assert code == 0, err
    return folder, shared / "qrels.trec"


def test_a_qrels_file_outside_the_folder_is_not_written_without_asking(cli, samples, tmp_path):
    folder, qrels = _outside(cli, samples, tmp_path)
    assert cli("labels", "set", "-b", folder, "q1", "d2", "1", "--reason", "also answers")[0] == 0
    before, store = qrels.read_bytes(), _store_files()
    code, out, err = cli("labels", "export", folder)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, err
    copy = folder / "qrels.trec"
    assert "is outside the benchmark folder" in err and "qrels.trec" in err.split(":")[1]
    assert f"rankgate labels export {folder} -o {copy}" in err and "--outside-folder" in err
    assert f'set qrels = "qrels.trec" in {folder / "benchmark.toml"}' in err
    assert qrels.read_bytes() == before and _store_files() == store and not copy.exists()
    # the way on it names: a copy in the folder, in the file's own layout (Q0), then benchmark.toml names it
    code, out, err = cli("labels", "export", folder, "-o", copy)
    assert code == 0, err
    assert [ln for ln in copy.read_text().splitlines() if not ln.startswith("#")] == (
        "q1 Q0 d1 1\nq1 Q0 d4 0\nq1 Q0 d2 1\nq2 Q0 d5 1\nq3 Q0 d7 2").splitlines()
    assert qrels.read_bytes() == before
    toml = folder / "benchmark.toml"
    text = toml.read_text()
    toml.write_text("\n".join('qrels = "qrels.trec"' if ln.startswith("qrels =") else ln
                              for ln in text.splitlines()) + "\n")
    code, out, _ = cli("labels", "status", folder)
    assert code == 0 and "in sync" in out
    # or the explicit flag: the file outside is written, as asked
    toml.write_text(text)
    assert cli("labels", "set", "-b", folder, "q3", "d9", "1", "--reason", "r")[0] == 0
    code, out, err = cli("labels", "export", folder, "--outside-folder")
    assert code == 0, err
    assert "q3 Q0 d9 1\n" in qrels.read_text() and cli("labels", "status", folder)[0] == 0


def test_outside_and_read_only_stays_read_only_with_the_flag(cli, samples, tmp_path, as_root):
    folder, qrels = _outside(cli, samples, tmp_path)
    assert cli("labels", "set", "-b", folder, "q1", "d2", "1", "--reason", "r")[0] == 0
    before = qrels.read_bytes()
    qrels.chmod(0o444)
    qrels.parent.chmod(0o555)
    try:
        code, _, err = cli("labels", "export", folder, "--outside-folder")
    finally:
        qrels.parent.chmod(0o755)
        qrels.chmod(0o644)
    assert code == 2 and "cannot write here (read-only)" in err and qrels.read_bytes() == before


def test_where_the_link_points_decides_outside(samples, tmp_path):
    """A link in the folder is as inside as the file it points at: the target is what a write-back replaces.
    (Until the eighth session a link in the folder counted as inside wherever it pointed.)"""
    from rankgate.core.benchmark import load_manifest

    folder = _bench(samples, tmp_path)
    assert not sync.is_outside_folder(load_manifest(folder))
    (tmp_path / "elsewhere.trec").write_text(QRELS)
    (folder / "qrels.trec").unlink()
    (folder / "qrels.trec").symlink_to(tmp_path / "elsewhere.trec")  # a link in the folder to a file outside it
    manifest = load_manifest(folder)
    assert sync.is_outside_folder(manifest)
    assert sync.folder_copy_path(manifest) == folder / "qrels.labels.trec"  # never the link itself
    (folder / "kept.trec").write_text(QRELS)
    (folder / "qrels.trec").unlink()
    (folder / "qrels.trec").symlink_to("kept.trec")  # a link into the folder is inside
    assert not sync.is_outside_folder(load_manifest(folder))
    (folder / "qrels.trec").unlink()
    (folder / "qrels.trec").write_text(QRELS)
    (folder / "benchmark.toml").write_text((folder / "benchmark.toml").read_text().replace(
        'qrels = "qrels.trec"', 'qrels = "../elsewhere.trec"'))
    assert sync.is_outside_folder(load_manifest(folder))
    (folder / "sub").mkdir()
    (folder / "sub" / "q.trec").write_text(QRELS)
    (folder / "benchmark.toml").write_text((folder / "benchmark.toml").read_text().replace(
        'qrels = "../elsewhere.trec"', 'qrels = "sub/q.trec"'))
    assert not sync.is_outside_folder(load_manifest(folder))


@pytest.mark.parametrize("layout,sep,column", [("Q0", " ", "Q0"), ("Q0", "\t", "Q0"), ("0", " ", "0"),
                                               ("mixed", " ", "Q0")])
@pytest.mark.parametrize("had_header", [False, True])
def test_export_back_keeps_the_files_own_layout(cli, samples, tmp_path, layout, sep, column, had_header):
    """The iteration column (Q0), the separator and the order stay; the `#` header is written only when the
    file had one (trec_eval, the C tool, stops at a run of comment lines)."""
    rows = [("q1", "d1", 1), ("q1", "d4", 0), ("q2", "d5", 1), ("q3", "d7", 2)]
    cols = ["Q0", "0", "Q0", "Q0"] if layout == "mixed" else [layout] * 4
    text = "".join(sep.join((q, c, d, str(g))) + "\n" for (q, d, g), c in zip(rows, cols))
    folder = _bench(samples, tmp_path, ("# version: v0\n" if had_header else "") + text)
    assert cli("labels", "set", "-b", folder, "q2", "d5", "0", "--reason", "not it")[0] == 0
    code, out, err = cli("labels", "export", folder)
    assert code == 0, err
    written = (folder / "qrels.trec").read_text().splitlines()
    header = [ln for ln in written if ln.startswith("#")]
    body = [ln for ln in written if not ln.startswith("#")]
    if had_header:
        assert [ln.split("# ")[1].split(":")[0] for ln in header][:3] == ["version", "content_hash", "exported_at"]
    else:
        assert header == []
    want = text  # a mixed column too: each line keeps its own (it was all `0` until the eighth session)
    assert body == want.replace(sep.join(("q2", column, "d5", "1")), sep.join(("q2", column, "d5", "0"))
                                ).splitlines()
    assert cli("labels", "status", folder)[0] == 0  # the file reads back as the workspace holds it
    code, out, err = cli("labels", "export", folder)  # a second export: the same layout again
    assert code == 0, err
    assert [ln for ln in (folder / "qrels.trec").read_text().splitlines() if not ln.startswith("#")] == body


@pytest.mark.parametrize("newline", ["\r\n", "\n"])
def test_export_back_keeps_crlf_and_each_lines_own_column(cli, samples, tmp_path, newline):
    """A file with CRLF endings and a mixed iteration column (`Q0`, `0`, a tab): a write-back changes the one
    edited grade and adds the new pair in the most common column; nothing else in the file moves."""
    lines = ["# our reference labels", "q1 Q0 d1 1", "q1 0 d4 0", "q2 Q0 d5 1", "q3\tQ0\td7\t2", "q3 Q0 d8 0"]
    folder = _bench(samples, tmp_path, "".join(line + newline for line in lines))
    assert cli("labels", "set", "-b", folder, "q1", "d4", "2", "--reason", "it is")[0] == 0
    assert cli("labels", "set", "-b", folder, "q1", "d2", "1", "--reason", "new")[0] == 0
    code, out, err = cli("labels", "export", folder)
    assert code == 0, err
    raw = (folder / "qrels.trec").read_bytes().decode()
    assert raw.count(newline) == len(raw.splitlines()) and (newline == "\r\n" or "\r" not in raw)
    body = [ln for ln in raw.splitlines() if not ln.startswith("#")]
    assert raw.startswith("# our reference labels" + newline)
    assert body == ["q1 Q0 d1 1", "q1 0 d4 2", "q1 Q0 d2 1", "q2 Q0 d5 1", "q3\tQ0\td7\t2", "q3 Q0 d8 0"], body
    assert cli("labels", "status", folder)[0] == 0  # reads back as the workspace holds it
    code, out, err = cli("labels", "export", folder)  # a second export changes nothing
    assert code == 0 and (folder / "qrels.trec").read_bytes().decode().splitlines()[-6:] == body, err


def test_o_never_replaces_a_read_only_file(cli, samples, tmp_path):
    """-o FILE (and every output written the same way): a file or folder with no write bit is refused; a
    rename would replace a 0444 file even for its owner, and root passes every permission check."""
    folder = _bench(samples, tmp_path)
    ro = tmp_path / "reference.trec"
    ro.write_text(QRELS)
    ro.chmod(0o444)
    code, out, err = cli("labels", "export", folder, "-o", ro)
    assert code == 2 and "cannot write here (read-only" in err and len(err.strip().splitlines()) == 1, err
    assert ro.read_text() == QRELS and stat.S_IMODE(ro.stat().st_mode) == 0o444
    shut = tmp_path / "shut"
    shut.mkdir()
    shut.chmod(0o555)
    try:
        code, out, err = cli("labels", "export", folder, "-o", shut / "new.trec")
        receipt = cli("gate", samples / "seed-lab", "--receipt", shut / "r.json")
    finally:
        shut.chmod(0o755)
    assert code == 2 and "cannot write here (read-only: its folder" in err and not list(shut.iterdir())
    assert receipt[0] == 2 and "cannot write here (read-only" in receipt[2]


def test_o_never_replaces_another_stores_own_files(cli, tmp_path):
    """Red team: `-o` replaced another workspace's .lock (an empty file counts as replaceable), which lets two
    processes write that store at once. Any file of rankgate's workspaces folder, and a sidecar beside a
    --db store, is refused; nothing changes."""
    from rankgate.store.paths import workspace_dir

    other = tmp_path / "other.json"
    assert cli("labels", "import", "--db", other, write(tmp_path / "q.trec", QRELS))[0] == 0
    mine = tmp_path / "mine.json"
    assert cli("labels", "import", "--db", mine, tmp_path / "q.trec")[0] == 0
    lock = tmp_path / "other.json.lock"
    lock.write_text("")
    inside = workspace_dir() / "someone-else.json.lock"
    inside.write_text("")
    for target in (lock, inside):
        code, _, err = cli("labels", "export", "--db", mine, "-o", target, "--force")
        assert code == 2 and "an export never replaces it" in err, err
        assert target.read_text() == ""
    assert cli("labels", "export", "--db", mine, "-o", tmp_path / "fine.trec")[0] == 0


def test_export_back_keeps_the_files_own_leading_comments(cli, samples, tmp_path):
    """Red team: three-questions' qrels starts with a line saying what it is; a write-back replaced it with
    rankgate's header. The user's comments stay first, rankgate's header follows, and a second export keeps
    them once."""
    folder = _bench(samples, tmp_path, "# The golden set: three questions.\n" + QRELS)
    assert cli("labels", "set", "-b", folder, "q2", "d5", "0", "--reason", "not it")[0] == 0
    for _ in range(2):
        code, _, err = cli("labels", "export", folder)
        assert code == 0, err
        lines = (folder / "qrels.trec").read_text().splitlines()
        assert lines[0] == "# The golden set: three questions."
        assert [ln.split(":")[0] for ln in lines[1:4]] == ["# version", "# content_hash", "# exported_at"]
        assert sum(ln.startswith("# The golden set") for ln in lines) == 1
        assert "q2 Q0 d5 0" in lines
    assert cli("labels", "status", folder)[0] == 0


def test_a_link_in_the_folder_to_an_outside_file_is_refused_like_one(cli, samples, tmp_path):
    folder = _bench(samples, tmp_path)
    outside = tmp_path / "shared" / "qrels.trec"
    outside.parent.mkdir()
    shutil.move(folder / "qrels.trec", outside)
    (folder / "qrels.trec").symlink_to(outside)
    assert cli("labels", "set", "-b", folder, "q1", "d2", "1", "--reason", "r")[0] == 0
    before, store = outside.read_bytes(), _store_files()
    code, out, err = cli("labels", "export", folder)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, err
    assert f"is outside the benchmark folder {folder} (it is a link to {outside})" in err
    assert f"-o {folder / 'qrels.labels.trec'}" in err and "--outside-folder" in err
    assert outside.read_bytes() == before and _store_files() == store and (folder / "qrels.trec").is_symlink()
    code, out, err = cli("labels", "export", folder, "-o", folder / "qrels.labels.trec")  # the way it names
    assert code == 0 and outside.read_bytes() == before, err
    code, out, err = cli("labels", "export", folder, "--outside-folder")  # the other way: written through
    assert code == 0, err
    assert (folder / "qrels.trec").is_symlink() and "q1 Q0 d2 1\n" in outside.read_text()


def test_the_copy_is_never_one_of_the_inputs(samples, tmp_path):
    """The quit dialog's copy (and the refusal's `-o`): not a run named like the outside file, not a file
    that holds no judgments; a previous copy (judgments only) is reused."""
    from rankgate.core.benchmark import load_manifest

    folder = _bench(samples, tmp_path)
    run = folder / "run.trec"  # the folder's run (benchmark.toml: golden=run.trec)
    outside = tmp_path / "out" / "run.trec"  # an outside qrels file with the run's name
    outside.parent.mkdir()
    shutil.move(folder / "qrels.trec", outside)
    toml = folder / "benchmark.toml"
    toml.write_text(toml.read_text().replace('qrels = "qrels.trec"', f'qrels = "{outside}"'))
    manifest = load_manifest(folder)
    assert str(folder / run.name) in "".join(manifest.runs)
    stem, ext = run.name.rsplit(".", 1)
    assert sync.folder_copy_path(manifest) == folder / f"{stem}.labels.{ext}"
    (folder / f"{stem}.labels.{ext}").write_text("not judgments\n")  # someone's notes: not replaced
    assert sync.folder_copy_path(manifest) == folder / f"{stem}.labels-2.{ext}"
    (folder / f"{stem}.labels.{ext}").write_text(QRELS)  # a previous copy: replaced
    assert sync.folder_copy_path(manifest) == folder / f"{stem}.labels.{ext}"


@pytest.mark.parametrize("command", [["labels", "export", "{folder}", "-o", "{loop}"],
                                     ["gate", "{folder}", "--receipt", "{loop}"]])
def test_an_output_onto_a_symlink_loop_is_refused_and_the_link_stays(cli, samples, tmp_path, command):
    folder = _bench(samples, tmp_path)
    (tmp_path / "l2").symlink_to("l1")
    (tmp_path / "l1").symlink_to("l2")
    loop = tmp_path / "l1"
    code, out, err = cli(*[part.format(folder=folder, loop=loop) for part in command])
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert err.startswith(f"error: {loop}: cannot be opened (") and "symbolic link that leads back to itself" in err
    assert "nothing was written" in err and "Traceback" not in err
    assert loop.is_symlink() and os.readlink(loop) == "l2" and os.readlink(tmp_path / "l2") == "l1"


def test_an_export_from_a_read_only_store_is_written_whole_and_succeeds(cli, tmp_path, monkeypatch):
    """#35: `labels export --db DB -o FILE` on a store whose folder cannot be written (a read-only mount) wrote
    FILE, then exited 2 because the record of the export beside the store could not be kept. The record is
    advice: the export succeeds, with one note, and FILE holds every label."""
    from rankgate.store import storage

    db = tmp_path / "store" / "labels.json"
    qrels = write(tmp_path / "in.trec", QRELS)
    assert cli("labels", "import", "--db", db, qrels)[0] == 0
    real = storage.atomic_write

    def read_only_store(path, *a, **kw):  # what a read-only file system answers (root ignores mode bits)
        if os.path.dirname(os.path.abspath(path)) == str(db.parent):
            raise storage._io_error(path, "write", OSError(errno.EROFS, os.strerror(errno.EROFS)))
        return real(path, *a, **kw)

    monkeypatch.setattr(storage, "atomic_write", read_only_store)
    out = tmp_path / "out.trec"
    code, stdout, err = cli("labels", "export", "--db", db, "-o", out)
    assert code == 0, err
    assert "wrote 4 judgments" in stdout and "not recorded beside the workspace" in err and "read-only" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert sorted(out.read_text().splitlines()) == sorted(QRELS.splitlines())  # (Q0 as imported)
    assert not (db.parent / (db.name + paths.EXPORTED)).exists()
