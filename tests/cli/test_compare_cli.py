"""rankgate compare on the command line: JSON by default, a table, Markdown, refusals."""

import json

from rankgate.cli import main
from tests.conftest import SAMPLES, write

OPS = SAMPLES / "ops-handbook"


def run(capsys, *argv):
    code = main(["compare", *(str(a) for a in argv)])
    out, err = capsys.readouterr()
    return code, out, err


def test_json_every_other_run_against_the_policy_baseline(capsys):
    code, out, _ = run(capsys, OPS, "--resamples", "500", "--top", "5")
    assert code == 0
    data = json.loads(out)
    assert data["baseline"] == "bm25-plain" and data["k"] == 5
    assert [c["candidate"] for c in data["candidates"]] == ["bm25-stemmed", "bm25-prf"]
    assert data["measures"] == ["Success@5", "P@5", "R@5", "RR@5", "nDCG@5"]
    prf = data["candidates"][1]
    assert prf["newly_failed"] == ["q-leaked-key"] and len(prf["queries"]) == 5
    top = prf["queries"][0]
    assert top["query"] == "q-leaked-key" and top["status"] == "newly_failed"
    assert top["measures"]["RR@5"] == {"baseline": 1.0, "candidate": 0.0, "delta": -1.0}
    assert top["movement"][0] == {"doc": "netsec-secrets-rotation-02", "grade": 3, "baseline_rank": 1,
                                  "candidate_rank": 6, "move": -5}
    assert prf["summary"]["R@5"]["p_value"] < 0.05


def test_json_text_is_json_dumps_of_itself(capsys):
    """The JSON is written in pieces (core.jsontext.pieces, the queries from their rows): json.dumps's layout."""
    code, out, _ = run(capsys, OPS, "--resamples", "200")
    assert code == 0 and out == json.dumps(json.loads(out), indent=2) + "\n"


def test_emit_json_writes_pieces_and_escapes_what_is_not_ascii(capsys):
    from rankgate.cli.base import emit_json

    emit_json(['{\n  "a": ', '"b"', "\n}"])
    emit_json([])
    emit_json(['"\u00e9\x1b"'])  # (not what json writes with ensure_ascii: then as emit writes it)
    assert capsys.readouterr().out == '{\n  "a": "b"\n}\n\n"\u00e9\\x1b"\n'


def test_json_out_writes_as_emit_json_does_at_every_flush_size(capsys, monkeypatch):
    """JsonOut writes its pieces as they come, a line at a time: the same text as emit_json's (emit of the joined
    text where a piece is not ASCII, from the start of that piece's line), whatever the size it writes at."""
    from rankgate.cli.base import JsonOut, emit
    from rankgate.core.jsontext import dumps, pieces

    data = {"q": [{"doc": f"d{i}", "grade": i % 3, "ranks": [i, None]} for i in range(40)], "x": 1.5}
    cases = [pieces(data), [], [""], ["a\n", ""], ["a", "\n", "b"], ['"\u00e9\x1b"'],
             ["{\n", '  "a": 1,\n', '  "b": "\u00e9"\n', "}"], ["x\ny", "\u00e9\x1b\n", "::error::z", "\n"],
             ['{\n  "a": ', '"b"', "\n}"]]
    for size in (1, 2, 7, 1 << 20):
        monkeypatch.setattr(JsonOut, "AT_ONCE", size)
        for parts in cases:
            text = "".join(parts)
            if all(map(str.isascii, parts)):
                expected = text if parts and parts[-1].endswith("\n") else text + "\n"
            else:  # (each case's first non-ASCII piece's line starts the text, or after a line written as is)
                emit(text)
                expected = capsys.readouterr().out
            out = JsonOut()
            out += iter(parts)
            out.close()
            assert capsys.readouterr().out == expected, (size, parts)
        out = JsonOut()
        pieces(data, out=out)
        out.close()
        assert capsys.readouterr().out == dumps(data) + "\n"


def test_table_and_markdown(tmp_path, capsys):
    code, out, _ = run(capsys, OPS, "--candidate", "bm25-prf", "--format", "table", "-m", "RR@5,R@5",
                       "--markdown", tmp_path / "c.md", "--resamples", "500")
    assert code == 0
    assert "candidate bm25-prf" in out and "q-leaked-key" in out and "netsec-secrets-rotation-02 1->6" in out
    assert "critical" in out and "newly failed: q-leaked-key" in out
    text = (tmp_path / "c.md").read_text(encoding="utf-8")
    assert text.startswith("## rankgate compare") and "| RR@5 | 0.8904 | 0.9167 | +0.0263 |" in text
    code, out, _ = run(capsys, OPS, "--candidate", "bm25-prf", "--format", "markdown", "--resamples", "500")
    assert code == 0 and "netsec-secrets-rotation-02 1 → 6" in out


def test_refusals_are_one_line(tmp_path, capsys):
    code, _, err = run(capsys, OPS, "--candidate", "nope")
    assert code == 2 and "unknown run 'nope'" in err
    code, _, err = run(capsys, OPS, "--resamples", "5")
    assert code == 2 and "resamples must be between 100" in err
    q = write(tmp_path / "q.trec", "q1 0 d1 1\n")
    r = write(tmp_path / "r.trec", "q1 Q0 d1 1 1 a\nq1 Q0 d2 2 0.5 a\nq1 Q0 d3 3 0.2 a\n")
    code, _, err = run(capsys, "--qrels", q, "--runs", r, "--k", "3")
    assert code == 2 and "nothing to compare" in err


def test_compare_gate_outputs_and_verify_stay_headless(tmp_path):
    import subprocess
    import sys

    code = (
        "import sys\nfrom rankgate.cli import main\n"
        f"main(['compare', {str(OPS)!r}, '--resamples', '200', '--format', 'table'])\n"
        f"main(['gate', {str(OPS)!r}, '--resamples', '200', '--markdown', {str(tmp_path / 'g.md')!r}, "
        f"'--junit', {str(tmp_path / 'g.xml')!r}, '--receipt', {str(tmp_path / 'r.json')!r}])\n"
        f"rc = main(['receipt', 'verify', {str(tmp_path / 'r.json')!r}])\n"
        "bad = [n for n in ('textual', 'tinydb') if n in sys.modules]\n"
        "assert not bad, bad\nprint('rc', rc)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "rc 0" in out.stdout


def test_the_movement_column_of_compare_table_starts_under_its_head(capsys):
    """The last column (the relevant documents' rank moves) is a list: left-aligned under "movement", no line
    padded at its end (it was right-aligned behind ~80 spaces)."""
    code, out, _ = run(capsys, OPS, "--format", "table", "--resamples", "200")
    lines = out.splitlines()
    heads = [i for i, line in enumerate(lines) if line.startswith("query ") and line.rstrip().endswith("movement")]
    assert heads
    for i in heads:
        at = lines[i].index("movement")
        rows = lines[i + 2:]
        rows = rows[:next((j for j, r in enumerate(rows) if not r.strip()), len(rows))]
        assert rows and all(not r.endswith(" ") and r[at - 2:at] == "  " and r[at] != " " for r in rows
                            if len(r) > at), rows
