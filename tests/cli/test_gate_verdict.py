"""rankgate gate: one verdict line on stderr, the JSON on stdout or in -o FILE, --quiet for no line."""

import json

from rankgate.cli import main
from tests.conftest import SAMPLES

OPS = SAMPLES / "ops-handbook"
LAB = SAMPLES / "seed-lab"


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_reject_names_the_lost_must_pass_query_in_one_line(capsys):
    code, out, err = run(capsys, "gate", OPS, "--resamples", "300")
    assert code == 3 and json.loads(out)["decision"] == "reject"
    assert err == "REJECT bm25-prf vs bm25-plain: must-pass q-leaked-key lost; 14 of 15 checks pass\n"


def test_an_accept_counts_the_checks(capsys):
    code, out, err = run(capsys, "gate", LAB, "--candidate", "candidate_good")
    d = json.loads(out)
    assert code == 0 and d["accepted"] is True
    n = len(d["check_details"])
    assert err == f"ACCEPT candidate_good vs baseline: {n} of {n} checks pass\n"


def test_quiet_prints_no_line_and_o_writes_the_json(capsys, tmp_path):
    target = tmp_path / "result.json"
    code, out, err = run(capsys, "gate", LAB, "--quiet", "-o", target)
    assert code == 3 and out == "" and err == ""
    assert json.loads(target.read_text())["candidate"] == "candidate_bad"


def test_o_never_overwrites_an_input(capsys, tmp_path):
    bench = tmp_path / "lab"
    bench.mkdir()
    for f in LAB.iterdir():
        (bench / f.name).write_bytes(f.read_bytes())
    before = (bench / "qrels.json").read_bytes()
    code, out, err = run(capsys, "gate", bench, "-o", bench / "qrels.json")
    assert code == 2 and "nothing was written" in err
    assert (bench / "qrels.json").read_bytes() == before
    key = tmp_path / "gate.key"
    key.write_text("k" * 32)
    code, out, err = run(capsys, "gate", bench, "--receipt", key, "--sign-key", key)  # never over the key
    assert code == 2 and "is one of this command's input files" in err and key.read_text() == "k" * 32


def test_the_verdict_line_escapes_ids(capsys):
    from rankgate.core.outputs import verdict_line

    line = verdict_line({"accepted": False, "candidate": "c\x1b]0;x\x07", "baseline": "b\n",
                         "check_details": [{"name": "must_pass_queries_hit", "kind": "must_pass", "passed": False,
                                            "failed": ["q\x1b[31m"]}]})
    assert "\x1b" not in line and "\n" not in line and "\x07" not in line
    assert line.startswith("REJECT c") and "0 of 1 checks pass" in line
