"""The pytest plugin: a release test fails with the lost queries in its message, passes when accepted."""

import pytest

import shutil

from tests.conftest import SAMPLES

pytest_plugins = ["pytester"]

# Whether or not the entry point is installed, load the plugin once, under its module's name (in a
# subprocess: an in-process run shares other plugins' session state with this one).
PLUGIN = ["-p", "no:rankgate", "-p", "rankgate.pytest_plugin"]


@pytest.mark.slow
def test_a_rejected_release_fails_naming_the_lost_queries(pytester):
    shutil.copytree(SAMPLES / "ops-handbook", pytester.path / "benchmarks" / "support")
    pytester.makepyfile(test_release='''
        def test_release(rankgate_gate):
            rankgate_gate("benchmarks/support", baseline="bm25-plain", candidate="bm25-prf", resamples=300)
    ''')
    result = pytester.runpytest_subprocess(*PLUGIN)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "*REJECT bm25-prf vs bm25-plain: must-pass q-leaked-key lost; 14 of 15 checks pass*",
        "*must_pass_queries_hit: no relevant document in the top 5 for q-leaked-key*",
        "*q-leaked-key: missing ir-security-incident-01, netsec-secrets-rotation-02*",
    ])


@pytest.mark.slow
def test_an_accepted_release_passes_and_returns_the_result(pytester):
    shutil.copytree(SAMPLES / "seed-lab", pytester.path / "lab")
    pytester.makepyfile(test_release='''
        def test_release(rankgate_gate):
            result = rankgate_gate("lab", baseline="baseline", candidate="candidate_good")
            assert result["accepted"] is True and result["candidate"] == "candidate_good"
    ''')
    pytester.runpytest_subprocess(*PLUGIN).assert_outcomes(passed=1)


@pytest.mark.slow
def test_invalid_input_fails_with_rankgates_one_line(pytester):
    pytester.makepyfile(test_release='''
        def test_release(rankgate_gate):
            rankgate_gate("no-such-folder", baseline="a", candidate="b")
    ''')
    result = pytester.runpytest_subprocess(*PLUGIN)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*rankgate gate could not run (exit 2)*", "*no-such-folder*"])
