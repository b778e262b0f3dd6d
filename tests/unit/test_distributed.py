"""The Dask recipe (rankgate.distributed, docs/distributed.md): a run scored on a local cluster of two
workers equals the single-process path, value for value, on the DL19 runs."""

import numpy as np
import pytest

from tests.conftest import CONFORMANCE

pytest.importorskip("pyarrow")
pytest.importorskip("distributed", reason="dask[distributed] is not installed: pip install 'rankgate[dask]'")

DL19 = CONFORMANCE / "trec-dl-2019-passage"
MEASURES = ["AP", "nDCG@10", "nDCG", "RR@10", "R@100", "R@1000", "P@10", "bpref", "Judged@10", "Rprec"]


@pytest.fixture(scope="module")
def client():
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0") as cluster, \
            Client(cluster) as c:
        yield c


def single_process(qrels, run, missing):
    import rankgate

    q = rankgate.qrels(str(qrels))
    return rankgate.evaluate(q, rankgate.run(str(run), catalog=q.catalog), MEASURES, missing=missing)


@pytest.mark.slow
@pytest.mark.skipif(not DL19.is_dir(), reason=f"no DL 2019 data at {DL19} (RANKGATE_CONFORMANCE names another place)")
@pytest.mark.parametrize("missing", ["error", "zero"])
def test_every_dl19_run_scores_on_the_cluster_as_in_one_process(client, missing):
    from rankgate.distributed import score_on_dask

    qrels = DL19 / "qrels.dl19-passage.txt"
    runs = sorted((DL19 / "runs").glob("*.trec"))
    assert len(runs) >= 6
    for run in runs:
        one = single_process(qrels, run, missing)
        # blocks of 64 KB: lines and queries cut across blocks, three partitions over two workers
        many = score_on_dask(client, str(qrels), str(run), MEASURES, partitions=3, blocksize=64 << 10,
                             missing=missing)
        assert many.qids == one.qids, run.name
        for m in one.values:
            assert np.array_equal(many.values[m.name], one.values[m]), (run.name, m.name)
        assert dict(many.summary()) == {m: v for m, v in one.summary().items()}, run.name


def test_a_small_run_with_ties_and_a_query_in_every_block(client, tmp_path):
    """Queries cut across many blocks, score ties (settled by document ID, as trec_eval does), a query
    nobody ranked (missing="zero")."""
    from rankgate.distributed import score_on_dask

    rng = np.random.default_rng(5)
    lines = [f"q{q % 7} Q0 d{d} 0 {rng.integers(0, 5) / 2} t\n" for q in range(700) for d in [q]]
    run = tmp_path / "run.trec"
    run.write_text("".join(lines[i] for i in rng.permutation(len(lines))))
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"q{q % 8} 0 d{q} {q % 3}\n" for q in range(0, 700, 3)))
    one = single_process(qrels, run, "zero")
    many = score_on_dask(client, str(qrels), str(run), MEASURES, partitions=4, blocksize=512, missing="zero")
    assert many.qids == one.qids and "q7" in many.qids
    for m in one.values:
        assert np.array_equal(many.values[m.name], one.values[m]), m.name
