"""Not a peer: the read floor. pyarrow reads the run's three columns a score needs (query, document,
score) and nothing else is done; rankgate is measured against it (issue: at most 2x). Given several
runs (`compare` and `gate` read two), it reads each of them, one after the other, as rankgate does.

    python read_floor.py QRELS RUN [RUN ...]   -> JSON {"rows": N} (no means: it scores nothing)
    python read_floor.py --with-qrels QRELS RUN [RUN ...]   the qrels' query, document and grade columns too

The second form (`floor+qrels` in bench_score.py) is a reference row, not the issue's floor: a scorer must
read the judgments too, and with dense qrels (1M judgments beside a 1M-line run) they are as large as the run.
"""

import json
import sys

import pyarrow as pa
import pyarrow.csv as pcsv


def read(run):
    return pcsv.read_csv(run, read_options=pcsv.ReadOptions(column_names=["q", "i", "d", "r", "s", "t"]),
                         parse_options=pcsv.ParseOptions(delimiter=" ", quote_char=False, double_quote=False),
                         convert_options=pcsv.ConvertOptions(include_columns=["q", "d", "s"], column_types={
                             "q": pa.string(), "d": pa.string(), "s": pa.float64()}))


def read_qrels(qrels):
    return pcsv.read_csv(qrels, read_options=pcsv.ReadOptions(column_names=["q", "i", "d", "g"]),
                         parse_options=pcsv.ParseOptions(delimiter=" ", quote_char=False, double_quote=False),
                         convert_options=pcsv.ConvertOptions(include_columns=["q", "d", "g"], column_types={
                             "q": pa.string(), "d": pa.string(), "g": pa.int64()}))


def main(*argv):
    with_qrels = argv[0] == "--with-qrels"
    qrels, *runs = argv[1:] if with_qrels else argv
    rows = sum(read(run).num_rows for run in runs)
    if with_qrels:
        rows += read_qrels(qrels).num_rows
    print(json.dumps({"rows": rows}))


if __name__ == "__main__":
    main(*sys.argv[1:])
