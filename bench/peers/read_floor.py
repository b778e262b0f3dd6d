"""Not a peer: the read floor. pyarrow reads the run's three columns a score needs (query, document,
score) and nothing else is done; rankgate is measured against it (issue: at most 2x).

    python read_floor.py QRELS RUN   -> JSON {"rows": N} (no means: it scores nothing)
"""

import json
import sys

import pyarrow as pa
import pyarrow.csv as pcsv


def main(_qrels, run):
    tbl = pcsv.read_csv(run, read_options=pcsv.ReadOptions(column_names=["q", "i", "d", "r", "s", "t"]),
                        parse_options=pcsv.ParseOptions(delimiter=" ", quote_char=False, double_quote=False),
                        convert_options=pcsv.ConvertOptions(include_columns=["q", "d", "s"], column_types={
                            "q": pa.string(), "d": pa.string(), "s": pa.float64()}))
    print(json.dumps({"rows": tbl.num_rows}))


if __name__ == "__main__":
    main(*sys.argv[1:3])
