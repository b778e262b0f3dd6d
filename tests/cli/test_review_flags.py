"""A mistake in a flag of `rankgate review` is said in one line before the screen opens, exit 2 (newcomer s9,
N15), as a missing --runs file is: a flag cannot be fixed from inside the app."""

import pytest

from rankgate.cli import main
from rankgate.cli.review import NO_TERMINAL
from tests.conftest import write


@pytest.mark.parametrize("flags, said", [
    (["-m", "nDGC@10"], "error: measure: 'nDGC@10': unknown measure; did you mean nDCG@10?"),
    (["--k", "0"], "error: --k: k must be at least 1"),
    (["--policy", "POLICY"], "pol.toml:1: unknown policy key 'must_pas'"),
])
def test_a_flag_typo_is_refused_before_the_screen(tmp_path, capsys, flags, said):
    qrels = write(tmp_path / "qrels.txt", "q1 0 d1 1\n")
    run = write(tmp_path / "run.trec", "q1 Q0 d1 1 1 r\n")
    policy = write(tmp_path / "pol.toml", "must_pas = ['q1']\n")
    argv = ["review", str(qrels), "--runs", str(run)] + [str(policy) if f == "POLICY" else f for f in flags]
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2 and said in err and NO_TERMINAL not in err
    assert len(err.strip().splitlines()) == 1
