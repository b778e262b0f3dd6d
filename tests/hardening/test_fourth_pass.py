"""Hardening, fourth pass (issue 35, items 3-8): nothing leaks, and no input is unbounded or misread.

Each test names what happened before: an empty ACL passed a leak, the judge endpoint forwarded the key
to another host and waited 41 s on a slow server, a judge command's stray line shifted every answer and
its children outlived it, a downloaded folder's [judge] ran unasked, a gzip bomb grew to 1 GB, a FIFO
named in a receipt hung `receipt verify`, a CR-only run was read as one line, a run name forged a CI
annotation, and action.yml split (and globbed) its `args` unquoted."""

import gzip
import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from rankgate.cli import main
from rankgate.core.judge import JudgeConfig, JudgeRequest, ask
from tests.conftest import ROOT, SAMPLES, write
from tests.hardening.test_pipelines_permissions_charts import bench as permissions_bench


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    cap = capsys.readouterr()
    return code, cap.out, cap.err


def one_line(err: str) -> str:
    lines = [x for x in err.strip().splitlines() if not x.startswith("warning:")]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


# ---- 3. an empty ACL or policy file weakens no check -------------------------------------------------

@pytest.mark.parametrize("text", ["", "\n\n", "# nobody is restricted\n"], ids=["empty", "blank", "comments"])
def test_an_empty_acl_is_refused_not_taken_as_everything_public(tmp_path, capsys, text):
    """Before: the empty ACL made every document public: the candidate's leak of d2 passed and the gate
    decided (exit 0 or 3) instead of refusing."""
    b = permissions_bench(tmp_path)
    write(b / "acl.jsonl", text)
    code, out, err = run(capsys, "gate", b)
    assert code == 2 and "acl.jsonl: lists no document" in one_line(err)


def test_an_acl_from_a_corpus_without_acl_fields_is_refused(tmp_path, capsys):
    b = permissions_bench(tmp_path, acl='acl = "corpus"\ncorpus = "corpus.jsonl"')
    write(b / "corpus.jsonl", "".join(json.dumps({"id": d, "text": "x"}) + "\n" for d in ("d1", "d2", "d3", "d4")))
    code, _, err = run(capsys, "gate", b)
    assert code == 2 and "no document has an 'acl' field" in one_line(err)


@pytest.mark.parametrize("text, why", [("", "sets nothing"), ("# a policy\n", "sets nothing"),
                                       ("[gate]\n", "sets nothing"), ("rules = []\n", "lists no rule")],
                         ids=["empty", "comments", "empty-gate", "no-rules"])
def test_an_empty_policy_is_refused(tmp_path, capsys, text, why):
    """Before: an empty policy file gated with the defaults, and `rules = []` accepted any candidate."""
    b = permissions_bench(tmp_path)
    policy = write(tmp_path / "policy.toml", text)
    code, _, err = run(capsys, "gate", b, "--policy", policy)
    assert code == 2 and why in one_line(err) and "policy.toml" in one_line(err)


def test_a_funnel_depth_beyond_any_run_is_refused(tmp_path, capsys):
    """Before: depth = 1e20 (an integer in TOML) was accepted."""
    b = permissions_bench(tmp_path)
    toml = (b / "benchmark.toml").read_text().replace('{ name = "rerank" }', '{ name = "rerank", depth = '
                                                      '100000000000000000000 }')
    write(b / "benchmark.toml", toml)
    code, _, err = run(capsys, "funnel", b)
    assert code == 2 and "'depth' must be a whole number from 1 to 1000000" in one_line(err)


# ---- 4. the judge endpoint -------------------------------------------------------------------------

SECRET = "sk-live-7Hq2ZpX9vR4mN8bT1cW6yK3d"


class Server:
    """A raw HTTP server on 127.0.0.1 answering each request with `respond(conn, request_bytes)`."""

    def __init__(self, respond):
        self.respond, self.requests = respond, []
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn):
        with conn:
            conn.settimeout(10)
            data = b""
            try:
                while b"\r\n\r\n" not in data:
                    data += conn.recv(65536)
                head, _, body = data.partition(b"\r\n\r\n")
                length = int(next((ln.split(b":")[1] for ln in head.split(b"\r\n")
                                   if ln.lower().startswith(b"content-length")), b"0"))
                while len(body) < length:
                    body += conn.recv(65536)
                self.requests.append(head.decode("latin-1"))
                self.respond(conn, head)
            except OSError:
                pass

    def close(self):
        self.sock.close()


def chat(content: str) -> bytes:
    data = json.dumps({"choices": [{"message": {"role": "assistant", "content": content}}]}).encode()
    return b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(data), data)


def answer(url: str, timeout: float = 5.0):
    config = JudgeConfig(url=url + "/v1", model="m", api_key_env="RG_TEST_KEY", timeout=timeout)
    return next(ask(config, [JudgeRequest("q1", "d1", "question", "", "passage")], [0, 1, 2]))


@pytest.fixture
def key(monkeypatch):
    monkeypatch.setenv("RG_TEST_KEY", SECRET)
    return SECRET


@pytest.mark.parametrize("status", [302, 307, 308])
def test_a_redirect_to_another_host_is_refused_and_never_gets_the_key(key, status):
    """Before: urllib followed the redirect with the Authorization header: the other host got the key."""
    other = Server(lambda c, h: c.sendall(chat('{"grade": 2, "reason": "x"}')))
    first = Server(lambda c, h: c.sendall(b"HTTP/1.1 %d Moved\r\nLocation: http://localhost:%d/v1/chat/completions"
                                          b"\r\nContent-Length: 0\r\n\r\n" % (status, other.port)))
    try:
        a = answer(first.url)
    finally:
        first.close()
        other.close()
    assert not a.ok and "redirected to another host (localhost:" in a.error and "not sent there" in a.error
    assert other.requests == [] and SECRET in first.requests[0]


def test_a_redirect_on_the_same_host_is_followed(key):
    def respond(c, head):
        if head.startswith(b"POST /v1/chat/completions"):
            c.sendall(b"HTTP/1.1 307 Moved\r\nLocation: /v2/chat/completions\r\nContent-Length: 0\r\n\r\n")
        else:
            c.sendall(chat('{"grade": 2, "reason": "moved"}'))
    s = Server(respond)
    try:
        a = answer(s.url)
    finally:
        s.close()
    assert a.ok and a.grade == 2 and len(s.requests) == 2 and all(SECRET in r for r in s.requests)


@pytest.mark.slow  # waits on timeouts or drives a burst of keys: over a second
def test_a_server_sending_a_byte_a_second_is_cut_at_the_timeout(key):
    """Before: the timeout bounded each read, not the answer: a byte every 0.5 s held it for ever."""
    def drip(c, head):
        for b in b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n" + b" " * 1000:
            c.sendall(bytes([b]))
            time.sleep(0.3)
    s = Server(drip)
    t0 = time.monotonic()
    try:
        a = answer(s.url, timeout=1.5)
    finally:
        s.close()
    assert time.monotonic() - t0 < 4 and a.error == "no answer within 1.5 s"


def test_a_deeply_nested_reply_is_a_failure_not_a_traceback(key):
    """Before: RecursionError traceback out of json.loads of the endpoint's reply."""
    deep = b"[" * 200000 + b"]" * 200000
    s = Server(lambda c, h: c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(deep), deep)))
    try:
        a = answer(s.url)
    finally:
        s.close()
    assert not a.ok and "nested 200000 deep (at most 32)" in a.error


@pytest.mark.parametrize("echo", [SECRET[:20], " ".join(SECRET), SECRET.upper()[3:], SECRET[::-1][::-1][5:25]],
                         ids=["cut", "spaced", "upper", "middle"])
def test_a_near_copy_of_the_key_is_never_kept(key, echo):
    """Before: only the exact key was withheld: a reply cut by the error's clip kept its first characters."""
    from rankgate.core.judge import holds_key

    s = Server(lambda c, h: c.sendall(chat(json.dumps({"grade": 1, "reason": f"your key is {echo}"}))))
    try:
        a = answer(s.url)
    finally:
        s.close()
    assert not a.ok and "API key" in a.error and not holds_key(a.error, SECRET)
    bad = b"not json at all: " + echo.encode()
    s = Server(lambda c, h: c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(bad), bad)))
    try:
        a = answer(s.url)
    finally:
        s.close()
    assert not a.ok and not holds_key(a.error, SECRET) and "withheld" in a.error


def test_an_endpoint_url_holding_a_key_is_refused(tmp_path, capsys):
    b = permissions_bench(tmp_path)
    code, _, err = run(capsys, "labels", "suggest", SAMPLES / "ops-handbook", "--judge-url",
                       "https://me:sk-abc@api.example/v1", "--judge-model", "m")
    assert code == 2 and "holds a user name or key" in one_line(err) and "sk-abc" not in err


# ---- 5. the judge command ---------------------------------------------------------------------------

def command_answers(tmp_path, script: str, n: int = 4, timeout: float = 10.0):
    judge = write(tmp_path / "judge.py", script)
    config = JudgeConfig(command=(sys.executable, str(judge)), timeout=timeout, folder=str(tmp_path))
    reqs = [JudgeRequest("q1", f"d{i}", "q", "", f"text {i}") for i in range(n)]
    return list(ask(config, reqs, [0, 1, 2, 3]))


def test_a_stray_output_line_shifts_no_answer(tmp_path):
    """Before: answers were matched by line order: one log line moved every later answer to the next document."""
    answers = command_answers(tmp_path, """import json, sys
for line in sys.stdin:
    req = json.loads(line)
    if req["doc"] == "d1":
        print("loading the model ...", flush=True)
        print(json.dumps({"note": "not an answer"}), flush=True)
    print(json.dumps({"id": req["id"], "grade": int(req["doc"][1]), "reason": req["doc"]}), flush=True)
""")
    assert [(a.doc, a.grade, a.reason) for a in answers] == [(f"d{i}", i, f"d{i}") for i in range(4)]


def test_an_answer_without_an_id_fails_at_once(tmp_path):
    answers = command_answers(tmp_path, """import json, sys
for line in sys.stdin:
    print(json.dumps({"grade": 1}), flush=True)
""", n=1)
    assert 'has no "id"' in answers[0].error


def test_a_judge_writing_much_to_stderr_never_blocks(tmp_path):
    """Before: stderr was never read: a judge logging over 64 KB blocked for ever (here: until the timeout)."""
    t0 = time.monotonic()
    answers = command_answers(tmp_path, """import json, sys
for line in sys.stdin:
    req = json.loads(line)
    sys.stderr.write("debug " * 100000 + "\\n")
    sys.stderr.flush()
    print(json.dumps({"id": req["id"], "grade": 2, "reason": "ok"}), flush=True)
""", timeout=20)
    assert all(a.ok for a in answers) and time.monotonic() - t0 < 15


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie waiting for init counts as ended
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except OSError:
        return True


@pytest.mark.slow  # waits on timeouts or drives a burst of keys: over a second
def test_a_late_judge_is_ended_with_its_children(tmp_path):
    """Before: only the judge was killed on a timeout: what it started (a model server) kept running."""
    pidfile = tmp_path / "child.pid"
    answers = command_answers(tmp_path, f"""import json, subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
open({str(pidfile)!r}, "w").write(str(child.pid))
for line in sys.stdin:
    time.sleep(60)
""", n=1, timeout=1)
    assert answers[0].error == "no answer within 1 s"
    child = int(pidfile.read_text())
    for _ in range(50):
        if not _alive(child):
            break
        time.sleep(0.1)
    assert not _alive(child)


@pytest.mark.slow  # waits on timeouts or drives a burst of keys: over a second
def test_ctrl_c_ends_the_judge_and_its_children(tmp_path):
    """Before: on Ctrl-C (a KeyboardInterrupt in the loop) the judge's children kept running."""
    pidfile = tmp_path / "child.pid"
    judge = write(tmp_path / "judge.py", f"""import json, subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
open({str(pidfile)!r}, "w").write(str(child.pid))
for line in sys.stdin:
    time.sleep(60)
""")
    config = JudgeConfig(command=(sys.executable, str(judge)), timeout=30, folder=str(tmp_path))
    calls = []

    def cancelled():  # the user presses Ctrl-C while the judge thinks
        calls.append(1)
        if pidfile.exists() and pidfile.read_text() and len(calls) > 5:
            raise KeyboardInterrupt
        return False

    with pytest.raises(KeyboardInterrupt):
        list(ask(config, [JudgeRequest("q1", "d1")], [0, 1], cancelled=cancelled))
    child = int(pidfile.read_text())
    for _ in range(50):
        if not _alive(child):
            break
        time.sleep(0.1)
    assert not _alive(child)


@pytest.fixture
def stranger(tmp_path):
    """A benchmark folder from elsewhere whose [judge] command leaves a mark when it runs."""
    import shutil

    folder = tmp_path / "downloaded"
    shutil.copytree(SAMPLES / "ops-handbook", folder)
    mark = tmp_path / "ran"
    write(folder / "judges" / "lexical.py", (folder / "judges" / "lexical.py").read_text().replace(
        "def main() -> None:\n", f"def main() -> None:\n    open({str(mark)!r}, 'a').write('x')\n"))
    return folder, mark


def test_a_folders_judge_command_runs_only_once_trusted(capsys, stranger):
    """Before: `labels suggest` ran whatever command a downloaded benchmark.toml named, unasked."""
    folder, mark = stranger
    code, _, err = run(capsys, "labels", "suggest", folder, "--queue", "2")
    assert code == 2 and "--trust-judge" in one_line(err) and "judges/lexical.py" in err and not mark.exists()
    code, _, err = run(capsys, "labels", "suggest", folder, "--queue", "2", "--trust-judge")
    assert code == 0 and mark.read_text() == "x"
    code, _, err = run(capsys, "labels", "suggest", folder, "--queue", "2", "--again")  # remembered
    assert code == 0 and mark.read_text() == "xx"
    script = folder / "judges" / "lexical.py"
    script.write_text(script.read_text() + "\n# changed\n")  # another script: asked again
    code, _, err = run(capsys, "labels", "suggest", folder, "--queue", "2", "--again")
    assert code == 2 and "--trust-judge" in err and mark.read_text() == "xx"


def test_trust_is_per_folder(capsys, stranger, tmp_path):
    import shutil

    folder, mark = stranger
    assert run(capsys, "labels", "suggest", folder, "--queue", "1", "--trust-judge")[0] == 0
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)
    code, _, err = run(capsys, "labels", "suggest", copy, "--queue", "1")
    assert code == 2 and "--trust-judge" in err


def test_an_endpoint_named_by_a_folder_needs_trust_too(capsys, stranger, monkeypatch):
    """A folder's [judge] may name any URL and any variable as its key (GITHUB_TOKEN ...): not sent unasked."""
    folder, _ = stranger
    toml = folder / "benchmark.toml"
    text = toml.read_text()
    head, _, _ = text.partition("[judge]")
    toml.write_text(head + '[judge]\nurl = "http://127.0.0.1:9/v1"\nmodel = "m"\napi_key_env = "HOME"\n')
    code, _, err = run(capsys, "labels", "suggest", folder, "--queue", "1")
    assert code == 2 and "sends documents and the key in $HOME" in one_line(err)


# ---- 6. every reader bounded ------------------------------------------------------------------------

def test_a_5mb_id_is_refused_with_its_line(tmp_path, capsys):
    """Before: a 5 MB document ID was read (258 MB of memory); now one line naming the file and line."""
    q = write(tmp_path / "q.txt", "q1 0 d1 1\nq1 0 " + "x" * 5_000_000 + " 1\n")
    r = write(tmp_path / "r.txt", "q1 Q0 d1 1 3 t\n")
    for argv in (["trec_eval", q, r], ["score", q, "--runs", r]):
        code, _, err = run(capsys, *argv)
        assert code == 2 and "q.txt:2: an ID of 5000000 characters" in one_line(err) and len(err) < 300


@pytest.mark.slow
@pytest.mark.parametrize("what", ["blank-lines", "one-line", "same-line"])
def test_a_gzip_bomb_is_refused_early(tmp_path, capsys, what):
    """Before: 100 KB of gzipped blank lines grew to 1 GB in `rankgate trec_eval`."""
    bomb = tmp_path / "bomb.gz"
    unit = {"blank-lines": b"\n", "one-line": b"x", "same-line": b"q1 0 d1 1\n"}[what]
    with gzip.open(bomb, "wb", 9) as f:
        chunk = unit * ((8 << 20) // len(unit))
        for _ in range(4):  # 32 MiB out of about 32 KB
            f.write(chunk)
    assert bomb.stat().st_size < 1 << 20
    r = write(tmp_path / "r.txt", "q1 Q0 d1 1 3 t\n")
    code, _, err = run(capsys, "trec_eval", bomb, r)
    assert code == 2 and "refused as a decompression bomb" in one_line(err)


def test_receipt_verify_never_reads_a_fifo_or_device_named_as_an_input(tmp_path, capsys):
    """Before: `receipt verify` hashed every input the receipt names with open(): a FIFO hung it."""
    import shutil

    b = tmp_path / "seed"
    shutil.copytree(SAMPLES / "seed-lab", b)
    receipt = tmp_path / "receipt.json"
    code, _, _ = run(capsys, "gate", b, "--receipt", receipt)
    assert code in (0, 3)
    qrels = next(b.glob("qrels*"))
    qrels.unlink()
    os.mkfifo(qrels)
    proc = subprocess.run([sys.executable, "-m", "rankgate", "receipt", "verify", str(receipt)], capture_output=True,
                          text=True, timeout=30, env=dict(os.environ, PYTHONPATH=str(ROOT / "src")))
    assert proc.returncode == 2 and "is a pipe" in proc.stderr and "Traceback" not in proc.stderr


# ---- 7. misread input -------------------------------------------------------------------------------

QRELS = "q1 0 d1 1\nq1 0 d2 1\nq1 0 d3 1\n"


def test_cr_only_line_ends_are_line_ends(tmp_path, capsys):
    """Before: a run with CR-only line ends was one line: 1 of 3 documents scored, exit 0."""
    q = write(tmp_path / "q.txt", QRELS)
    r = write(tmp_path / "r.txt", b"q1 Q0 d1 1 3 t\rq1 Q0 d2 2 2 t\rq1 Q0 d3 3 1 t\r")
    code, out, _ = run(capsys, "trec_eval", "-m", "num_ret", "-m", "num_rel_ret", q, r)
    assert code == 0 and "num_ret               \tall\t3" in out and "num_rel_ret           \tall\t3" in out
    code, out, _ = run(capsys, "score", q, "--runs", r, "--k", "3", "--format", "json")
    assert code == 0 and json.loads(out)["macro"]["recall_at_k"] == 1.0


def test_trec_eval_reads_a_bom_before_a_comment(tmp_path, capsys):
    """Before: `rankgate trec_eval` did not drop the BOM: '\\ufeff# ...' was a line of two fields, exit 2."""
    q = write(tmp_path / "q.txt", b"\xef\xbb\xbf# judged by us\n" + QRELS.encode())
    r = write(tmp_path / "r.txt", b"\xef\xbb\xbf# our run\nq1 Q0 d1 1 3 t\n")
    code, out, err = run(capsys, "trec_eval", "-m", "num_rel_ret", q, r)
    assert code == 0 and "num_rel_ret           \tall\t1" in out, err


def test_nan_scores_and_nul_bytes_are_read_as_trec_eval_reads_them_and_said_once(tmp_path, capsys):
    """Before: accepted silently."""
    q = write(tmp_path / "q.txt", QRELS)
    r = write(tmp_path / "r.txt", b"q1 Q0 d1 1 nan t\nq1 Q0 d2 2 inf t\nq1 Q0 d\x003 3 1 t\n")
    code, out, err = run(capsys, "trec_eval", q, r)
    warnings = [x for x in err.splitlines() if x.startswith("warning:")]
    assert code == 0 and len(warnings) == 2, err
    assert "2 score(s) are NaN or infinite (first at line 1: 'nan')" in warnings[1]
    assert "1 NUL byte(s) (first at line 3)" in warnings[0]


def test_a_run_name_cannot_forge_a_ci_annotation(tmp_path, capsys):
    """Before: `validate --format text` printed a run name's newline raw: a `::error::` line of its own."""
    q = write(tmp_path / "q.txt", QRELS)
    r = write(tmp_path / "r.txt", "q1 Q0 d1 1 3 t\n")
    for fmt in ("text", "json"):
        code, out, err = run(capsys, "validate", q, "--runs", f"x\n::error::forged\n##[error]too={r}", "--k", "1",
                             "--format", fmt)
        assert code == 0
        lines = (out + err).splitlines()
        assert not any(x.lstrip().startswith(("::", "##[")) for x in lines), out + err


def test_no_output_line_is_a_workflow_command():
    from rankgate.core.text import no_workflow_commands

    assert no_workflow_commands("ok\n::error::x\n  ::warning::y\n##[error]z\nq::1") == \
        "ok\n\\x3a:error::x\n  \\x3a:warning::y\n\\x23#[error]z\nq::1"


# ---- 8. action.yml ----------------------------------------------------------------------------------

def test_action_args_are_split_as_shell_words_never_globbed(tmp_path):
    """Before: `$ARGS` unquoted: quotes were kept as characters and `*` expanded to the files of the folder."""
    import yaml

    step = next(s for s in yaml.safe_load((ROOT / "action.yml").read_text())["runs"]["steps"] if s.get("id") == "gate")
    assert "$ARGS" not in step["run"] and "RANKGATE_ARGS" in step["env"]
    from rankgate.ci import run as ci_run

    out = tmp_path / "out.txt"
    env = {"GITHUB_OUTPUT": str(out), "RANKGATE_ARGS": "--must-pass 'q-leaked-key' --resamples 300"}
    code = ci_run([str(SAMPLES / "ops-handbook"), "--receipt", str(tmp_path / "r.json")], env=env)
    assert code == 3 and "decision=reject" in out.read_text()
    env["RANKGATE_ARGS"] = "--must-pass 'unclosed"
    assert ci_run([str(SAMPLES / "ops-handbook")], env=env) == 2
