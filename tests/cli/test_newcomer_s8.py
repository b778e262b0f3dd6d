"""Small CLI wording items from the s8 newcomer walk-through (F16): each says what the user needs, in one line."""

from __future__ import annotations

import shutil

import pytest

from tests.conftest import SAMPLES


@pytest.fixture
def lab(tmp_path):
    folder = tmp_path / "tb"
    shutil.copytree(SAMPLES / "seed-lab", folder)
    return folder


@pytest.mark.parametrize("value, said", [('"three"', 'must be an integer, found a string ("three")'),
                                         ("1.5", "must be an integer, found a number (1.5)"),
                                         ("0", "must be at least 1")])
def test_a_benchmark_toml_key_of_the_wrong_type_is_named_at_its_line(cli, lab, value, said):
    toml = lab / "benchmark.toml"
    lines = toml.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("k = "))
    lines[at] = f"k = {value}"
    toml.write_text("\n".join(lines) + "\n")
    code, _, err = cli("gate", lab)
    assert code == 2 and err == f"error: {toml}:{at + 1}: key 'k' {said}\n"
    assert "a int" not in err


def test_a_measure_asked_for_that_is_a_default_column_is_printed_once(cli):
    code, out, _ = cli("score", SAMPLES / "three-questions", "-m", "RR@3,recip_rank_cut_3,nDCG@3", "--format", "table")
    header = out.splitlines()[1].split()
    assert code == 0 and header == ["query", "Success@3", "P@3", "R@3", "RR@3", "nDCG@3", "missing"]


def test_a_receipt_difference_between_two_long_texts_shows_where_they_differ():
    """`receipt verify` cut both long strings at 80 characters: the two sides of a difference looked the same."""
    from rankgate.core.receipt import diff

    head = "could flip: judge these 3 documents: q-recovery/doc-storage-price, q-recovery/"
    out: list[str] = []
    diff({"summary": head + "doc-rpo, q-restore/doc-x"}, {"summary": head + "doc-rto, q-restore/doc-x"},
         "stability", out)
    (line,) = out
    receipt, _, recomputed = line.partition(": receipt ")[2].partition(", recomputed ")
    assert receipt != recomputed and "doc-rpo" in receipt and "doc-rto" in recomputed
    assert receipt.count('"') == 2 and recomputed.count('"') == 2  # each quoted whole


def test_a_short_option_the_command_lacks_is_named_with_the_command_and_its_likely_flag(cli):
    """`gate -q` said `rankgate: unrecognized arguments: -q`, naming no command and giving no hint."""
    code, out, err = cli("gate", SAMPLES / "seed-lab", "-q")
    assert code == 2 and out == ""
    assert err == ("error: rankgate gate: unrecognized arguments: -q (rankgate gate has no -q; did you mean "
                   "--quiet?)\n")


def test_a_broken_run_the_gate_does_not_compare_is_still_refused_and_says_so(cli, tmp_path):
    """Decision (s8 newcomer F16): the gate keeps refusing a run file listed in `runs` that does not read,
    even when it is neither the baseline nor the candidate (the receipt hashes every run; a broken input in a
    committed benchmark fails CI where it is); the line now says it is not the pair and how to go on. A
    broken baseline or candidate keeps its plain error."""
    folder = tmp_path / "vb"
    shutil.copytree(SAMPLES / "ops-handbook", folder)
    run = folder / "runs" / "bm25-stemmed.jsonl"
    lines = run.read_text().splitlines()
    lines[4] = lines[4].replace('"score": ', '"score": "high", "was": ', 1)
    run.write_text("\n".join(lines) + "\n")
    code, out, err = cli("gate", folder)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith(f"error: {run}:5: ranking[0].score must be a finite number (not the gate's baseline "
                          "bm25-plain or candidate bm25-prf, which read fine;")
    assert "take it out of the runs in benchmark.toml" in err
    toml = folder / "benchmark.toml"
    toml.write_text(toml.read_text().replace('candidate = "bm25-prf"', 'candidate = "bm25-stemmed"'))
    code, _, err = cli("gate", folder)
    assert code == 2 and err == f"error: {run}:5: ranking[0].score must be a finite number\n"
