"""What a newcomer met on the CLI (notes/s7/newcomer.md): one run gated against itself, the real cause of a
bad file first, a hint for a misspelt option or measure, a file given in the wrong role."""

import json
import shutil

from rankgate.cli import main
from tests.conftest import SAMPLES, write


def cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


# ---- F14: a gate on one run compares nothing --------------------------------------------------------

def test_gate_on_a_folder_with_one_run_refuses_to_compare_it_with_itself(capsys):
    for name, run in (("docs-assistant", "assistant"), ("three-questions", "golden")):
        code, out, err = cli(capsys, "gate", SAMPLES / name)
        assert code == 2 and out == "" and "ACCEPT" not in err
        assert err.strip().splitlines() == [
            f"error: gate: only one run ({run}): a gate compares two (recall_not_lower, mrr_not_lower would compare "
            f"{run} with itself); add the run to compare (--runs, or `runs` in benchmark.toml) and name both with "
            "--baseline/--candidate, or use `rankgate score`"]


def test_gate_naming_one_run_twice_among_several_is_refused_too(tmp_path, capsys):
    q = write(tmp_path / "q.json", '{"q1": ["d1"]}')
    r = write(tmp_path / "r.json", '{"a": {"q1": ["d1", "d2"]}, "b": {"q1": ["d2", "d1"]}}')
    code, _, err = cli(capsys, "gate", "--qrels", q, "--runs", r, "--k", "2", "--baseline", "a", "--candidate", "a")
    assert code == 2 and "the baseline and the candidate are both 'a': a gate compares two runs" in err


def test_gate_on_one_run_with_absolute_rules_only_gates_it_on_those(tmp_path, capsys):
    folder = tmp_path / "da"
    shutil.copytree(SAMPLES / "docs-assistant", folder)
    toml = folder / "benchmark.toml"
    rule = '\n[[gate.rules]]\ncheck = "floor"\nmeasure = "R@3"\nmin = {}\n'
    toml.write_text(toml.read_text() + rule.format(0.8))  # mean Recall@3 is 0.833
    code, out, err = cli(capsys, "gate", folder)
    data = json.loads(out)
    assert code == 0 and data["no_baseline"] is True
    assert data["checks"] == {"R@3_floor": True, "must_pass_queries_hit": True}
    assert err.strip() == "ACCEPT assistant (no baseline: absolute rules only): 2 of 2 checks pass"
    toml.write_text(toml.read_text().replace("min = 0.8", "min = 0.9"))
    code, out, err = cli(capsys, "gate", folder)
    assert code == 3 and err.startswith("REJECT assistant (no baseline: absolute rules only): ")


# ---- F11: the line that is wrong comes first -------------------------------------------------------

def test_a_repeated_line_is_reported_first(tmp_path, capsys):
    qrels = write(tmp_path / "q.trec", "".join(f"q{i} 0 d{i} 1\n" for i in range(1, 5)))
    lines = [f"q1 Q0 d{i} {i} {1 - i / 10} t\n" for i in range(1, 6)]
    run = write(tmp_path / "dup.trec", "".join(lines) + lines[2])  # line 6 repeats line 3; q2..q4 unranked
    other = write(tmp_path / "b.trec", "".join(lines))
    for command in ("score", "gate"):
        extra = ["--runs", other] if command == "gate" else []
        code, _, err = cli(capsys, command, "--qrels", qrels, "--runs", run, *extra)
        errors = err.strip().splitlines()
        assert code == 2 and len(errors) >= 2
        assert errors[0] == f"error: {run}:6: run 'dup' ranks document 'd3' twice for query 'q1'"
        assert "has no ranking for 3 qrels queries" in errors[1]


# ---- F18: the docs say the k raw files really get ----------------------------------------------------

def test_the_docs_state_the_k_that_raw_files_get(capsys):
    from rankgate.core.policy import RAW_K
    from tests.conftest import SAMPLES as samples

    three = samples / "three-questions"
    code, out, _ = cli(capsys, "score", "--qrels", three / "qrels.trec", "--runs", three / "run.trec",
                       "--short-rankings", "allow", "--format", "table")
    assert code == 0 and f"P@{RAW_K}" in out
    root = samples.parent
    assert f"cuts at k = {RAW_K} unless" in " ".join((root / "README.md").read_text().split())
    assert f"({RAW_K} on raw files without `--k`)" in " ".join((root / "docs" / "review.md").read_text().split())
    for doc in [root / "README.md", *sorted((root / "docs").glob("*.md"))]:
        flat = " ".join(doc.read_text().split())
        assert "cut at k = 3" not in flat and "cut at 3" not in flat, doc


# ---- F10: a misspelt option or measure gets the likely one ----------------------------------------------

def test_a_misspelt_option_gets_did_you_mean_and_no_word_about_runs(capsys):
    lab = SAMPLES / "seed-lab"
    code, out, err = cli(capsys, "gate", lab, "--recieipt", "x.json")
    assert code == 2 and out == ""
    assert err.strip() == "error: rankgate gate: unrecognized arguments: --recieipt x.json (did you mean --receipt?)"
    code, _, err = cli(capsys, "compare", lab, "--baslein=a")
    assert code == 2 and err.strip().endswith("(did you mean --baseline?)")
    code, _, err = cli(capsys, "gate", lab, "stray-word-not-a-file")  # not a file: no hint about runs
    assert code == 2 and err.strip() == "error: rankgate gate: unrecognized arguments: stray-word-not-a-file"


def test_a_misspelt_measure_gets_did_you_mean(capsys):
    lab = SAMPLES / "seed-lab"
    for typed, meant in (("nDGC@10", "nDCG@10"), ("recip_rnak", "recip_rank")):  # ndcg_cut.10 is valid
        code, out, err = cli(capsys, "score", lab, "-m", typed)
        assert code == 2 and out == ""
        assert err.strip() == (f"error: measure: {typed!r}: unknown measure; did you mean {meant}? "
                               "(`rankgate docs measures` lists them)")
    code, _, err = cli(capsys, "score", lab, "-m", "zzzz@10")  # nothing close: the families
    assert code == 2 and "did you mean" not in err and "rankgate computes P, R, RR, nDCG" in err


# ---- F12, F21: a file given as qrels that is something else says what it looks like ----------------------

def test_a_queries_file_given_as_qrels_says_it_looks_like_one(tmp_path, capsys):
    topics = write(tmp_path / "topics.tsv", "156493\tdo goldfish grow\n1037798\twho is robert gray\n")
    run = write(tmp_path / "r.trec", "156493 Q0 d1 1 1.0 t\n")
    code, out, err = cli(capsys, "score", "--qrels", topics, "--runs", run)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert err.strip() == (f"error: {topics}:1: grade 'grow' is not an integer (expected a whole number such as 0, "
                           "1, 2 or -1); this looks like a queries file (2 tab-separated columns, text in the "
                           "second): give it with --queries")
    five = write(tmp_path / "five.tsv", "1037798\twho is robert gray\n")  # 5 words: the column count
    code, _, err = cli(capsys, "score", "--qrels", five, "--runs", run)
    assert code == 2 and "5 columns, expected 4" in err and "this looks like a queries file" in err
    qrels = write(tmp_path / "q.trec", "156493 0 d1 x\n")  # a bad grade in real qrels: no such hint
    code, _, err = cli(capsys, "score", "--qrels", qrels, "--runs", run)
    assert code == 2 and "grade 'x' is not an integer" in err and "looks like" not in err
    # the same file given as a run (the newcomer's DL19 topics): said too
    qrels = write(tmp_path / "good.trec", "156493 0 d1 1\n")
    code, _, err = cli(capsys, "score", "--qrels", qrels, "--runs", topics)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert err.strip().endswith("4 columns, expected 6: query Q0 document rank score tag; this looks like a queries "
                                "file (2 tab-separated columns, text in the second): give it with --queries")
    short = write(tmp_path / "short.trec", "156493 Q0 d1 1\n")  # a short run line with no text: no such hint
    code, _, err = cli(capsys, "score", "--qrels", qrels, "--runs", short)
    assert code == 2 and "4 columns, expected 6" in err and "queries file" not in err


def test_a_jsonl_run_or_corpus_given_as_qrels_says_what_a_judgment_holds(capsys):
    ops = SAMPLES / "ops-handbook"
    run = ops / "runs" / "bm25-plain.jsonl"
    said = {
        run: ":2: field 'doc' must be a non-empty string; a judgment line holds \"query\", \"doc\" and \"grade\" "
             "(this looks like a run: it has 'ranking'; give it with --runs)",
        ops / "corpus.jsonl": ":1: field 'query' must be a non-empty string; a judgment line holds \"query\", "
                              "\"doc\" and \"grade\" (this looks like a corpus: documents with an ID and a text; "
                              "give it with --corpus)",
        ops / "queries.jsonl": ":1: field 'query' must be a non-empty string; a judgment line holds \"query\", "
                               "\"doc\" and \"grade\" (this looks like a queries file or a corpus: an ID and a "
                               "text; give it with --queries or --corpus)",
    }
    for qrels, tail in said.items():
        code, out, err = cli(capsys, "score", "--qrels", qrels, "--runs", run)
        assert code == 2 and out == "" and err.strip() == f"error: {qrels}{tail}"


# ---- F13: benchmark.toml's errors in its own words, at the key's line -----------------------------------

def test_benchmark_toml_gate_errors_name_the_table_and_the_line(tmp_path, capsys):
    folder = tmp_path / "b1"
    shutil.copytree(SAMPLES / "seed-lab", folder)
    toml = folder / "benchmark.toml"
    original = toml.read_text()
    n = len(original.splitlines())
    for added, said in (('k = "five"', "[gate] key 'k' must be an integer, found a string"),
                        ("kk = 3", "unknown [gate] key 'kk' (expected one of ")):
        toml.write_text(original + added + "\n")  # after [gate]: a key of that table
        code, out, err = cli(capsys, "gate", folder)
        assert code == 2 and out == "" and err.startswith(f"error: {toml}:{n + 1}: {said}")
    policy = write(tmp_path / "p.toml", "# a policy\nk = 0\n")
    code, _, err = cli(capsys, "gate", SAMPLES / "seed-lab", "--policy", policy)
    assert code == 2 and err.strip() == f"error: {policy}:2: policy key 'k' must be at least 1"


# ---- F15: the gate's result is not its receipt ----------------------------------------------------------

def test_receipt_verify_on_the_gates_result_says_which_flag_writes_a_receipt(tmp_path, capsys):
    result = tmp_path / "result.json"
    code, _, _ = cli(capsys, "gate", SAMPLES / "seed-lab", "-o", result, "--quiet")
    assert code == 3 and result.is_file()
    code, out, err = cli(capsys, "receipt", "verify", result)
    assert code == 2 and out == ""
    assert err.strip() == (f"error: {result}: not a rankgate receipt (expected 'inputs' and 'result'); this is a "
                           "gate's result: `-o` writes the result, `--receipt FILE` writes a receipt")
    other = write(tmp_path / "other.json", '{"a": 1}')
    code, _, err = cli(capsys, "receipt", "verify", other)
    assert code == 2 and err.strip() == f"error: {other}: not a rankgate receipt (expected 'inputs' and 'result')"


# ---- F24: a run lacking judged queries: what each face does, as the docs say ------------------------------

def test_a_run_lacking_judged_queries_score_stops_trec_eval_and_evaluate_average_what_it_ranks(tmp_path, capsys):
    import rankgate

    qrels = write(tmp_path / "q.trec", "q1 0 d1 1\nq2 0 d2 1\n")
    run = write(tmp_path / "one.trec", "q1 Q0 d1 1 1.0 t\n")
    code, out, err = cli(capsys, "score", "--qrels", qrels, "--runs", run, "-m", "P@1", "--short-rankings", "allow")
    assert code == 2 and out == "" and "has no ranking for 1 qrels query: 'q2'" in err and "--missing-queries zero" in err
    code, out, err = cli(capsys, "trec_eval", "-m", "P.1", qrels, run)
    assert code == 0 and "P_1                   \tall\t1.0000" in out and "trec_eval 9" in err
    scores = rankgate.evaluate(str(qrels), str(run), "P@1")
    assert scores.qids == ["q1"]
    assert rankgate.evaluate(str(qrels), str(run), "P@1", missing="zero").qids == ["q1", "q2"]
    readme = " ".join((SAMPLES.parent / "README.md").read_text().split())
    assert "One case stops `score` (exit 2, naming the queries): a judged query the run does not rank" in readme


# ---- F25: a damaged snapshot with no backup: no `labels recover` that cannot work ----------------------

def test_a_damaged_snapshot_without_backup_says_what_to_do_not_recover(tmp_path, capsys):
    qrels = SAMPLES / "three-questions" / "qrels.trec"
    db = tmp_path / "w.json"
    assert cli(capsys, "labels", "import", "--db", db, "--reviewer", "me", qrels)[0] == 0
    broken = tmp_path / "brk.json"  # a copy of the snapshot alone, cut short: no .bak, no journal
    broken.write_bytes(db.read_bytes()[:100])
    code, _, err = cli(capsys, "labels", "export", "--db", broken)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "labels recover" not in err
    assert (f"there is no backup copy (.bak) to recover from: move it aside (`mv {broken} {broken}.damaged`, "
            f"with its .journal and .history) and import the labels again from your exported qrels "
            f"(`rankgate labels import --db {broken} QRELS`)") in err
    code, _, err = cli(capsys, "labels", "recover", "--db", broken)
    assert code == 2 and "nothing to recover from: move it aside" in err
    (tmp_path / "brk.json.bak").write_bytes(db.read_bytes())  # with a backup, recover is the way back
    code, _, err = cli(capsys, "labels", "export", "--db", broken)
    assert code == 2 and f"`rankgate labels recover --db {broken}` rebuilds the workspace" in err


# ---- F16: --db FILE is several files, and the help and docs say so -------------------------------------

def test_the_db_help_and_docs_name_every_file_of_a_workspace(tmp_path, capsys):
    import pytest

    from rankgate.store.paths import BACKUP, HISTORY, JOURNAL, JOURNAL_PREV, LOCK

    with pytest.raises(SystemExit):
        main(["labels", "export", "--help"])
    flat = " ".join(capsys.readouterr().out.split())
    assert "FILE.journal, FILE.history and FILE.lock beside it belong to it: a backup copies them all" in flat
    db = tmp_path / "work.json"
    assert cli(capsys, "labels", "import", "--db", db, "--reviewer", "me", SAMPLES / "three-questions" / "qrels.trec")[0] == 0
    beside = {p.name[len(db.name):] for p in tmp_path.iterdir() if p.name.startswith(db.name)} - {""}
    assert beside and beside <= {JOURNAL, HISTORY, LOCK, BACKUP, HISTORY + BACKUP, JOURNAL_PREV}
    labels_md = (SAMPLES.parent / "docs" / "labels.md").read_text()
    for suffix in (JOURNAL, HISTORY, LOCK, BACKUP, HISTORY + BACKUP, JOURNAL_PREV):
        assert f"`work.json{suffix}`" in labels_md


def test_a_one_run_gate_on_absolute_rules_writes_a_receipt_that_verifies(tmp_path, capsys):
    three = SAMPLES / "three-questions"
    policy = write(tmp_path / "p.toml", '[[rules]]\ncheck = "floor"\nmeasure = "R@3"\nmin = 0.5\n')
    receipt = tmp_path / "r.json"
    code, out, err = cli(capsys, "gate", "--qrels", three / "qrels.trec", "--runs", three / "run.trec", "--k", "3",
                         "--policy", policy, "--receipt", receipt)
    assert code == 0 and json.loads(out)["no_baseline"] is True
    assert err.strip() == "ACCEPT run (no baseline: absolute rules only): 2 of 2 checks pass"
    code, _, err = cli(capsys, "receipt", "verify", receipt)
    assert code == 0, err


def test_the_markdown_of_a_one_run_gate_says_there_is_no_baseline(tmp_path, capsys):
    three = SAMPLES / "three-questions"
    policy = write(tmp_path / "p.toml", '[[rules]]\ncheck = "floor"\nmeasure = "R@3"\nmin = 0.5\n')
    summary = tmp_path / "gate.md"
    code, _, _ = cli(capsys, "gate", "--qrels", three / "qrels.trec", "--runs", three / "run.trec", "--k", "3",
                     "--policy", policy, "--markdown", summary, "--quiet")
    assert code == 0 and "Candidate **run** no baseline: absolute rules only, k = 3" in summary.read_text()
    assert "against baseline" not in summary.read_text()


def test_a_negative_cutoff_says_the_cutoff_must_be_at_least_1(capsys):
    for typed in ("P@-1", "nDCG(judged_only=True)@-5"):
        code, _, err = cli(capsys, "score", SAMPLES / "seed-lab", "-m", typed)
        assert code == 2 and err.startswith(f"error: measure: {typed!r}: the cutoff must be at least 1 (expected e.g.")


def test_labels_set_without_reason_names_the_command_not_the_workspace_file(tmp_path, capsys):
    db = tmp_path / "w.json"
    assert cli(capsys, "labels", "import", "--db", db, "--reviewer", "me", SAMPLES / "three-questions" / "qrels.trec")[0] == 0
    code, _, err = cli(capsys, "labels", "set", "--db", db, "--reviewer", "me", "q1", "zz", "1")
    assert code == 2 and err.strip() == ("error: labels set: a new label needs --reason (why is 'zz' graded 1 for "
                                         "'q1'?)")


# ---- F30: validate lists every problem, a run that cannot be read does not hide the next one's -----------

def test_validate_reads_the_other_runs_when_one_cannot_be_read(tmp_path, capsys):
    qrels = write(tmp_path / "q.trec", "q1 0 d1 1\n")
    bad = write(tmp_path / "bad.trec", "q1 Q0 d1 1 1.0 t\nq1 Q0 d2 2 NaNx t\n")
    dup = write(tmp_path / "dup.trec", "q1 Q0 d1 1 1.0 t\nq1 Q0 d2 2 0.5 t\nq1 Q0 d1 3 0.2 t\n")
    code, out, err = cli(capsys, "validate", "--qrels", qrels, "--runs", bad, "--runs", dup, "--k", "1",
                         "--format", "json")
    assert code == 2
    rules = [(p["where"], p["rule"]) for p in json.loads(out)["problems"]]
    assert rules == [(f"{bad}:2", "unreadable"), (f"{dup}:3", "duplicate-ranked")]
    assert err.strip().splitlines()[0].startswith(f"error: {bad}:2: score 'NaNx' is not a number")
    code, _, err = cli(capsys, "validate", "--qrels", qrels, "--runs", bad, "--k", "1")  # the only run: its line
    assert code == 2 and len(err.strip().splitlines()) == 1 and f"{bad}:2: score 'NaNx'" in err


def test_a_trec_line_in_a_jsonl_file_says_what_it_looks_like(tmp_path, capsys):
    """The newcomer appended a TREC qrels line to judgments.jsonl: 'invalid JSON: Expecting value (column 1)'
    alone did not say why."""
    qrels = write(tmp_path / "q.jsonl", '{"query": "1", "doc": "d1", "grade": 1}\n1 0 d2 1\n')
    run = write(tmp_path / "r.trec", "1 Q0 d1 1 1.0 t\n")
    code, _, err = cli(capsys, "score", "--qrels", qrels, "--runs", run)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert f"{qrels}:2: invalid JSON" in err and "this line looks like TREC" in err
    bad = write(tmp_path / "bad.jsonl", '{"query": "1", "doc": "d1", "grade": 1}\n{"query": "1",\n')
    code, _, err = cli(capsys, "score", "--qrels", bad, "--runs", run)
    assert code == 2 and "invalid JSON" in err and "looks like TREC" not in err
