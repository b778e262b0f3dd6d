"""Not a peer: the read floor. pyarrow reads the run's three columns a score needs (query, document,
score) and nothing else is done; rankgate is measured against it (issue: at most 2x). Given several
runs (`compare` and `gate` read two), it reads each of them, one after the other, as rankgate does.

    python read_floor.py QRELS RUN [RUN ...]   -> JSON {"rows": N} (no means: it scores nothing)
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


def main(_qrels, *runs):
    print(json.dumps({"rows": sum(read(run).num_rows for run in runs)}))


if __name__ == "__main__":
    main(*sys.argv[1:])
