"""trec_fast.read_early: a run's first blocks parsed while the qrels are read give exactly what reading the
run afterwards gives, faults included (each met in its place)."""

import numpy as np
import pytest

from tests.conftest import write
from tests.unit.test_jobs import dense_inputs, run_cli

pytest.importorskip("pyarrow")

FIELDS = ("qnames", "duplicates", "n_duplicates", "lines", "top_docs", "keep_top")
ARRAYS = ("num_ret", "jq", "jdoc", "jrank", "top_q", "top_rank")


@pytest.fixture(autouse=True)
def small_blocks(monkeypatch):
    from rankgate.core.formats import trec_fast as fast

    monkeypatch.setattr(fast, "MIN_BYTES", 0)
    monkeypatch.setattr(fast, "BLOCK", 997)


def read(path, qrels, early: bool, **kw):
    """The run read, after read_early has parsed all it may (so that the test does not depend on timing)."""
    from rankgate.core.formats import trec_fast as fast

    if early:
        fast.read_early(str(path))
        fast._EARLY[fast._early_key(str(path))].thread.join()
    try:
        return fast.read_lean_run(str(path), "run", qrels, **kw)
    finally:
        assert fast._early_key(str(path)) not in fast._EARLY  # taken up by the reading


@pytest.mark.parametrize("shuffled", [False, True])  # scattered: ties and duplicates found again in the file
@pytest.mark.parametrize("keep_top", [0, 10])
@pytest.mark.parametrize("jobs", [1, 2])
@pytest.mark.parametrize("early_blocks", [3, 10_000])  # some blocks early, or the whole file
def test_a_run_read_early_is_read_the_same(tmp_path, monkeypatch, shuffled, keep_top, jobs, early_blocks):
    from rankgate.core.formats import read_qrels
    from rankgate.core.formats import trec_fast as fast

    monkeypatch.setattr(fast, "EARLY_BLOCKS", early_blocks)
    q, r, _ = dense_inputs(tmp_path, 11, shuffled, queries=12, duplicate=True)
    qrels = read_qrels(str(q))
    plain = read(r, qrels, False, keep_top=keep_top, jobs=jobs)
    taken = []
    real = fast._Early.take
    monkeypatch.setattr(fast._Early, "take", lambda self: taken.append(list(self.parsed)) or real(self))
    got = read(r, qrels, True, keep_top=keep_top, jobs=jobs)
    assert len(taken) == 1 and plain.lines > 500
    if early_blocks == 3:  # three blocks parsed and hashed early, the rest read after them
        assert len(taken[0]) == 3 and all(isinstance(t, fast._Keyed) for t, _ in taken[0])
    else:  # the whole file, and its end
        assert len(taken[0]) > 10 and taken[0][-1][0] is None
    for field in FIELDS:
        assert getattr(got, field) == getattr(plain, field), field
    for field in ARRAYS:
        assert np.array_equal(getattr(got, field), getattr(plain, field)), field


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_fault_in_the_blocks_read_early_is_met_as_without(tmp_path, monkeypatch, jobs):
    from rankgate.core.errors import InputError
    from rankgate.core.formats import read_qrels
    from rankgate.core.formats import trec_fast as fast

    monkeypatch.setattr(fast, "EARLY_BLOCKS", 10_000)
    q, r, _ = dense_inputs(tmp_path, 12, False, queries=12)
    qrels = read_qrels(str(q))
    lines = r.read_text().splitlines(keepends=True)
    tab = write(tmp_path / "tab.txt", "".join(lines[:30] + [lines[30].replace(" ", "\t", 1)] + lines[31:]))
    assert read(tab, qrels, False, jobs=jobs) is None and read(tab, qrels, True, jobs=jobs) is None  # not plain
    monkeypatch.setattr(fast, "MAX_LINE", 3000)
    long = write(tmp_path / "long.txt", "".join(lines[:40] + [lines[40].replace(" run", " " + "r" * 4000)]
                                                + lines[41:]))
    errors = []
    for early in (False, True):
        with pytest.raises(InputError) as e:
            read(long, qrels, early, jobs=jobs)
        errors.append((e.value.line, e.value.what))
    assert errors[0] == errors[1] and errors[0][0] == 41


def test_score_reads_the_run_early_with_two_jobs_and_prints_the_same(tmp_path, monkeypatch, capsys):
    from rankgate.core.formats import trec_fast as fast

    q, r, _ = dense_inputs(tmp_path, 13, False, queries=12)
    started = []
    real = fast.read_early
    monkeypatch.setattr(fast, "read_early", lambda path: started.append(path) or real(path))
    monkeypatch.setattr("rankgate.cli.evaluate.FAST_MIN_BYTES", 0)
    argv = ["score", "--qrels", q, "--runs", f"mine={r}", "--format", "trec", "-m", "AP,ndcg_cut_10,P@10"]
    outs = [run_cli(capsys, *argv, "--jobs", jobs) for jobs in (1, 2)]
    assert started == [str(r)]  # only with two jobs
    assert outs[0] == outs[1] and outs[0][0] == 0 and "ndcg_cut_10" in outs[0][1]


@pytest.mark.parametrize("command", ["compare", "gate"])
def test_compare_and_gate_read_both_runs_early_and_print_the_same(tmp_path, monkeypatch, capsys, command):
    """compare and the gate read two runs: both are parsed beside the qrels (with two jobs), the same text as
    one job (read one after the other, nothing early); a third run is read the usual way."""
    from rankgate.core.formats import trec_fast as fast

    q, r, b = dense_inputs(tmp_path, 17, False, queries=12)
    third = write(tmp_path / "c.txt", open(b).read().replace(" b\n", " c\n"))
    started = []
    real = fast.read_early
    monkeypatch.setattr(fast, "read_early", lambda path: started.append(path) or real(path))
    monkeypatch.setattr("rankgate.cli.evaluate.FAST_MIN_BYTES", 0)
    argv = [command, "--qrels", q, "--runs", f"mine={r}", "--runs", f"other={b}", "--runs", f"third={third}",
            "--missing-queries", "zero", "--short-rankings", "allow"]
    argv += ["--format", "json"] if command == "compare" else ["--baseline", "mine", "--candidate", "other"]
    outs = [run_cli(capsys, *argv, "--jobs", jobs) for jobs in (1, 2)]
    assert started == [str(r), str(b)]  # only with two jobs, the first two runs
    assert not fast._EARLY  # each taken up by its reading
    assert outs[0][1] == outs[1][1] and '"other"' in outs[0][1]
