"""core/tomlplain.py reads a plain TOML file as tomllib does, and leaves every other file to tomllib."""

import random
import re
import tomllib

import pytest

from rankgate.core.benchmark import load_toml
from rankgate.core.errors import InputError
from rankgate.core.tomlplain import plain_toml
from tests.conftest import ROOT


def repository_toml() -> list[str]:
    """Every TOML file of the repository (pyproject.toml, the samples' manifests and policies) and every
    ```toml block of the docs."""
    texts = [p.read_text(encoding="utf-8") for p in sorted(ROOT.rglob("*.toml"))
             if not {".venv", "node_modules", "data"} & set(p.relative_to(ROOT).parts)]
    for doc in sorted((ROOT / "docs").glob("*.md")):
        texts += re.findall(r"```toml\n(.*?)```", doc.read_text(encoding="utf-8"), re.S)
    return texts


def same(text: str) -> bool | None:
    """None: not plain; else whether plain_toml gave what tomllib gives (keys in order, types, values)."""
    got = plain_toml(text)
    if got is None:
        return None
    return repr(got) == repr(tomllib.loads(text))  # (repr: True is not 1, 1.0 is not 1)


def test_the_repositorys_plain_files_read_as_tomllib_reads_them():
    texts = repository_toml()
    results = [same(t) for t in texts]
    assert len(texts) > 12
    assert all(r is not False for r in results)
    assert results.count(True) > 8  # the samples' manifests and policies are plain


PLAIN = [
    "", "# only a comment\n", "a = 1", "a=1#c\n", 'a = "x # not a comment"\n', 'a = "tab\tinside"',
    "a = -0\nb = 0\nc = 123\nd = -45", "a = 0.75\nb = -2.5\nc = 10.0", "a = true\nb = false",
    'a = []\nb = [ ]\nc = [\n]\nd = ["x", 1, true, 0.5,]\ne = [\n  "x", # c\n  "y"\n]',
    '[gate]\nk = 3\n[ other ]\n"0" = "zero"\n"" = 1', "[[rules]]\na = 1\n[[rules]]\na = 2\n[x]\nb = 3",
    'name = "seed-lab"\nk = 3\nruns = ["runs.json"]\n\n[gate]\nmust_pass = ["q-recovery"]\n',
    "-a_b-1 = 2\ntrue = false\n1 = 2",
]


@pytest.mark.parametrize("text", PLAIN)
def test_plain_files_read_as_tomllib_reads_them(text):
    assert same(text) is True


NOT_PLAIN = [
    'a = "\\n"', "a = 'x'", 'a = """x"""', "a = 1e3", "a = 1_000", "a = +1", "a = 01", "a = .5", "a = 5.",
    "a = inf", "a = nan", "a = 2026-01-01", "a = 07:32:00", "a = {b = 1}", "a.b = 1", "[a.b]\nc = 1",
    "a = [[1], [2]]", "a = 1\na = 2", "[a]\n[a]", "a = 1\n[a]", "a = [1]\n[[a]]", "[[a]]\n[a]", "a = é",
    'a = "é"', "a = 1\r\n", "a = \x01", "a = 1 2", "a =", "= 1", "a\n= 1", "a = [1,,2]", "a = [,]", "a = [1",
    "[a] b = 1", "[]", "[[a]", "[a]]", "a = true1", "a = -", "a = 12345678901234567890", '"a = 1', "a = x",
]


@pytest.mark.parametrize("text", NOT_PLAIN)
def test_everything_else_is_left_to_tomllib(text):
    assert plain_toml(text) is None


def test_altered_files_are_read_as_tomllib_reads_them_or_left_to_it():
    """Thousands of files made from the repository's by deleting, inserting and repeating characters and lines:
    whatever plain_toml reads, tomllib reads the same (and does not refuse)."""
    rng = random.Random(36)
    texts = [t for t in repository_toml() if t.strip()]
    alphabet = list(" \t\n\"'#[]=,.-_+0123456789eE:{}\\abtruefalsé")
    counts = {True: 0, None: 0}
    for _ in range(4000):
        text = rng.choice(texts)
        for _ in range(rng.randint(1, 3)):
            i = rng.randrange(len(text) + 1)
            edit = rng.randrange(4)
            if edit == 0 and text:
                text = text[:i] + text[i + 1:]
            elif edit == 1:
                text = text[:i] + rng.choice(alphabet) + text[i:]
            elif edit == 2:
                lines = text.split("\n")
                j = rng.randrange(len(lines))
                lines.insert(rng.randrange(len(lines) + 1), lines[j])
                text = "\n".join(lines)
            else:
                text = text[:i]
        result = same(text)
        assert result is not False, text
        counts[result] += 1
    assert counts[True] > 500 and counts[None] > 500, counts


def test_load_toml_reads_a_plain_file_without_tomllib_and_says_the_same_about_a_wrong_one(tmp_path):
    import subprocess
    import sys

    script = ("import sys\nfrom rankgate.core.benchmark import load_manifest\n"
              "load_manifest('sample_benchmarks/seed-lab')\nprint('tomllib' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False"]
    bad = tmp_path / "benchmark.toml"
    bad.write_text('name = "x"\nk = 3\nk = 4\n')
    with pytest.raises(InputError) as e:
        load_toml(bad)
    assert str(e.value) == f"{bad}:3: invalid TOML: Cannot overwrite a value"
