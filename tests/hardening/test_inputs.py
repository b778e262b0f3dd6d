"""Hardening, second pass (issue 18): bounded memory for every general reader, special files refused up
front, numbers finite and in range, unknown keys refused, outputs never replace an input, escapes.

Every case exits 2 with one `error:` line naming the file, no traceback, nothing written. The memory
cases run the command in a subprocess under a 1 GB address-space cap (resource.setrlimit(RLIMIT_AS)):
before this pass each of them read the whole input and died with MemoryError (or hung, for a FIFO)."""

import gzip
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from rankgate.cli import main
from tests.conftest import ROOT, write

QRELS = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n"
RUN = "q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\nq2 Q0 d3 1 1.0 t\nq2 Q0 d4 2 0.5 t\n"
CAP = 1 << 30  # bytes of address space for the memory cases

_CAPPED = """
import contextlib, io, json, resource, sys
resource.setrlimit(resource.RLIMIT_AS, ({cap}, {cap}))
from rankgate.cli import main
out = []
for argv in json.loads(sys.argv[1]):
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            code = main(argv)
        except BaseException as e:  # MemoryError: the case failed, the others still run
            code = repr(e)[:200]
    out.append([code, err.getvalue()[-3000:]])
print(json.dumps(out))
"""


def run_capped(argvs: list[list], timeout: float = 300) -> list[tuple]:
    """Each command line in turn, in one subprocess with at most CAP bytes of address space; (exit code,
    stderr) of each."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1",
               RANKGATE_FAST="0")
    p = subprocess.run([sys.executable, "-c", _CAPPED.format(cap=CAP), json.dumps([[str(a) for a in argv]
                                                                                  for argv in argvs])],
                       capture_output=True, text=True, env=env, timeout=timeout)
    assert p.returncode == 0, p.stderr[-3000:]
    return [tuple(x) for x in json.loads(p.stdout)]


def one_line(err: str) -> str:
    assert "Traceback" not in err and "MemoryError" not in err, err[-2000:]
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), lines[:5]
    return lines[0]


def inputs(tmp_path: Path) -> dict:
    """A small, valid benchmark's files."""
    return {"qrels": write(tmp_path / "q.trec", QRELS), "A": write(tmp_path / "A.trec", RUN),
            "B": write(tmp_path / "B.trec", RUN)}


def argv_for(role: str, bad, f: dict, fmt: str | None = None) -> list:
    """A command that reads `bad` as `role` (and the good files for the rest)."""
    gate = ["gate", "--runs", f["A"], "--runs", f["B"], "--baseline", "A", "--candidate", "B", "--k", "1"]
    if role == "qrels":
        return ["score", "--qrels", bad, "--runs", f["A"], "--k", "1"] + (["--qrels-format", fmt] if fmt else [])
    if role == "run":
        return ["score", "--qrels", f["qrels"], "--runs", bad, "--k", "1"] + (["--run-format", fmt] if fmt else [])
    if role == "queries":
        return gate + ["--qrels", f["qrels"], "--queries", bad]
    if role == "policy":
        return gate + ["--qrels", f["qrels"], "--policy", bad]
    if role == "corpus":
        return ["validate", "--qrels", f["qrels"], "--runs", f["A"], "--k", "1", "--corpus", bad]
    if role == "benchmark":  # bad is a folder holding the manifest
        return ["score", bad]
    raise AssertionError(role)


READERS = [("qrels", None), ("qrels", "json"), ("qrels", "jsonl"), ("qrels", "beir"), ("run", None),
           ("run", "json"), ("run", "jsonl"), ("queries", None), ("corpus", None), ("policy", None)]


# ---- special files: refused before anything is read -------------------------------------------------

@pytest.mark.slow
def test_a_device_is_refused_up_front_under_a_memory_cap(tmp_path):
    """Before: MemoryError after reading gigabytes (qrels, queries, policy, JSON and JSONL forms)."""
    devices = [d for d in ("/dev/zero", "/dev/urandom") if os.path.exists(d)]
    if not devices:
        pytest.skip("no /dev/zero here")
    f = inputs(tmp_path)
    cases = [(role, fmt, d) for d in devices for role, fmt in READERS]
    folder = tmp_path / "bench"
    write(folder / "benchmark.toml", f'name = "x"\nk = 1\nqrels = "/dev/zero"\nruns = ["{f["A"]}"]\n')
    results = run_capped([argv_for(role, d, f, fmt) for role, fmt, d in cases] + [["score", folder]])
    for (role, fmt, device), (code, err) in zip(cases, results):
        assert code == 2, (role, fmt, device, code)
        assert one_line(err) == f"error: {device}: is a device, expected a regular file", (role, fmt)
    code, err = results[-1]  # a benchmark.toml naming a device
    assert code == 2 and "/dev/zero: is a device" in one_line(err)


@pytest.mark.slow
def test_a_fifo_with_no_writer_is_refused_and_never_waited_on(tmp_path):
    """Before: a policy (or benchmark.toml) FIFO with no writer hung forever."""
    f = inputs(tmp_path)
    argvs, targets = [], []
    for role in ("qrels", "run", "queries", "corpus", "policy", "benchmark"):
        folder = tmp_path / role
        folder.mkdir()
        fifo = folder / ("benchmark.toml" if role == "benchmark" else "in.fifo")
        os.mkfifo(fifo)
        targets.append(fifo)
        argvs.append(argv_for(role, fifo.parent / "benchmark.toml" if role == "benchmark" else fifo, f))
    for target, (code, err) in zip(targets, run_capped(argvs, timeout=120)):
        line = one_line(err)
        assert code == 2 and str(target.parent) in line, line
        assert "is a pipe" in line or "not a regular file" in line or "is a folder" in line, line


def test_process_substitution_is_one_clear_line(tmp_path):
    """<(cat q.trec) is a pipe: refused with the way out (save it to a file), never a traceback."""
    f = inputs(tmp_path)
    r, w = os.pipe()
    os.write(w, QRELS.encode())
    os.close(w)
    try:
        p = subprocess.run([sys.executable, "-m", "rankgate", "score", "--qrels", f"/dev/fd/{r}", "--runs", str(f["A"])],
                           capture_output=True, text=True, pass_fds=(r,), timeout=60,
                           env=dict(os.environ, PYTHONPATH=str(ROOT / "src")))
    finally:
        os.close(r)
    assert p.returncode == 2
    assert "is a pipe" in one_line(p.stderr) and "save what <(...) gives to a file" in p.stderr


# ---- huge regular files: refused within a bound -----------------------------------------------------

def _sparse(path: Path, size: int) -> Path:
    with open(path, "wb") as fh:
        fh.truncate(size)  # all NUL bytes, no disk used
    return path


def _gz_of(path: Path, piece: bytes, total: int, head: bytes = b"", tail: bytes = b"") -> Path:
    """A gzip file holding head + piece repeated to `total` bytes + tail: one 8 MB member compressed once
    and repeated (gzip members concatenate), so it costs a few MB and no time."""
    member = gzip.compress(piece * ((8 << 20) // len(piece)), compresslevel=1)
    with open(path, "wb") as fh:
        fh.write(gzip.compress(head))
        for _ in range(total // (8 << 20)):
            fh.write(member)
        fh.write(gzip.compress(tail))
    return path


def test_a_huge_sparse_file_is_refused_under_a_memory_cap(tmp_path):
    """A 4 GB file of NUL bytes (sparse): binary data, refused from its first block or by its size."""
    f = inputs(tmp_path)
    argvs, bigs = [], []
    for role, fmt in READERS:
        name = {"json": "big.json", "jsonl": "big.jsonl", "beir": "big.tsv"}.get(fmt, "big.txt")
        big = _sparse(tmp_path / f"{role}-{name}", 4 << 30)
        bigs.append(big)
        argvs.append(argv_for(role, big, f, fmt))
    for big, (code, err) in zip(bigs, run_capped(argvs)):
        line = one_line(err)
        assert code == 2 and str(big) in line and ("binary data" in line or "larger than" in line), line


@pytest.mark.slow
def test_one_endless_line_is_refused_past_the_line_limit(tmp_path):
    """600 MB of 'x' and no line break, gzipped: before, the line was gathered whole (MemoryError)."""
    f = inputs(tmp_path)
    plain = _gz_of(tmp_path / "line.gz", b"x", 600 << 20)
    brace = _gz_of(tmp_path / "brace.gz", b"x", 600 << 20, head=b"{")
    cases = [("qrels", None, plain), ("qrels", "jsonl", brace), ("run", "jsonl", brace), ("run", None, plain),
             ("queries", None, plain), ("corpus", None, plain), ("qrels", "beir", plain)]
    for case, (code, err) in zip(cases, run_capped([argv_for(r, big, f, fmt) for r, fmt, big in cases])):
        assert code == 2, case
        # refused either as a line past the limit or, read whole (trec_eval's way), as a decompression bomb
        assert "a line longer than 32 MiB" in one_line(err) or "decompression bomb" in one_line(err), case


def test_a_padded_document_is_refused_past_its_size_limit(tmp_path):
    """600 MB of spaces around a JSON object (or TOML), gzipped: refused past the documented size."""
    f = inputs(tmp_path)
    big = _gz_of(tmp_path / "doc.gz", b" ", 600 << 20, head=b"{", tail=b"}")
    cases = [("qrels", "json"), ("policy", None)]  # a JSON run goes through the same load_json
    for case, (code, err) in zip(cases, run_capped([argv_for(r, big, f, fmt) for r, fmt in cases])):
        line = one_line(err)
        # past 64 MiB it is also a thousandfold gzip: whichever bound it meets first refuses it, in one line
        assert code == 2 and ("larger than" in line or "decompression bomb" in line) and "MiB" in line, (case, line)


@pytest.mark.slow
def test_a_long_jsonl_run_streams_within_a_memory_cap(tmp_path):
    """A JSONL run of ~90 MB is read line by line: it scores under the 1 GB cap (before: read whole and
    split whole; 180 MB of it peaked at 1.7 GB)."""
    q = write(tmp_path / "q.trec", "".join(f"q{i} 0 d{i}-0 1\n" for i in range(1500)))
    run = tmp_path / "big.jsonl"
    pad = " " * 60_000  # JSON whitespace on each line keeps the file big and the kept data small (an ID of
    with open(run, "w") as fh:  # 60,000 characters is refused: docs/formats.md, Limits)
        for i in range(1500):
            fh.write(json.dumps({"query": f"q{i}", "ranking": [f"d{i}-0", f"d{i}-1"]})[:-1] + pad + "}\n")
    assert run.stat().st_size > 80 << 20
    [(code, err)] = run_capped([["score", "--qrels", q, "--runs", run, "--k", "1", "-m", "RR@1"]])
    assert code == 0, err


# ---- tracebacks that are now one line ---------------------------------------------------------------

CASES = [
    # (id, role, file name, content, expected text)
    ("deep-json-object", "qrels", "q.json", '{"a":' * 100_000 + "1" + "}" * 100_000, "nested too deeply"),
    ("deep-jsonl-object", "qrels", "q.jsonl", '{"a":' * 100_000 + "1" + "}" * 100_000 + "\n", "nested too deeply"),
    ("grade-1e29-json", "qrels", "q.json", '{"q1": {"d1": 100000000000000000000000000000}}', "out of range"),
    ("grade-1e29-jsonl", "qrels", "q.jsonl", '{"query": "q1", "doc": "d1", "grade": 100000000000000000000000000000}\n',
     "out of range"),
    ("grade-1e29-trec", "qrels", "q.trec", "q1 0 d1 100000000000000000000000000000\n", "out of range"),
    ("surrogate-qrels-id", "qrels", "q.json", '{"q\\ud800x": {"d1": 1}}', "lone UTF-16 surrogate"),
    ("surrogate-jsonl-doc", "qrels", "q.jsonl", '{"query": "q1", "doc": "d\\udc00", "grade": 1}\n', "lone UTF-16"),
    ("surrogate-run-doc", "run", "B.json", '{"B": {"q1": ["d\\ud800"], "q2": ["d3"]}}', "lone UTF-16 surrogate"),
    ("surrogate-jsonl-run", "run", "B.jsonl", '{"query": "q1", "ranking": ["\\udfff"]}\n', "lone UTF-16"),
    ("surrogate-query-text", "queries", "queries.jsonl", '{"id": "q1", "text": "a\\ud800"}\n', "lone UTF-16"),
    ("policy-alpha-nan", "policy", "p.toml",
     '[[rules]]\nmeasure = "R@1"\ncheck = "no_significant_regression"\nalpha = nan\n', "finite number"),
    # input that silently weakened the gate
    ("queries-unknown-key", "queries", "queries.jsonl", '{"id": "q1", "text": "a", "must_pas": true}\n',
     "did you mean 'must_pass'"),
    ("queries-weight-nan", "queries", "queries.jsonl", '{"id": "q1", "weight": NaN}\n', "'weight' must be a number"),
    ("queries-weight-1e400", "queries", "queries.jsonl", '{"id": "q1", "weight": 1e400}\n', "'weight' must be"),
    ("queries-weights-all-0", "queries", "queries.jsonl", '{"id": "q1", "weight": 0}\n{"id": "q2", "weight": 0}\n',
     "every query has weight 0"),
    ("policy-tolerance-nan", "policy", "p.toml", '[[rules]]\nmeasure = "R@1"\ntolerance = nan\n', "finite number"),
    ("policy-tolerance-inf", "policy", "p.toml", '[[rules]]\nmeasure = "R@1"\ntolerance = inf\n', "finite number"),
    ("policy-min-nan", "policy", "p.toml", '[[rules]]\nmeasure = "R@1"\ncheck = "floor"\nmin = nan\n',
     "finite number"),
    ("policy-min-minus-inf", "policy", "p.toml", '[[rules]]\nmeasure = "R@1"\ncheck = "floor"\nmin = -inf\n',
     "finite number"),
    ("policy-budget-max-inf", "policy", "p.toml", '[[rules]]\ncheck = "budget"\nfield = "latency_ms"\nmax = inf\n',
     "finite number"),
    ("policy-huge-k", "policy", "p.toml", "k = 100000000000000000000\n", "at most"),
    ("policy-huge-max", "policy", "p.toml", '[[rules]]\ncheck = "no_newly_failed"\nmax = 100000000000000000000\n',
     "at most"),
    ("policy-names-a-policy", "policy", "p.toml", '[gate]\npolicy = "other.toml"\n', "cannot name another policy"),
    ("policy-top-level-policy", "policy", "p.toml", 'policy = "other.toml"\n', "cannot name another policy"),
    ("policy-min-queries-no-slice", "policy", "p.toml", '[[rules]]\nmeasure = "R@1"\nmin_queries = 5\n',
     "'min_queries' applies to a slice"),
    ("run-score-underscore", "run", "B.trec", RUN.replace("2.0", "1_5"), "score '1_5' is not a number"),
    ("run-score-arabic-digit", "run", "B.trec", RUN.replace("2.0", "\u0663"), "is not a number"),
    ("run-score-fullwidth", "run", "B.trec", RUN.replace("2.0", "\uff11"), "is not a number"),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, case):
    _, role, name, content, expected = case
    f = inputs(tmp_path)
    bad = write(tmp_path / name, content)
    argv = argv_for(role, bad, f)
    if role == "run":  # gate over the bad run as the candidate
        argv = ["gate", "--qrels", f["qrels"], "--runs", f["A"], "--runs", bad, "--baseline", "A", "--candidate",
                Path(name).stem, "--k", "1"]
    out = tmp_path / "out"
    out.mkdir()
    argv = [*argv, "--receipt", out / "r.json"] if argv[0] == "gate" else argv
    before = sorted(p.name for p in tmp_path.rglob("*"))
    code = main([str(a) for a in argv])
    err = capsys.readouterr().err
    assert code == 2, err
    line = one_line(err)
    assert name in line and expected in line, line
    assert len(line) < 1100
    assert sorted(p.name for p in tmp_path.rglob("*")) == before


def test_a_byte_order_mark_is_accepted_in_benchmark_toml_and_a_policy(tmp_path, capsys):
    """docs/formats.md: a BOM is accepted. Before: 'invalid TOML' at line 1."""
    f = inputs(tmp_path)
    folder = tmp_path / "bench"
    write(folder / "benchmark.toml", b"\xef\xbb\xbf" + f'name = "x"\nk = 1\nqrels = "{f["qrels"]}"\nruns = ["{f["A"]}", '
          f'"{f["B"]}"]\n[gate]\nbaseline = "A"\ncandidate = "B"\n'.encode())
    policy = write(tmp_path / "p.toml", b"\xef\xbb\xbf" + b'[[rules]]\nmeasure = "R@1"\ncheck = "floor"\nmin = 1.5\n')
    assert main(["gate", str(folder)]) == 0
    capsys.readouterr()
    assert main(["gate", str(folder), "--policy", str(policy)]) == 3  # the policy is read: its floor fails B
    assert json.loads(capsys.readouterr().out)["accepted"] is False


def test_unknown_no_answer_ids_in_the_manifest_are_refused(tmp_path, capsys):
    f = inputs(tmp_path)
    folder = tmp_path / "bench"
    write(folder / "benchmark.toml", f'name = "x"\nk = 1\nqrels = "{f["qrels"]}"\nruns = ["{f["A"]}", "{f["B"]}"]\n'
          'no_answer = ["q-typo"]\n[gate]\nbaseline = "A"\ncandidate = "B"\n')
    assert main(["gate", str(folder)]) == 2
    line = one_line(capsys.readouterr().err)
    assert "benchmark.toml" in line and "no_answer: query 'q-typo'" in line


def test_an_error_about_a_1_mb_id_is_cut(tmp_path, capsys):
    """Before: the whole ID was echoed (an error line of about 1 MB)."""
    f = inputs(tmp_path)
    long_id = "q" * 1_000_000
    code = main(["gate", "--qrels", str(f["qrels"]), "--runs", str(f["A"]), "--runs", str(f["B"]), "--baseline",
                 "A", "--candidate", "B", "--k", "1", "--must-pass", long_id])
    line = one_line(capsys.readouterr().err)
    assert code == 2 and len(line) <= 1000 and "is not in the qrels" in line and "characters left out" in line


def test_validation_problems_quote_ids_cut(tmp_path, capsys):
    f = inputs(tmp_path)
    long_doc = "d" * 4000  # the longest ID is 4096 characters (docs/formats.md, Limits)
    bad = write(tmp_path / "B.trec", RUN + f"q1 Q0 {long_doc} 3 0.1 t\nq1 Q0 {long_doc} 4 0.0 t\n")
    assert main(["validate", "--qrels", str(f["qrels"]), "--runs", str(f["A"]), "--runs", str(bad), "--k", "1"]) == 2
    line = one_line(capsys.readouterr().err)
    assert "twice" in line and len(line) < 300


# ---- outputs never replace an input; outputs that cannot be written -------------------------------

@pytest.mark.parametrize("flag", ["--receipt", "--markdown", "--junit"])
@pytest.mark.parametrize("which", ["qrels", "run", "policy", "link-to-qrels"])
def test_an_output_naming_an_input_is_refused(tmp_path, capsys, flag, which):
    f = inputs(tmp_path)
    policy = write(tmp_path / "p.toml", "k = 1\n")
    target = {"qrels": f["qrels"], "run": f["B"], "policy": policy, "link-to-qrels": tmp_path / "link"}[which]
    if which == "link-to-qrels":
        os.symlink(f["qrels"], target)
    saved = {p: p.read_bytes() for p in (f["qrels"], f["B"], policy)}
    code = main(["gate", "--qrels", str(f["qrels"]), "--runs", str(f["A"]), "--runs", str(f["B"]), "--baseline", "A",
                 "--candidate", "B", "--policy", str(policy), flag, str(target)])
    line = one_line(capsys.readouterr().err)
    assert code == 2 and "is one of this command's input files" in line
    assert {p: p.read_bytes() for p in saved} == saved


def test_compare_markdown_naming_an_input_is_refused(tmp_path, capsys):
    f = inputs(tmp_path)
    saved = f["qrels"].read_bytes()
    code = main(["compare", "--qrels", str(f["qrels"]), "--runs", str(f["A"]), "--runs", str(f["B"]), "--k", "1",
                 "--markdown", str(f["qrels"])])
    assert code == 2 and "input files" in one_line(capsys.readouterr().err)
    assert f["qrels"].read_bytes() == saved


def _gate_cmd(f) -> list[str]:
    return [sys.executable, "-m", "rankgate", "gate", "--qrels", str(f["qrels"]), "--runs", str(f["A"]), "--runs",
            str(f["B"]), "--baseline", "A", "--candidate", "B", "--k", "1"]


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full here")
def test_stdout_on_a_full_disk_is_one_line(tmp_path):
    """Before: a traceback (OSError: No space left on device)."""
    with open("/dev/full", "w") as full:
        p = subprocess.run(_gate_cmd(inputs(tmp_path)), stdout=full, stderr=subprocess.PIPE, text=True, timeout=60,
                           env=dict(os.environ, PYTHONPATH=str(ROOT / "src")))
    assert p.returncode == 2
    assert "No space left on device" in one_line(p.stderr)


@pytest.mark.parametrize("words", [[], ["--format", "json"]])
def test_stdout_closed_is_one_line(tmp_path, words):
    """`rankgate gate ... >&-`: Python starts with sys.stdout None; before, an AttributeError's traceback, exit 1."""
    cmd = _gate_cmd(inputs(tmp_path))
    if words:  # compare's JSON, written as it is made (cli.base.JsonOut)
        cmd = [*cmd[:3], "compare", *cmd[4:], *words]
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=60,
                       env=dict(os.environ, PYTHONPATH=str(ROOT / "src")), preexec_fn=lambda: os.close(1))
    assert p.returncode == 2, p.stderr
    assert "Traceback" not in p.stderr and "cannot write (Bad file descriptor)" in one_line(p.stderr)


@pytest.mark.parametrize("flag", ["--markdown", "--junit", "--receipt"])
def test_an_output_to_a_device_or_an_unwritable_place_is_one_line(tmp_path, capsys, flag):
    f = inputs(tmp_path)
    base = ["gate", "--qrels", str(f["qrels"]), "--runs", str(f["A"]), "--runs", str(f["B"]), "--baseline", "A",
            "--candidate", "B", "--k", "1"]
    targets = [tmp_path / "no-such-folder" / "x", tmp_path / "A.trec" / "x"]
    if os.path.exists("/dev/full"):
        targets.append(Path("/dev/full"))
    if os.path.isdir("/proc/self"):
        targets.append(Path("/proc/self/rankgate-out"))  # a read-only file system, even for root
    for target in targets:
        assert main([*base, flag, str(target)]) == 2, target
        assert str(target) in one_line(capsys.readouterr().err)


# ---- escapes ------------------------------------------------------------------------------------------

def test_paths_from_an_untrusted_manifest_are_escaped_in_error_lines(tmp_path, capsys):
    folder = tmp_path / "bench"
    write(folder / "benchmark.toml", 'name = "x"\nk = 1\nqrels = "\\u001b]0;PWNED\\u0007q.trec"\nruns = ["A.trec"]\n')
    assert main(["score", str(folder)]) == 2
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\x07" not in err and "\\x1b]0;PWNED\\x07q.trec" in one_line(err)


def test_a_file_name_with_a_terminal_sequence_is_escaped(tmp_path, capsys):
    name = tmp_path / "q\x1b[2J\u202e.trec"
    write(name, "q1 0 d1 x\n")
    assert main(["score", "--qrels", str(name), "--runs", str(write(tmp_path / "A.trec", RUN))]) == 2
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\u202e" not in err and "q\\x1b[2J\\u202e.trec:1" in one_line(err)


def test_the_import_path_stays_free_of_special_file_modes():
    """open_input refuses by the file's mode: every mode that is not a regular file is named."""
    from rankgate.core.formats.textio import _special

    assert _special(stat.S_IFREG | 0o644) is None
    for mode, said in ((stat.S_IFIFO, "pipe"), (stat.S_IFSOCK, "pipe"), (stat.S_IFCHR, "device"),
                       (stat.S_IFBLK, "device"), (stat.S_IFDIR, "folder")):
        assert said in _special(mode | 0o644)


def test_labels_listings_escape_reasons_reviewers_and_names(tmp_path, capsys):
    db = str(tmp_path / "w.json")
    assert main(["labels", "set", "--db", db, "q1", "d1", "2", "--add-query", "--reason", "r\x1b[31mred\u202e",
                 "--reviewer", "rv\x1b]0;T\x07"]) == 0
    for sub in ("list", "history", "status"):
        capsys.readouterr()
        assert main(["labels", sub, "--db", db]) == 0
        out = capsys.readouterr().out
        assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out, (sub, out)
        assert "rv\\x1b]0;T\\x07" in out, (sub, out)


def test_a_surrogate_in_a_python_dict_is_refused_as_in_a_file():
    import rankgate
    from rankgate.core.errors import InputError

    with pytest.raises(InputError, match="lone UTF-16 surrogate"):
        rankgate.evaluate({"q\ud800": {"d": 1}}, {"q\ud800": {"d": 1.0}}, ["P@1"])


def test_a_weighted_rule_on_a_slice_that_weighs_nothing_fails(tmp_path, capsys):
    """0/0 made the weighted macro 0 for both runs: the rule passed whatever the candidate did."""
    f = inputs(tmp_path)
    queries = write(tmp_path / "queries.jsonl", '{"id": "q1", "weight": 0, "tags": ["s"]}\n{"id": "q2", "weight": 1}\n')
    policy = write(tmp_path / "p.toml", '[[rules]]\nmeasure = "R@1"\nweighted = true\nslice = "s"\n')
    code = main(["gate", "--qrels", str(f["qrels"]), "--runs", str(f["A"]), "--runs", str(f["B"]), "--baseline", "A",
                 "--candidate", "B", "--k", "1", "--queries", str(queries), "--policy", str(policy)])
    data = json.loads(capsys.readouterr().out)
    assert code == 3 and data["checks"]["R@1_weighted_not_lower[s]"] is False
    [detail] = [d for d in data["check_details"] if d["name"] == "R@1_weighted_not_lower[s]"]
    assert "weighs 0" in detail["why"]


@pytest.mark.parametrize("block", [7, 64, 1 << 20])
def test_a_trec_corpus_streams_across_blocks(tmp_path, monkeypatch, block):
    """<DOC>s straddling the reader's blocks are read as from a whole file (line numbers too)."""
    from rankgate.core.errors import InputError
    from rankgate.core.formats import textio
    from rankgate.core.formats.corpus import read_corpus

    docs = "".join(f"<DOC>\n<DOCNO> d{i} </DOCNO>\n<HEADLINE>title {i}</HEADLINE>\n<TEXT>\nbody {i}\nmore\n</TEXT>\n"
                   f"</doc>\n" for i in range(40))
    path = write(tmp_path / "corpus.trec", docs)
    monkeypatch.setattr(textio, "BLOCK", block)
    got = read_corpus(path)
    assert list(got) == [f"d{i}" for i in range(40)]
    assert got["d7"].title == "title 7" and got["d7"].text == "body 7\nmore"
    assert set(read_corpus(path, wanted={"d3", "d39"})) == {"d3", "d39"}
    write(path, docs + "<DOC>\n<TEXT>no number</TEXT>\n</DOC>\n")
    with pytest.raises(InputError) as e:
        read_corpus(path)
    assert e.value.line == 40 * 8 + 1 and "without a <DOCNO>" in e.value.what
