"""`rankgate init DIR --qrels --runs --queries --corpus [--copy]`: a benchmark folder that gate and review open."""

import json
import tomllib

from rankgate.cli import main
from rankgate.core.benchmark import load_manifest
from tests.conftest import write

NEL = "\x85"


def cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def raw_files(d):
    write(d / "data" / "qrels.txt", "1 0 a 3\n1 0 b 1\n2 0 c 2\n2 0 d 0\n")
    write(d / "data" / "runs" / "x.trec", "1 Q0 b 1 3 x\n1 Q0 a 2 2 x\n2 Q0 d 1 3 x\n2 Q0 c 2 2 x\n")
    write(d / "data" / "runs" / "y.trec", "1 Q0 a 1 3 y\n1 Q0 b 2 2 y\n2 Q0 c 1 3 y\n2 Q0 e 2 2 y\n")
    write(d / "data" / "topics.tsv", "1\tfirst query\n2\tsecond query\n3\tunjudged\n")
    write(d / "data" / "corpus.jsonl", "".join(json.dumps({"docid": x, "text": f"t{NEL}{x}"}) + "\n" for x in "abe"))
    return d / "data"


def init_args(src, folder, *more):
    return ["init", folder, "--qrels", src / "qrels.txt", "--runs", src / "runs" / "x.trec", "--runs",
            src / "runs" / "y.trec", "--queries", src / "topics.tsv", "--corpus", src / "corpus.jsonl", *more]


def test_init_points_at_the_files_and_says_what_it_found(tmp_path, capsys, monkeypatch):
    src = raw_files(tmp_path)
    folder = tmp_path / "bench"
    code, out, err = cli(capsys, *init_args(src, folder, "--k", "1"))
    assert code == 0, err
    data = tomllib.loads((folder / "benchmark.toml").read_text())
    assert data["qrels"] == "../data/qrels.txt" and data["corpus"] == "../data/corpus.jsonl"
    assert data["runs"] == ["../data/runs/x.trec", "../data/runs/y.trec"]
    assert data["k"] == 1 and data["name"] == "bench"
    assert data["gate"] == {"baseline": "x", "candidate": "y"}
    assert "queries: 3 in" in out and "texts for 2 of the 2 judged" in out
    assert "judged: 4 judgments of 4 documents for 2 queries, grades 0, 1, 2, 3" in out
    assert "run 'x': 2 queries, 4 ranked documents" in out
    assert "texts: found for 2 of 4 judged documents" in out
    assert "short" not in out
    code, out, err = cli(capsys, *init_args(src, tmp_path / "deep"))  # k = 10: rankings of 2 are short
    assert code == 0 and "note: run 'x' ranks fewer than k=10 documents for 2 of 2 queries" in out
    m = load_manifest(folder)
    assert m.corpus == folder / "../data/corpus.jsonl"
    # gate opens it (from anywhere)
    monkeypatch.chdir(tmp_path / "data")
    code, out, err = cli(capsys, "gate", folder)
    assert code in (0, 3), err
    assert json.loads(out)["candidate"] == "y"
    code, out, err = cli(capsys, "score", folder, "--format", "table")
    assert code == 0, err


def test_init_refuses_to_overwrite(tmp_path, capsys):
    src = raw_files(tmp_path)
    folder = tmp_path / "bench"
    write(folder / "benchmark.toml", "name = 'mine'\n")
    code, out, err = cli(capsys, *init_args(src, folder))
    assert code == 2 and len(err.strip().splitlines()) == 1 and "already exists" in err
    assert (folder / "benchmark.toml").read_text() == "name = 'mine'\n"


def test_a_bad_file_writes_nothing(tmp_path, capsys):
    src = raw_files(tmp_path)
    write(src / "corpus.jsonl", '{"docid": "a", "text": "cut\n')
    folder = tmp_path / "bench"
    code, out, err = cli(capsys, *init_args(src, folder))
    assert code == 2 and "corpus.jsonl:1" in err
    assert not (folder / "benchmark.toml").exists()


def test_copy_makes_a_folder_that_stands_alone(tmp_path, capsys):
    import shutil

    src = raw_files(tmp_path)
    folder = tmp_path / "bench"
    code, out, err = cli(capsys, *init_args(src, folder, "--copy", "--name", "mine", "--k", "2"))
    assert code == 0, err
    data = tomllib.loads((folder / "benchmark.toml").read_text())
    assert data["qrels"] == "qrels.txt" and data["runs"] == ["runs/x.trec", "runs/y.trec"] and data["name"] == "mine"
    shutil.rmtree(src)
    code, out, err = cli(capsys, "validate", folder, "--format", "text")
    assert code == 0 and "texts for 2 of 4 judged documents" in out, err



def _tree(d):
    return sorted(str(p.relative_to(d)) for p in d.rglob("*")) if d.exists() else None


def test_copy_never_overwrites_a_file_in_the_folder(tmp_path, capsys):
    src = raw_files(tmp_path)
    folder = tmp_path / "bench"
    write(folder / "qrels.txt", "mine\n")
    before = _tree(folder)
    code, out, err = cli(capsys, *init_args(src, folder, "--copy"))
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "qrels.txt" in err and "already exists" in err and "Traceback" not in err
    assert (folder / "qrels.txt").read_text() == "mine\n" and _tree(folder) == before


def test_copy_onto_a_file_named_runs_writes_nothing(tmp_path, capsys):
    src = raw_files(tmp_path)
    folder = tmp_path / "bench"
    write(folder / "runs", "precious\n")
    code, out, err = cli(capsys, *init_args(src, folder, "--copy"))
    assert code == 2 and len(err.strip().splitlines()) == 1 and "runs" in err, err
    assert (folder / "runs").read_text() == "precious\n" and _tree(folder) == ["runs"]


def test_a_folder_that_cannot_be_written_leaves_nothing(tmp_path, capsys, monkeypatch):
    src = raw_files(tmp_path)
    # a path through a file: one line, exit 2, nothing made
    write(tmp_path / "afile", "x\n")
    code, out, err = cli(capsys, *init_args(src, tmp_path / "afile" / "sub", "--copy"))
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    # a failure in the middle of the copies (a full disk, a read-only folder): everything made is removed
    folder = tmp_path / "deep" / "bench"
    import rankgate.cli.init as init_mod

    real = init_mod.shutil.copyfile
    calls = []

    def failing(a, b):
        calls.append(a)
        if len(calls) == 3:
            raise PermissionError(13, "Permission denied", str(b))
        return real(a, b)

    monkeypatch.setattr(init_mod.shutil, "copyfile", failing)
    code, out, err = cli(capsys, *init_args(src, folder, "--copy"))
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Permission denied" in err, err
    assert not (tmp_path / "deep").exists()
    monkeypatch.undo()
    # a folder without a write bit (a read-only reference set), or a new folder in one: refused even by root
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        for target in (ro, ro / "dl19"):
            code, out, err = cli(capsys, *init_args(src, target, "--copy"))
            assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
            assert f"{ro}: cannot write the benchmark folder here" in err and "read-only" in err
            assert _tree(ro) == []
    finally:
        ro.chmod(0o755)


def test_init_refuses_a_run_ranking_a_document_twice_and_writes_nothing(tmp_path, capsys):
    """As `gate` and `validate` do: one line with the file and the line, exit 2, no folder left behind."""
    src = raw_files(tmp_path)
    y = src / "runs" / "y.trec"
    y.write_text(y.read_text() + "1 Q0 a 3 1 y\n")  # 'a' again for query 1, as line 5
    for more in ((), ("--copy",)):
        folder = tmp_path / f"bench{len(more)}"
        code, out, err = cli(capsys, *init_args(src, folder, *more))
        assert code == 2 and err.strip() == f"error: {y}:5: run 'y' ranks document 'a' twice for query '1'"
        assert not folder.exists()
    code, out, err = cli(capsys, "gate", "--qrels", src / "qrels.txt", "--runs", src / "runs" / "x.trec", "--runs", y)
    assert code == 2 and f"{y}:5: run 'y' ranks document 'a' twice for query '1'" in err


def test_inputs_sharing_only_the_root_with_the_folder_are_named_by_absolute_paths():
    """benchmark.toml names an input relative to the folder when they share a folder below the root (it moves
    with them), else absolutely: `../../../../work/shared/...` from /tmp/x/dl19 broke when the folder moved."""
    from pathlib import Path

    from rankgate.cli.init import _relative

    assert _relative("/work/shared/dl19/qrels.txt", Path("/tmp/x/dl19")) == "/work/shared/dl19/qrels.txt"
    assert _relative("/tmp/data/qrels.txt", Path("/tmp/x/dl19")) == "../../data/qrels.txt"
    assert _relative("/tmp/x/dl19/qrels.txt", Path("/tmp/x/dl19")) == "qrels.txt"
    assert _relative("irds:msmarco-passage/dev", Path("/tmp/x")) == "irds:msmarco-passage/dev"
