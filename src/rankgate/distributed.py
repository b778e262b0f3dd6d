"""Score a run too large for one machine on Dask's distributed scheduler (`pip install 'rankgate[dask]'`;
docs/distributed.md).

    from distributed import Client
    from rankgate.distributed import score_on_dask
    scores = score_on_dask(Client("scheduler:8786"), "qrels.txt", "s3://bucket/run.trec", ["nDCG@10", "AP"])
    scores.summary()

Dask does the scheduling: `dask.bytes.read_bytes` cuts the run file (a path or any fsspec URL every
worker can read) into blocks of whole lines; one task a block parses it with pyarrow's CSV reader and
splits its rows by query (a hash of the query ID) into `partitions` Arrow tables; one task a partition
gathers its tables, so it holds every line of its queries, and scores them with the engine's own
per-query kernel (core/engine.py, the one `rankgate score` uses). Every per-query value is the one the
single-process path gives, and the means are summed in its order (queries by ID bytes), so they are
equal too. The qrels are read by every scoring task: a path every worker can open.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rankgate.core.engine import Scores

COLUMNS = ["q", "i", "d", "r", "s", "t"]  # query Q0 document rank score tag


def score_on_dask(client, qrels: str, run: str, measures, *, partitions: int | None = None,
                  blocksize: int = 64 << 20, name: str | None = None, rel_level: int = 1,
                  missing: str = "error") -> Scores:
    """The run's Scores (per query and summary), computed on the Dask cluster `client` is connected to.
    `partitions`: how many groups of queries are scored apart (default: twice the workers' threads);
    `missing="zero"` scores the qrels' queries the run has no line for as 0 (trec_eval -c)."""
    import dask
    from dask.bytes import read_bytes

    from rankgate.core.formats.trec import run_name_from_path
    from rankgate.core.measures import parse_measures

    names = [m.name for m in (parse_measures(measures) if isinstance(measures, str) else
                              parse_measures(",".join(measures)))]
    if partitions is None:
        partitions = 2 * max(1, sum(client.nthreads().values()))
    _, blocks = read_bytes(run, delimiter=b"\n", blocksize=blocksize)
    split = dask.delayed(_split_by_query, nout=partitions, pure=True)
    pieces = [split(block, partitions) for block in blocks[0]]
    parts = [dask.delayed(_score_partition, pure=True)(qrels, [p[i] for p in pieces], names, i, partitions,
                                                       rel_level, missing)
             for i in range(partitions)]
    results = client.compute(parts, sync=True)
    return _merged(results, names, name or run_name_from_path(run))


def _split_by_query(block: bytes, partitions: int) -> list:
    """A block of whole lines as `partitions` Arrow tables (query, document, score), by query."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.csv as pcsv

    from rankgate.core.formats.trec_fast import _ints, hash_strings

    if not block:
        empty = pa.table({"q": pa.array([], pa.string()), "d": pa.array([], pa.string()),
                          "s": pa.array([], pa.float64())})
        return [empty] * partitions
    tbl = pcsv.read_csv(pa.py_buffer(block), read_options=pcsv.ReadOptions(column_names=COLUMNS),
                        parse_options=pcsv.ParseOptions(delimiter=" ", quote_char=False, double_quote=False),
                        convert_options=pcsv.ConvertOptions(include_columns=["q", "d", "s"], column_types={
                            "q": pa.string(), "d": pa.string(), "s": pa.float64()}, strings_can_be_null=False))
    tbl = tbl.combine_chunks()
    part = (hash_strings(tbl["q"].chunk(0)) % np.uint64(partitions)).astype(np.int64)
    return [tbl.take(_ints(np.flatnonzero(part == i))) for i in range(partitions)]


def _partition_of(qids: list[str], partitions: int):
    """Each query ID's partition, as _split_by_query deals them."""
    import numpy as np
    import pyarrow as pa

    from rankgate.core.formats.trec_fast import hash_strings

    return (hash_strings(pa.array(qids, pa.string())) % np.uint64(partitions)).astype(np.int64)


def _score_partition(qrels_path: str, tables: list, measures: list[str], part: int, partitions: int,
                     rel_level: int, missing: str) -> tuple[list[str], dict[str, list[float]]]:
    """(query IDs, values per measure) of one partition's queries: the engine's per-query kernel on a Run
    of every line of those queries."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    from rankgate.core.engine import evaluate
    from rankgate.core.formats import read_qrels
    from rankgate.core.formats.trec_fast import _np
    from rankgate.core.measures import parse_measures
    from rankgate.core.model import Run

    qrels = read_qrels(qrels_path)  # its own catalog: the run's documents join it
    tbl = pa.concat_tables(tables).combine_chunks()
    q = pc.dictionary_encode(tbl["q"].chunk(0)) if tbl.num_rows else None
    d = pc.dictionary_encode(tbl["d"].chunk(0)) if tbl.num_rows else None
    cat = qrels.catalog
    qcode = cat.queries.extend(q.dictionary.to_pylist())[_np(q.indices)] if q is not None else np.zeros(0, np.int32)
    dcode = cat.docs.extend(d.dictionary.to_pylist())[_np(d.indices)] if d is not None else np.zeros(0, np.int32)
    score = _np(tbl["s"].chunk(0)) if tbl.num_rows else np.zeros(0)
    run = Run("run", "", cat, qcode.astype(np.int32), dcode.astype(np.int32), score,
              np.arange(1, len(score) + 1, dtype=np.int64), format="trec",
              query_codes=sorted(set(qcode.tolist())))
    wanted = None
    if missing == "zero":  # this partition's qrels queries, ranked or not
        qids = qrels.query_ids
        wanted = [qid for qid, p in zip(qids, _partition_of(qids, partitions).tolist()) if p == part] if qids else []
    scores = evaluate(qrels, run, parse_measures(",".join(measures)), rel_level=rel_level, missing=missing,
                      queries=wanted)
    return scores.qids, {m.name: scores.values[m].tolist() for m in scores.values}


def _merged(results, measures: list[str], name: str) -> Scores:
    """The partitions' values as one Scores, queries in the engine's order (by ID bytes), so that the
    means are summed as the single-process path sums them."""
    import numpy as np

    from rankgate.core.engine import Scores
    from rankgate.core.measures import ByMeasure, parse_measures

    qids = [q for got, _ in results for q in got]
    order = sorted(range(len(qids)), key=lambda i: qids[i].encode("utf-8"))
    values = {m: np.array([v for _, vals in results for v in vals[m]], np.float64)[order] for m in measures}
    return Scores(name, [qids[i] for i in order],
                  ByMeasure((m, values[m.name]) for m in parse_measures(",".join(measures))))
