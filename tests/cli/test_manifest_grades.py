"""benchmark.toml: the grade scale ([grades]) and the labelling guidelines (guidelines = FILE)."""

import pytest

from rankgate.cli import main
from rankgate.core.benchmark import DEFAULT_GRADES, load_manifest
from rankgate.core.errors import InputError
from tests.conftest import SAMPLES, write

BASE = 'name = "t"\nk = 3\nqrels = "q.trec"\nruns = ["r.trec"]\n'


def bench(tmp_path, extra: str = "", **files):
    write(tmp_path / "q.trec", "q1 0 d1 1\n")
    write(tmp_path / "r.trec", "q1 Q0 d1 1 1 t\n")
    for name, text in files.items():
        write(tmp_path / name, text)
    write(tmp_path / "benchmark.toml", BASE + extra)
    return tmp_path


def test_default_scale_is_0_to_3_and_no_guidelines(tmp_path):
    m = load_manifest(bench(tmp_path))
    assert m.grades == DEFAULT_GRADES == {0: "not relevant", 1: "partly relevant", 2: "relevant", 3: "the answer"}
    assert m.guidelines is None
    m.grades[0] = "changed"  # each manifest has its own copy
    assert DEFAULT_GRADES[0] == "not relevant"


def test_named_grades_sorted_by_grade(tmp_path):
    m = load_manifest(bench(tmp_path, '[grades]\n"4" = "perfect"\n"-2" = "junk"\n"0" = "not relevant"\n'))
    assert list(m.grades.items()) == [(-2, "junk"), (0, "not relevant"), (4, "perfect")]


@pytest.mark.parametrize("table, what", [
    ('"two" = "relevant"', "key 'two'"),
    ('"1.5" = "half"', "key '1.5'"),
    ('"1" = ""', "grade '1' needs a name"),
    ('"1" = "   "', "grade '1' needs a name"),
    ('"1" = 3', "grade '1' needs a name"),
    ("\n".join(f'"{g}" = "g{g}"' for g in range(11)), "11 grades, at most 10"),
    ("", "the table is empty"),
    ('"²" = "squared"', "key '²'"),
    ('"١" = "arabic one"', "key '١'"),
    ('"+-1" = "x"', "key '+-1'"),
    ('"' + "9" * 5000 + '" = "x"', "is not an integer grade"),
    ('"99999999999999999" = "huge"', "key '99999999999999999'"),
    ('"9999999999999999" = "huge"', "out of range"),
    ('"0" = "same"\n"1" = "same"', "given to two grades"),
    ('"0" = "3"', "another grade's number"),
])
def test_bad_grade_tables_name_the_file_and_key(tmp_path, table, what):
    with pytest.raises(InputError) as e:
        load_manifest(bench(tmp_path, f"[grades]\n{table}\n"))
    assert e.value.path.endswith("benchmark.toml")
    assert what in str(e.value)


def test_grades_not_a_table(tmp_path):
    with pytest.raises(InputError, match="'grades' must be a table"):
        load_manifest(bench(tmp_path, 'grades = "0-4"\n'))


def test_guidelines_resolved_against_the_folder(tmp_path):
    m = load_manifest(bench(tmp_path, 'guidelines = "docs/GUIDE.md"\n', **{"docs/GUIDE.md": "# How to grade\n"}))
    assert m.guidelines == tmp_path / "docs" / "GUIDE.md"
    assert m.guidelines.read_text() == "# How to grade\n"


@pytest.mark.parametrize("value, what", [
    ("../outside.md", "outside the benchmark folder"),
    ("/etc/passwd", "outside the benchmark folder"),
    ("MISSING.md", "does not exist"),
    ("", "expected a file name"),
    ("a\\u0000b", "cannot be read"),
    ("x" * 300, "cannot be read"),
    ("sub", "is not a regular file"),
])
def test_bad_guidelines_path(tmp_path, value, what):
    write(tmp_path / "outside.md", "x")
    (tmp_path / "b" / "sub").mkdir(parents=True)
    folder = tmp_path / "b"
    with pytest.raises(InputError) as e:
        load_manifest(bench(folder, f'guidelines = "{value}"\n'))
    assert e.value.path.endswith("benchmark.toml")
    assert "guidelines: " in str(e.value) and what in str(e.value)


def test_cli_refuses_a_bad_scale_in_one_line(tmp_path, capsys):
    folder = bench(tmp_path, '[grades]\n"x" = "junk"\n')
    code = main(["score", str(folder)])
    _, err = capsys.readouterr()
    assert code == 2
    assert "benchmark.toml" in err and "key 'x'" in err and "Traceback" not in err


def test_ops_handbook_has_guidelines_and_the_default_scale():
    m = load_manifest(SAMPLES / "ops-handbook")
    assert m.grades == DEFAULT_GRADES
    assert m.guidelines is not None and m.guidelines.name == "GUIDELINES.md"
    text = m.guidelines.read_text(encoding="utf-8")
    assert "unsure" in text and "reason" in text and all(f"| {g} |" in text for g in range(4))


def test_guidelines_are_checked_again_when_the_app_opens_them(tmp_path):
    """A file swapped for a pipe or a link out of the folder after loading is refused, never read."""
    import os

    from rankgate.tui.screens.guidelines import read_guidelines

    folder = bench(tmp_path / "b", 'guidelines = "G.md"\n', **{"G.md": "# Grade\n"})
    m = load_manifest(folder)
    assert read_guidelines(m.guidelines, m.folder) == ("# Grade\n", "")
    write(tmp_path / "secret.md", "secret")
    os.remove(m.guidelines)
    os.symlink(tmp_path / "secret.md", m.guidelines)
    text, why = read_guidelines(m.guidelines, m.folder)
    assert text is None and "outside the benchmark folder" in why
    os.remove(m.guidelines)
    os.mkfifo(m.guidelines)
    text, why = read_guidelines(m.guidelines, m.folder)
    assert text is None and "not a regular file" in why


def test_a_policy_that_is_a_folder_is_one_line(tmp_path, capsys):
    folder = bench(tmp_path)
    code = main(["gate", str(folder), "--policy", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and "is a folder, expected a TOML file" in err and "Traceback" not in err
