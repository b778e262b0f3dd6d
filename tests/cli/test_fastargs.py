"""cli/fastargs.py reads a command's plain words without argparse: the namespace must be argparse's (the same
names in the same order, the same values), and every word it does not read as plain is left to argparse."""

import pytest

from rankgate.cli import COMMANDS, _parser_for, main
from rankgate.cli.fastargs import _Recording, plain_args


def argparse_items(argv: list[str]) -> list[tuple]:
    return list(vars(_parser_for(argv).parse_args(argv)).items())


def plain_items(argv: list[str]) -> list[tuple] | None:
    ns = plain_args(argv, COMMANDS[argv[0]][0])
    return None if ns is None else list(vars(ns).items())


def recorded(command: str):
    from importlib import import_module

    recording = _Recording(command)
    import_module(f"rankgate.cli.{COMMANDS[command][0]}").register(recording)
    return recording.found


PLAIN = [
    ["gate", "sample_benchmarks/seed-lab"],
    ["gate"],
    ["gate", "bench", "--receipt", "r.json", "--markdown", "m.md", "--junit", "j.xml", "--quiet", "-o", "out.json"],
    ["gate", "--qrels", "q.txt", "--runs", "a.txt", "--runs", "b.txt", "--baseline", "a", "--candidate", "b",
     "-m", "AP", "--measure", "nDCG@10", "--k", "5", "--must-pass", "q1", "--must-pass", "q2"],
    ["gate", "bench", "--no-stability", "--jobs", "2", "--seed", "7", "--resamples", "100", "--as-of", "2026-01-01",
     "--allow-snapshot-mismatch", "--with-suggestions", "--validate-only"],
    ["gate", "bench", "--qrels-format", "trec", "--run-format", "jsonl", "--rel-level", "2", "--k", " 3",
     "--missing-queries", "zero", "--short-rankings", "allow", "--k", "1_0"],
    ["gate", "", "--runs", "", "--policy", ""],  # empty words: check_text refuses them after, as before
    ["gate", "bench", "--quiet", "--quiet", "--baseline", "x", "--baseline", "y"],
    ["score", "bench", "-m", "AP", "-m", "nDCG@10", "--format", "trec", "-q", "--trec-eval-version", "9"],
    ["score", "--qrels", "q", "--runs", "r", "-M", "10", "-J", "--run", "r", "--format", "table"],
    ["compare", "bench", "--top", "3", "--candidate", "x", "--candidate", "y", "--format", "markdown",
     "--plot", "p.svg", "--plot-measure", "AP", "--markdown", "m.md"],
    ["validate", "bench", "--format", "text", "--corpus", "c.jsonl", "--queries", "q.jsonl", "--acl", "a.tsv"],
    ["validate"],
]


@pytest.mark.parametrize("argv", PLAIN, ids=lambda a: " ".join(a)[:60])
def test_plain_words_give_argparses_namespace(argv):
    got = plain_items(argv)
    assert got is not None
    assert got == argparse_items(argv)


NOT_PLAIN = [
    ["gate", "--help"], ["gate", "-h"], ["gate", "bench", "--recei", "r.json"], ["gate", "bench", "--receipt=r.json"],
    ["gate", "bench", "--k", "x"], ["gate", "bench", "--qrels-format", "bogus"], ["gate", "bench", "extra"],
    ["gate", "--runs", "a", "bench"], ["gate", "bench", "--k", "-3"], ["gate", "bench", "--jobs", "0"],
    ["gate", "bench", "--"], ["gate", "bench", "--receipt"], ["gate", "bench", "--runs", "a", "b"],
    ["gate", "bench", "--nonsense"], ["gate", "-"], ["gate", "bench", "-q"], ["gate", "bench", "-mAP"],
    ["score", "bench", "--format", "nonsense"], ["labels", "list"], ["receipt", "verify", "r.json"],
]


@pytest.mark.parametrize("argv", NOT_PLAIN, ids=lambda a: " ".join(a)[:60])
def test_other_words_are_left_to_argparse(argv):
    assert plain_items(argv) is None


@pytest.mark.parametrize("argv", [["gate", "bench", "--k", "x"], ["gate", "bench", "extra"],
                                  ["gate", "bench", "--nonsense"], ["gate", "bench", "--qrels-format", "bogus"]])
def test_words_left_to_argparse_still_get_its_error(argv, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: rankgate gate: "), err


def _flag_words(flag) -> list[list[str]]:
    """Each way of giving one flag: each of its spellings, with each of its choices, or a value of its type."""
    if flag.kind in ("store_true", "store_false", "store_const"):
        return [[s] for s in flag.strings]
    values = list(flag.choices) if flag.choices is not None else ["3" if flag.type in (int, float) else "v.txt"]
    if flag.type is not None and flag.type not in (int, float):
        values = ["2"]
    return [[s, v] for s in flag.strings for v in values]


def test_every_flag_of_every_plain_command_gives_argparses_namespace():
    """Every command whose flags are all plain, each flag in each spelling and value, alone and all together."""
    checked = 0
    for command in COMMANDS:
        found = recorded(command)
        if found is None or not found.plain:
            continue
        positional = ["bench"] if any(not f.strings for f in found.flags) else []
        every = [command, *positional]
        for flag in found.flags:
            if not flag.strings:
                continue
            for words in _flag_words(flag):
                argv = [command, *positional, *words]
                assert plain_items(argv) == argparse_items(argv), argv
                checked += 1
            every += _flag_words(flag)[-1]
        assert plain_items(every) == argparse_items(every), every
    assert checked > 100


def test_the_plain_commands_are_the_evaluation_commands_at_least():
    plain = {c for c in COMMANDS if (f := recorded(c)) is not None and f.plain}
    assert {"gate", "score", "compare", "validate"} <= plain
    assert "labels" not in plain and "receipt" not in plain  # subcommands: argparse


def test_a_default_list_is_not_shared_between_calls():
    """argparse's default list of an append flag is the parser's, built anew each call: so is the recording's."""
    first = plain_args(["gate", "bench"], "evaluate")
    first.runs.append("x")
    assert plain_args(["gate", "bench"], "evaluate").runs == []
