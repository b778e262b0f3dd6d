"""Items from the s9 newcomer walk-through (N3, N8, N6, N20, N12, ...): what a user sees on the command line."""

from __future__ import annotations

import json
import os
import shutil
import stat

import pytest

from tests.cli.test_init import init_args, raw_files
from tests.conftest import SAMPLES


@pytest.fixture
def umask():
    """Run under a chosen umask, restored after."""
    old = os.umask(0o022)
    yield lambda mask: os.umask(mask)
    os.umask(old)


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


# ---- N3: files for users to share honour the umask -------------------------------------------------

@pytest.mark.parametrize("mask", [0o022, 0o002, 0o077])
def test_init_writes_its_files_as_cp_would_under_the_umask(cli, tmp_path, umask, mask):
    """`rankgate init` wrote benchmark.toml and every --copy file 0600 whatever the umask (mkstemp)."""
    src = raw_files(tmp_path)
    umask(mask)
    code, _, err = cli(*init_args(src, tmp_path / "linked"))
    assert code == 0, err
    code, _, err = cli(*init_args(src, tmp_path / "copied", "--copy"))
    assert code == 0, err
    made = [tmp_path / "linked" / "benchmark.toml"] + [p for p in (tmp_path / "copied").rglob("*") if p.is_file()]
    assert len(made) == 7  # the linked benchmark.toml; the copied one, qrels, two runs, queries, corpus
    assert {p.name: oct(mode(p)) for p in made} == {p.name: oct(0o666 & ~mask) for p in made}


@pytest.mark.parametrize("mask", [0o022, 0o077])
def test_gate_outputs_follow_the_umask_and_a_kept_file_keeps_its_mode(cli, tmp_path, umask, mask):
    umask(mask)
    outs = {flag: tmp_path / f"out{flag}" for flag in ("-o", "--receipt", "--markdown", "--junit")}
    kept = tmp_path / "kept.json"
    kept.write_text("{}")
    kept.chmod(0o640)
    argv = ["gate", SAMPLES / "seed-lab", "--quiet"] + [x for flag, p in outs.items() for x in (flag, p)]
    code, _, err = cli(*argv)
    assert code in (0, 3), err
    assert {f: oct(mode(p)) for f, p in outs.items()} == {f: oct(0o666 & ~mask) for f in outs}
    code, _, err = cli("gate", SAMPLES / "seed-lab", "--quiet", "--receipt", kept)
    assert code in (0, 3) and json.loads(kept.read_text()) and oct(mode(kept)) == "0o640"
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_a_signing_key_stays_private_whatever_the_umask(cli, tmp_path, umask):
    umask(0o002)
    code, _, err = cli("receipt", "keygen", tmp_path / "gate.key")
    assert code == 0, err
    assert oct(mode(tmp_path / "gate.key")) == "0o600"


# ---- N8: labels export -o NAME.jsonl writes JSONL ---------------------------------------------------

@pytest.fixture
def reviewed(cli, tmp_path, monkeypatch):
    """A reviewer's workspace with a reason and an unsure note (as a browser session's would be)."""
    monkeypatch.chdir(tmp_path)
    db = tmp_path / "work.json"
    assert cli("labels", "import", "--db", db, SAMPLES / "seed-lab" / "qrels.json", "--reviewer", "ana")[0] == 0
    code, _, err = cli("labels", "set", "--db", db, "q-dns", "doc-dns-ttl", "0", "--reason", "TTL, not caching",
                       "--reviewer", "ana")
    assert code == 0, err
    code, _, err = cli("labels", "unsure", "--db", db, "q-dns", "doc-dns-ttl", "is TTL caching?", "--reviewer", "ana")
    assert code == 0, err
    return db


def test_an_export_named_jsonl_is_jsonl_and_merges_as_the_docs_say(cli, reviewed, tmp_path):
    """docs/review.md: `labels export --db WORKSPACE -o NAME.jsonl` per reviewer, then `labels merge`: the file
    held TREC lines (reasons and unsure notes dropped) and the merge refused it (names no reviewer)."""
    code, out, err = cli("labels", "export", "--db", reviewed, "-o", "ana.jsonl")
    assert code == 0, err
    assert out.startswith("wrote 9 judgments to ana.jsonl (jsonl, ")
    lines = [json.loads(line) for line in (tmp_path / "ana.jsonl").read_text().splitlines()]
    ttl = next(x for x in lines if x.get("doc") == "doc-dns-ttl" or x.get("doc_id") == "doc-dns-ttl")
    assert ttl["reason"] == "TTL, not caching" and ttl["unsure"] == "is TTL caching?"
    code, out, err = cli("labels", "merge", "--db", tmp_path / "merged.json", "ana.jsonl")
    assert code == 0 and "9 new judgments (read: file:qrels.json 8, ana 1)" in out, err


@pytest.mark.parametrize("name, fmt", [("out.trec", "trec"), ("out.qrels", "trec"), ("out.txt", "trec"),
                                       ("out.json", "json-graded"), ("out", "trec"), ("OUT.JSONL", "jsonl")])
def test_an_export_takes_its_format_from_the_name_when_not_given(cli, reviewed, tmp_path, name, fmt):
    code, out, err = cli("labels", "export", "--db", reviewed, "-o", name, "--json")
    assert code == 0 and json.loads(out)["format"] == fmt, err


@pytest.mark.parametrize("name, fmt", [("out.jsonl", "trec"), ("out.json", "jsonl"), ("out.trec", "jsonl"),
                                       ("out.jsonl", "json")])
def test_a_format_that_contradicts_the_name_is_refused_in_one_line(cli, reviewed, tmp_path, name, fmt):
    code, out, err = cli("labels", "export", "--db", reviewed, "-o", name, "--format", fmt)
    assert code == 2 and out == "" and err.count("\n") == 1 and not (tmp_path / name).exists()
    assert err.startswith(f"error: {name}: --format {fmt} contradicts the name's .") and "nothing was written" in err


@pytest.mark.parametrize("name, fmt", [("out.txt", "jsonl"), ("out.json", "json"), ("out.tsv", "jsonl")])
def test_a_format_the_name_allows_is_written(cli, reviewed, tmp_path, name, fmt):
    code, out, err = cli("labels", "export", "--db", reviewed, "-o", name, "--format", fmt, "--json")
    assert code == 0 and json.loads(out)["format"] == fmt, err


# ---- N6: -o /dev/null (a character device) is written into, so a rejecting gate still exits 3 ----------

def test_a_gate_that_rejects_exits_3_with_its_outputs_sent_to_dev_null(cli):
    """`-o /dev/null` said "is a device, expected a regular file" and exited 2 (invalid input) for a reject."""
    null = os.devnull
    code, out, err = cli("gate", SAMPLES / "seed-lab", "--quiet", "-o", null, "--receipt", null, "--markdown", null,
                         "--junit", null)
    assert (code, out, err) == (3, "", "")
    assert stat.S_ISCHR(os.stat(null).st_mode)


def test_an_export_to_dev_null_is_written_and_a_block_device_is_still_refused(cli, reviewed, tmp_path):
    code, out, err = cli("labels", "export", "--db", reviewed, "-o", os.devnull)
    assert code == 0 and out.startswith(f"wrote 9 judgments to {os.devnull} (trec, "), err
    blocks = [p for p in ("/dev/loop0", "/dev/sda", "/dev/vda", "/dev/nvme0n1") if os.path.exists(p)
              and stat.S_ISBLK(os.stat(p).st_mode)]
    if blocks:  # never written: a disk is no place for a report
        code, _, err = cli("gate", SAMPLES / "seed-lab", "--quiet", "-o", blocks[0])
        assert code == 2 and err == (f"error: {blocks[0]}: is a device, expected a regular file to write; nothing was "
                                     "written (choose a file path)\n")


# ---- N20: receipt verify --key WRONG says the signature failed ---------------------------------------

def test_verify_with_the_wrong_key_says_the_signature_is_invalid_in_its_json(cli, tmp_path):
    """The JSON said "signature": "not checked (no key given)" though a key was given and failed."""
    good, other, signed, plain = (tmp_path / n for n in ("gate.key", "other.key", "signed.json", "plain.json"))
    assert cli("receipt", "keygen", good)[0] == 0 and cli("receipt", "keygen", other)[0] == 0
    assert cli("gate", SAMPLES / "seed-lab", "--quiet", "-o", os.devnull, "--receipt", signed, "--sign-key",
               good)[0] == 3
    assert cli("gate", SAMPLES / "seed-lab", "--quiet", "-o", os.devnull, "--receipt", plain)[0] == 3
    said = {}
    for name, argv in {"wrong": [signed, "--key", other], "right": [signed, "--key", good], "none": [signed],
                       "unsigned": [plain, "--key", good], "plain": [plain]}.items():
        code, out, _ = cli("receipt", "verify", *argv)
        said[name] = (code, json.loads(out).get("signature"))
    assert said == {"wrong": (3, "invalid: no signature by this key (the receipt was signed with another key, or "
                                 "its key id was changed)"),
                    "right": (0, "valid"), "none": (0, "not checked (no key given)"),
                    "unsigned": (3, "invalid: the receipt is not signed, and a key was given"), "plain": (0, None)}


# ---- N12: the action's module writes a NO DECISION summary when the gate cannot run -------------------

def test_the_step_summary_says_why_the_gate_could_not_decide(tmp_path, capsys):
    """`python -m rankgate.ci` on a run with a duplicate line: exit 2, an annotation, and no step summary at all."""
    from rankgate.ci import run
    from rankgate.core.outputs import md

    doc = "d_\x1b]0;x"
    (tmp_path / "qrels.trec").write_text(f"q1 0 d1 1\nq1 0 {doc} 1\n")
    (tmp_path / "a.trec").write_text(f"q1 Q0 d1 1 2 a\nq1 Q0 {doc} 2 1 a\n")
    (tmp_path / "b.trec").write_text(f"q1 Q0 {doc} 1 2 b\nq1 Q0 {doc} 2 1 b\n")
    summary, outputs = tmp_path / "summary.md", tmp_path / "out.txt"
    summary.write_text("earlier step\n")
    code = run(["--qrels", str(tmp_path / "qrels.trec"), "--runs", str(tmp_path / "a.trec"), "--runs",
                str(tmp_path / "b.trec"), "--baseline", "a", "--candidate", "b", "--k", "2", "--receipt",
                str(tmp_path / "r.json")], env={"GITHUB_STEP_SUMMARY": str(summary), "GITHUB_OUTPUT": str(outputs)})
    out, err = capsys.readouterr()
    assert code == 2
    (error,) = [line.removeprefix("error: ") for line in err.splitlines() if line.startswith("error: ")]
    assert "b.trec:2:" in error and "twice" in error
    text = summary.read_text()
    assert text.startswith("earlier step\n## rankgate gate: ⚠️ NO DECISION\n\nThe gate could not run (exit 2)")
    (listed,) = [line for line in text.splitlines() if line.startswith("- ")]
    assert listed == "- " + md(error)  # the error line, for Markdown: `_` and `]` lose their meaning
    assert "\x1b" not in text and "'d\\_\\\\x1b\\]0;x' twice" in listed
    assert outputs.read_text() == "exit-code=2\ndecision=invalid\n" and not (tmp_path / "r.json").exists()


# ---- N5: two --runs of one name: the error says how to name them, not that a third run is broken --------

def test_two_runs_of_one_name_are_a_naming_clash_not_a_broken_run(cli, tmp_path):
    three = SAMPLES / "three-questions"
    for d in ("a", "b"):
        (tmp_path / d).mkdir()
        shutil.copy(three / "run.trec", tmp_path / d / "run.trec")
    a, b = tmp_path / "a" / "run.trec", tmp_path / "b" / "run.trec"
    code, out, err = cli("gate", "--qrels", three / "qrels.trec", "--runs", a, "--runs", b, "--baseline", "run",
                         "--candidate", "run", "--k", "3")
    assert code == 2 and out == ""
    assert err == (f"error: {b}: a second run named 'run' (first from {a}); name runs with NAME=FILE, e.g. "
                   "base=a/run.trec and cand=b/run.trec\n")
    code, out, err = cli("gate", "--qrels", three / "qrels.trec", "--runs", a, "--runs", a, "--baseline", "run",
                         "--candidate", "run", "--k", "3")
    assert code == 2 and err == (f"error: {a}: a second run named 'run' (first from {a}) (the same file, given "
                                 "twice); name runs with NAME=FILE, e.g. base=a/run.trec and cand=b/run.trec\n")
    code, out, err = cli("gate", "--qrels", three / "qrels.trec", "--runs", f"base={a}", "--runs", f"cand={b}",
                         "--baseline", "base", "--candidate", "cand", "--k", "3", "--quiet")
    assert code == 0, err


# ---- N4: commands printed for copying are shell-quoted ----------------------------------------------

def test_printed_commands_quote_a_path_with_spaces_so_a_paste_runs(cli, tmp_path, monkeypatch):
    import shlex

    monkeypatch.chdir(tmp_path)
    src = raw_files(tmp_path)
    code, out, err = cli(*init_args(src, "bench ü", "--k", "2"))
    assert code == 0, err
    (line,) = [x for x in out.splitlines() if x.startswith("open it: ")]
    assert line == "open it: rankgate review 'bench ü'   ·   rankgate gate 'bench ü'"
    pasted = shlex.split(line.split("·")[1])  # what a shell makes of the pasted command
    assert pasted == ["rankgate", "gate", "bench ü"] and cli(*pasted[1:], "--baseline", "x", "--candidate", "y",
                                                             "--quiet", "-o", os.devnull)[0] in (0, 3)
    code, out, err = cli("samples", "copy", "my s")
    assert code == 0 and out.splitlines()[-1] == "try: rankgate review 'my s/ops-handbook'", out
    code, out, err = cli("receipt", "keygen", "my key")
    assert code == 0 and err.rstrip().endswith("rankgate receipt verify RECEIPT --key 'my key')")


# ---- N7: an export with no label change leaves the file as it was -------------------------------------

def test_an_export_with_no_label_change_leaves_the_file_as_it_was(cli, tmp_path, monkeypatch):
    """Each export rewrote the file with a new `exported_at`: a diff to commit for nothing."""
    monkeypatch.setenv("RANKGATE_HOME", str(tmp_path / "home"))
    folder = tmp_path / "ops"
    shutil.copytree(SAMPLES / "ops-handbook", folder)
    qrels = folder / "judgments.jsonl"
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    assert cli("labels", "set", "-b", folder, "q-leaked-key", "backup-restore-drill-03", "2", "--reason", "r")[0] == 0
    code, out, err = cli("labels", "export", folder)
    assert code == 0 and out.startswith("wrote "), err
    first, stat_first = qrels.read_bytes(), os.stat(qrels)
    assert b'"exported_at": "2023-11-14T22:13:20Z"' in first
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000100")  # later, nothing changed
    code, out, err = cli("labels", "export", folder)
    assert code == 0 and out.startswith(f"{qrels} already holds these 280 judgments (jsonl, "), err
    assert "left as it was" in out and qrels.read_bytes() == first and os.stat(qrels).st_ino == stat_first.st_ino
    assert cli("labels", "status", folder)[0] == 0  # in sync
    for name, extra in (("x.jsonl", []), ("x.trec", ["--header"]), ("x.json", [])):
        monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000200")
        assert cli("labels", "export", folder, "-o", tmp_path / name, *extra)[1].startswith("wrote ")
        before = (tmp_path / name).read_bytes()
        monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000300")
        code, out, err = cli("labels", "export", folder, "-o", tmp_path / name, *extra, "--json")
        assert code == 0 and json.loads(out)["unchanged"] is True and (tmp_path / name).read_bytes() == before
    # a label changed: written, with the new time
    assert cli("labels", "set", "-b", folder, "q-leaked-key", "backup-restore-drill-03", "1", "--why", "w")[0] == 0
    code, out, err = cli("labels", "export", folder)
    assert code == 0 and out.startswith("wrote ") and b"2023-11-14T22:18:20Z" in qrels.read_bytes(), err


# ---- N21: the store named in the wrong place says where it goes ----------------------------------------

def test_workspace_flags_before_the_subcommand_say_where_they_go(cli, reviewed):
    code, out, err = cli("labels", "--db", "work.json", "status")
    assert (code, out) == (2, "") and err == ("error: rankgate labels: --db goes after the subcommand: rankgate "
                                              "labels status --db work.json\n")
    code, out, err = cli("labels", "--json", "--db", "my work.json", "list", "q-dns")
    assert code == 2 and err.endswith(": rankgate labels list --json --db 'my work.json' q-dns\n")
    code, out, err = cli("labels", "--db", "work.json")
    assert code == 2 and "name the subcommand first, then --db: rankgate labels SUBCOMMAND --db work.json" in err
    assert cli("labels", "status", "--db", "work.json")[0] == 0


def test_a_label_store_given_as_the_benchmark_says_to_pass_it_with_db(cli, reviewed):
    for sub in ("status", "export", "list"):
        argv = ["labels", sub, "-b", "work.json"] if sub == "list" else ["labels", sub, "work.json"]
        code, out, err = cli(*argv)
        assert code == 2 and err == (f"error: work.json: is a label store, not a benchmark folder: give it with --db, "
                                     f"as in `rankgate labels {sub} --db work.json`\n"), err


# ---- N9: action.yml names no fast extra and no PyPI pin -------------------------------------------------

def test_the_action_installs_its_own_copy_and_its_package_input_names_no_pypi_pin(tmp_path):
    import subprocess

    yaml = pytest.importorskip("yaml")
    from tests.conftest import ROOT

    action = yaml.safe_load((ROOT / "action.yml").read_text())
    said = action["inputs"]["package"]["description"]
    assert "fast" not in said and "==" not in said and "not on PyPI" in said
    step = next(s for s in action["runs"]["steps"] if s.get("name") == "Install rankgate")
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "python3").write_text(f'#!/bin/sh\necho "$@" > {tmp_path}/called\n')
    (fake / "python3").chmod(0o755)
    for package, installed in (("", "/the/action"), ("git+https://example.org/r@v1", "git+https://example.org/r@v1")):
        env = {"PATH": f"{fake}:/usr/bin:/bin", "PACKAGE": package, "GITHUB_ACTION_PATH": "/the/action"}
        subprocess.run(["bash", "-eo", "pipefail", "-c", step["run"]], env=env, check=True)
        assert (tmp_path / "called").read_text().split()[-1] == installed


# ---- N10: docs/reviewers.md's worked example runs on a copy of the samples --------------------------------

def test_the_reviewers_worked_example_runs_after_samples_copy(cli, tmp_path, monkeypatch):
    import shlex

    from tests.conftest import ROOT

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RANKGATE_HOME", str(tmp_path / "home"))
    assert cli("samples", "copy", "my-samples")[0] == 0
    doc = (ROOT / "docs" / "reviewers.md").read_text()
    (merge,) = [line for line in doc.splitlines() if line.startswith("$ rankgate labels merge --db ops.json ")]
    argv = [w.replace("sample_benchmarks/", "my-samples/") for w in shlex.split(merge)[2:]]
    assert cli("labels", "import", "-b", "my-samples/ops-handbook", "--db", "ops.json")[0] == 0
    code, out, err = cli(*argv)
    assert code == 0 and "35 new judgments (read: ana 35)" in out, err


# ---- N13: labels export FOLDER while the app holds the workspace -----------------------------------------

def test_writing_back_is_refused_while_the_app_holds_the_workspace(cli, tmp_path, monkeypatch):
    """It wrote the file and the sync record under the app, whose count of unexported edits then went wrong."""
    from rankgate.store import Workspace

    monkeypatch.setenv("RANKGATE_HOME", str(tmp_path / "home"))
    folder = tmp_path / "rev"
    shutil.copytree(SAMPLES / "ops-handbook", folder)
    qrels = folder / "judgments.jsonl"
    before = qrels.read_bytes()
    ws = Workspace.open_benchmark(str(folder), reviewer="app")  # a writer, as the review app is
    try:
        ws.set_judgment("q-leaked-key", "backup-restore-drill-03", 2, reason="the drill leaks the key")
        code, out, err = cli("labels", "export", folder)
        assert code == 2 and out == "" and err.count("\n") == 1, err
        assert err.startswith(f"error: {qrels}: not written: the workspace is open for writing by ")
        assert "export with `e` there, or quit it first" in err and qrels.read_bytes() == before
        code, out, err = cli("labels", "export", folder, "-o", tmp_path / "copy.jsonl")  # a copy is fine
        assert code == 0 and out.startswith("wrote 280 judgments"), err
    finally:
        ws.close()
    code, out, err = cli("labels", "export", folder)
    assert code == 0 and out.startswith("wrote 280 judgments"), err


# ---- N18: the gate's decision from Python ----------------------------------------------------------------

def test_rankgate_gate_from_python_is_the_commands_decision(cli, tmp_path):
    import rankgate

    assert {"gate", "run_gate", "load_bundle", "evaluate"} <= set(dir(rankgate))  # tab completion sees them
    result = rankgate.gate(SAMPLES / "ops-handbook")
    code, _, _ = cli("gate", SAMPLES / "ops-handbook", "-o", tmp_path / "r.json", "--quiet")
    assert code == 3 and result == json.loads((tmp_path / "r.json").read_text())
    assert result["decision"] == "reject"
    assert any("q-leaked-key" in (c.get("failed") or []) for c in result["check_details"] if c["kind"] == "must_pass")
    assert rankgate.gate(SAMPLES / "seed-lab", candidate="candidate_good")["decision"] == "accept"
    with pytest.raises(rankgate.InputError, match=r"^rankgate\.gate: .*nowhere: no such file"):
        rankgate.gate(tmp_path / "nowhere")


# ---- N11: errors that name the likely mistake -------------------------------------------------------------

def test_swapped_qrels_and_runs_are_named_as_such(cli):
    three = SAMPLES / "three-questions"
    qrels, run = three / "qrels.trec", three / "run.trec"
    code, _, err = cli("score", "--qrels", run, "--runs", qrels)
    assert code == 2 and err == (f"error: {run}:1: 6 columns, expected 4: query iteration document grade; this looks "
                                 "like a run (6 columns, Q0): are the qrels and the run swapped?\n")
    code, _, err = cli("score", "--qrels", qrels, "--runs", qrels)
    assert code == 2 and err.endswith("this looks like qrels (4 columns: query iteration document grade): are the "
                                      "qrels and the run swapped?\n")
    code, _, err = cli("trec_eval", run, qrels)
    assert code == 2 and err.endswith("(as trec_eval reads qrels); this looks like a run (6 columns, Q0): are QRELS "
                                      "and RUN swapped?\n")


def test_a_three_column_qrels_file_is_told_of_the_beir_header(cli, tmp_path):
    (tmp_path / "beir3.tsv").write_text("q1\td1\t1\n")
    code, _, err = cli("score", "--qrels", tmp_path / "beir3.tsv", "--runs", SAMPLES / "three-questions" / "run.trec")
    assert code == 2 and "3 columns is BEIR's qrels layout: give the file its header line " \
        "query-id<TAB>corpus-id<TAB>score" in err


@pytest.mark.parametrize("typed, meant", [("nDCG@1O", "nDCG@10"), ("P@I0", "P@10"), ("ndgc@1O", "nDCG@10")])
def test_a_letter_typed_for_a_digit_in_a_cutoff_gets_a_did_you_mean(cli, typed, meant):
    code, _, err = cli("score", SAMPLES / "seed-lab", "-m", typed)
    assert code == 2 and f"did you mean {meant}?" in err


def test_policy_typos_say_what_was_meant(cli, tmp_path):
    (tmp_path / "pol.toml").write_text('k = 3\nmust_pas = ["q-dns"]\n')
    code, _, err = cli("gate", SAMPLES / "seed-lab", "--policy", tmp_path / "pol.toml")
    assert code == 2 and "unknown policy key 'must_pas' (did you mean 'must_pass'? expected one of" in err
    (tmp_path / "pol2.toml").write_text('[[rules]]\nmeasure = "nDCG@3"\nmin = 0.5\n')
    code, _, err = cli("gate", SAMPLES / "seed-lab", "--policy", tmp_path / "pol2.toml")
    assert code == 2 and "key 'min' does not apply to check 'not_lower' (the default, since the rule names no " \
        "check)" in err and "checks 'floor', 'judged', 'stage_recall_floor' take it" in err


def test_a_folder_without_a_manifest_and_an_empty_name_say_what_they_are(cli, tmp_path):
    (tmp_path / "my runs").mkdir()
    code, _, err = cli("gate", tmp_path / "my runs")
    assert code == 2 and err == (f"error: {tmp_path / 'my runs' / 'benchmark.toml'}: no such file: not a benchmark "
                                 "folder (`rankgate init` makes one from qrels and runs; or give the files with "
                                 "--qrels and --runs)\n")
    code, _, err = cli("gate", "--qrels", SAMPLES / "three-questions" / "qrels.trec", "--runs", "")
    assert code == 2 and err == "error: --runs: an empty file name (an unset or empty shell variable?); nothing " \
        "was done\n"


def test_samples_copy_gives_files_and_folders_the_umasks_mode(cli, tmp_path, umask, monkeypatch):
    """copytree copied the installed files' modes (0644 whatever the umask; 0444 from a read-only install)."""
    monkeypatch.chdir(tmp_path)
    umask(0o027)
    assert cli("samples", "copy", "mine", "--only", "ops-handbook")[0] == 0
    modes = {oct(mode(p)) for p in (tmp_path / "mine").rglob("*") if p.is_file()}
    dirs = {oct(mode(p)) for p in (tmp_path / "mine").rglob("*") if p.is_dir()} | {oct(mode(tmp_path / "mine"))}
    assert (modes, dirs) == ({"0o640"}, {"0o750"})


# ---- N19 (the CLI's part): tables pad by terminal columns --------------------------------------------------

def test_a_table_with_wide_characters_keeps_its_columns(cli, tmp_path):
    from rankgate.cli.tables import cells

    (tmp_path / "uni.qrels").write_text("クエリ一 0 文書A 1\nq2 0 doc-β 1\n", encoding="utf-8")
    (tmp_path / "a.trec").write_text("クエリ一 Q0 文書A 1 2 a\nクエリ一 Q0 doc-β 2 1 a\nq2 Q0 doc-β 1 2 a\n"
                                     "q2 Q0 déjà 2 1 a\n", encoding="utf-8")
    code, out, err = cli("score", "--qrels", tmp_path / "uni.qrels", "--runs", tmp_path / "a.trec", "--k", "2",
                         "--format", "table")
    assert code == 0, err
    rows = [line for line in out.splitlines()[1:] if line.strip()]
    ends = {cells(line[:line.index("0.5000") + 6]) for line in rows if "0.5000" in line}  # the P@2 column's end
    assert len(ends) == 1 and any("クエリ一" in line for line in rows)
    assert cells("クエリ一") == 8 and cells("déjà") == 4 and cells("e\u0301") == 1
