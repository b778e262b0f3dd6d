"""`rankgate labels suggest`: a judge script and a stub chat endpoint on 127.0.0.1 suggest grades; failures
are reported per document and never stored; the API key is never written; suggestions never count for
the gate; `labels agreement` reports the judge against each reviewer."""

import json
import shutil
import sys
import threading
from pathlib import Path
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from rankgate.cli import main
from rankgate.core.judge import Cancelled, JudgeConfig, JudgeRequest, ask
from rankgate.store.suggestions import SuggestionBook, Suggestion
from tests.conftest import SAMPLES, write

JUDGE = r'''
import json, sys, time
behave = json.load(open(sys.argv[1]))
for line in sys.stdin:
    req = json.loads(line)
    how = behave.get(req["query"] + " " + req["doc"], "ok")
    if how == "slow":
        time.sleep(30)
    elif how == "garbage":
        print("this is not json", flush=True)
    elif how == "off-scale":
        print(json.dumps({"id": req["id"], "grade": 9, "reason": "too high"}), flush=True)
    elif how == "die":
        sys.exit(3)
    else:
        grade = 2 if req["query_text"] and req["doc_text"] else 0
        print(json.dumps({"id": req["id"], "grade": grade, "reason": "stub: " + req["doc"], "confidence": 0.5}), flush=True)
'''


@pytest.fixture
def bench(tmp_path):
    """A copy of ops-handbook (its workspace lives in the test's RANKGATE_HOME)."""
    folder = tmp_path / "ops"
    shutil.copytree(SAMPLES / "ops-handbook", folder)
    return folder


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def queue_docs(capsys, bench, n):
    code, out, _ = run(capsys, "labels", "queue", bench, "--json")
    assert code == 0
    return [(x["query"], x["doc"]) for x in json.loads(out)["items"][:n]]


def judge_cmd(tmp_path, behave: dict) -> str:
    script = write(tmp_path / "judge.py", JUDGE)
    conf = write(tmp_path / "behave.json", json.dumps(behave))
    return f"{sys.executable} {script} {conf}"


def book_of(capsys, bench) -> SuggestionBook:
    code, out, _ = run(capsys, "labels", "status", "-b", bench, "--json")
    return SuggestionBook.beside(json.loads(out)["path"])


@pytest.mark.slow
def test_a_script_judge_fills_suggestions_and_failures_are_reported_not_stored(tmp_path, capsys, bench):
    docs = queue_docs(capsys, bench, 6)
    behave = {" ".join(docs[1]): "slow", " ".join(docs[2]): "garbage", " ".join(docs[3]): "off-scale"}
    assert len(behave) == 3  # three different documents
    code, out, err = run(capsys, "labels", "suggest", bench, "--queue", "6", "--judge-command",
                         judge_cmd(tmp_path, behave), "--timeout", "1", "--json")
    assert code == 0
    rep = json.loads(out)
    assert rep["asked"] == 6 and rep["stored"] == 3 and rep["failed"] == 3, rep["failures"]
    why = {(f["query"], f["doc"]): f["error"] for f in rep["failures"]}
    assert why[docs[1]] == "no answer within 1 s"
    # a line that is no answer (no JSON object carrying the request's id) is skipped, not taken as the answer
    assert why[docs[2]] == ("no answer within 1 s (1 output line without this request's \"id\" skipped, the last: "
                            "'this is not json')")
    assert why[docs[3]] == "grade 9 is not on the scale (0, 1, 2, 3)"
    book = book_of(capsys, bench)
    latest = book.latest()
    assert set(latest) == {docs[0], docs[4], docs[5]}  # the judge was restarted after the timeout
    s = latest[docs[0]]
    assert s.grade == 2 and s.reason == f"stub: {docs[0][1]}" and s.confidence == 0.5
    assert s.judge == "judge" and len(s.prompt_hash) == 16 and s.at
    # Asked again, the judge skips what it already suggested.
    code, out, err = run(capsys, "labels", "suggest", bench, "--queue", "6", "--judge-command",
                         judge_cmd(tmp_path, behave), "--timeout", "1")
    # (only the three that failed are left, and they fail again: exit 2, the judge is not working)
    assert code == 2 and "3 pairs already have this judge's suggestion" in err
    assert "about 3 documents: 0 suggestions stored" in out and out.count("  failed: ") == 3


def test_a_judge_that_dies_or_is_missing_is_reported(tmp_path, capsys, bench):
    docs = queue_docs(capsys, bench, 2)
    code, out, _ = run(capsys, "labels", "suggest", bench, "--queue", "2", "--judge-command",
                       judge_cmd(tmp_path, {f"{q} {d}": "die" for q, d in docs}), "--json")
    assert code == 2  # every answer failed: the judge is misconfigured
    rep = json.loads(out)
    assert rep["stored"] == 0 and all("ended without an answer" in f["error"] for f in rep["failures"])
    code, _, err = run(capsys, "labels", "suggest", bench, "--judge-command", "/no/such/judge")
    assert code == 2 and "cannot be started" in err and "Traceback" not in err
    manifest = bench / "benchmark.toml"
    manifest.write_text(manifest.read_text().split("[judge]")[0])
    code, _, err = run(capsys, "labels", "suggest", bench)
    assert code == 2 and "no judge" in err


def test_suggestions_never_count_for_the_gate(tmp_path, capsys, bench):
    before = run(capsys, "gate", bench, "--as-of", "2026-06-01")
    code, out, _ = run(capsys, "labels", "suggest", bench, "--queue", "10", "--judge-command",
                       judge_cmd(tmp_path, {}), "--json")
    assert code == 0 and json.loads(out)["stored"] == 10
    after = run(capsys, "gate", bench, "--as-of", "2026-06-01")
    assert after == before


def test_the_sample_judge_and_agreement_with_each_reviewer(capsys, bench):
    code, out, _ = run(capsys, "labels", "suggest", bench, "--judged", "--limit", "60", "--json", "--trust-judge")
    assert code == 0
    rep = json.loads(out)
    assert rep["stored"] == 60 and rep["judge"]["name"] == "lexical" and rep["judge"]["kind"] == "command"
    code, out, _ = run(capsys, "labels", "agreement", "-b", bench, "--json")
    judges = json.loads(out)["judges"]
    assert {j["reviewer"] for j in judges} <= {"priya", "lena", "tomas"} and judges
    assert sum(j["units"] for j in judges) == 60
    for j in judges:
        assert sum(n for row in j["confusion"].values() for n in row.values()) == j["units"]
        assert sum(j["confusion"][g][g] for g in j["confusion"]) == j["agreed"]
        assert j["kappa"] is None or -1 <= j["kappa"] <= 1
    code, out, _ = run(capsys, "labels", "agreement", bench)  # named as `labels suggest BENCH` names it
    assert code == 0 and "judge lexical ~ " in out and "Cohen's kappa" in out and "judge \\ " in out
    # deterministic: the same pairs get the same grades again
    code, out2, _ = run(capsys, "labels", "suggest", bench, "--judged", "--limit", "60", "--again", "--json",
                          "--trust-judge")
    assert [s["grade"] for s in json.loads(out2)["suggestions"]] == [s["grade"] for s in rep["suggestions"]]


# ---- an OpenAI-compatible endpoint (a stub on 127.0.0.1) ----------------------------------------------

class Stub(BaseHTTPRequestHandler):
    seen: list = []
    reply = {"grade": 3, "reason": "answers it"}
    delay = 0.0

    def do_POST(self):  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        Stub.seen.append({"auth": self.headers.get("Authorization"), "path": self.path, "body": body})
        if Stub.delay:
            threading.Event().wait(Stub.delay)
        content = Stub.reply if isinstance(Stub.reply, str) else json.dumps(Stub.reply)
        data = json.dumps({"choices": [{"message": {"role": "assistant", "content": content}}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


class Quiet(ThreadingHTTPServer):
    def handle_error(self, request, client_address):  # a client that gave up (a timeout test): not news
        pass


@pytest.fixture
def stub():
    Stub.seen, Stub.reply, Stub.delay = [], {"grade": 3, "reason": "answers it"}, 0.0
    server = Quiet(("127.0.0.1", 0), Stub)
    server.timeout = 5
    t = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    t.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
        t.join(5)


SECRET = "sk-test-0123456789-never-write-me"


@pytest.mark.slow
def test_an_endpoint_judge_sends_the_key_and_never_writes_it(tmp_path, capsys, bench, stub, monkeypatch):
    monkeypatch.setenv("RG_TEST_KEY", SECRET)
    code, out, err = run(capsys, "labels", "suggest", bench, "--queue", "3", "--judge-url", stub, "--judge-model",
                         "stub-model", "--judge-key-env", "RG_TEST_KEY", "--json")
    assert code == 0, err
    rep = json.loads(out)
    assert rep["stored"] == 3 and rep["judge"]["model"] == "stub-model" and rep["judge"]["api_key_env"] == "RG_TEST_KEY"
    assert [s["auth"] for s in Stub.seen] == [f"Bearer {SECRET}"] * 3
    assert Stub.seen[0]["path"] == "/v1/chat/completions" and Stub.seen[0]["body"]["model"] == "stub-model"
    prompt = Stub.seen[0]["body"]["messages"][0]["content"]
    assert "3 = the answer" in prompt and '"grade"' in prompt  # the default prompt with the benchmark's scale
    # A receipt, the gate's outputs, the store: no trace of the key anywhere written.
    code, _, _ = run(capsys, "gate", bench, "--receipt", tmp_path / "receipt.json", "--as-of", "2026-06-01")
    home = tmp_path.parent  # RANKGATE_HOME and the benchmark copy live under the test's folders
    for f in list(home.rglob("*")) + list(bench.rglob("*")):
        if f.is_file():
            assert SECRET.encode() not in f.read_bytes(), f
    assert SECRET not in out + err
    book = book_of(capsys, bench)
    assert {s.grade for s in book.latest().values()} == {3}


@pytest.mark.slow  # waits on timeouts or drives a burst of keys: over a second
def test_an_endpoint_that_is_late_or_says_nonsense_is_reported(tmp_path, capsys, bench, stub, monkeypatch):
    Stub.reply = "I think it is quite relevant"
    argv = ["labels", "suggest", bench, "--queue", "2", "--judge-url", stub, "--judge-model", "m", "--json"]
    code, out, _ = run(capsys, *argv)
    rep = json.loads(out)
    assert code == 2 and rep["stored"] == 0 and all("not JSON" in f["error"] for f in rep["failures"])
    Stub.reply, Stub.delay = {"grade": 1, "reason": "late"}, 2.0
    code, out, _ = run(capsys, *argv, "--timeout", "0.5")
    rep = json.loads(out)
    assert rep["stored"] == 0 and all(f["error"] == "no answer within 0.5 s" for f in rep["failures"])
    assert len(book_of(capsys, bench)) == 0


def test_max_calls_bounds_the_run_and_cancelling_keeps_what_was_stored(tmp_path):
    cmd = judge_cmd(tmp_path, {})
    config = JudgeConfig(command=tuple(cmd.split()), max_calls=3, timeout=5)
    reqs = [JudgeRequest("q", f"d{i}", "text", "", "doc") for i in range(5)]
    assert len(list(ask(config, reqs, [0, 1, 2, 3]))) == 3
    book = SuggestionBook(tmp_path / "s.jsonl")
    answers = []
    stop = threading.Event()
    with pytest.raises(Cancelled):
        for a in ask(JudgeConfig(command=tuple(cmd.split()), timeout=5), reqs, [0, 1, 2, 3], cancelled=stop.is_set):
            answers.append(a)
            book.add([Suggestion(a.query, a.doc, a.grade, a.reason)])
            if len(answers) == 2:
                stop.set()
    assert len(answers) == 2 and set(SuggestionBook(tmp_path / "s.jsonl").latest()) == {("q", "d0"), ("q", "d1")}


def test_a_line_cut_short_by_a_crash_is_skipped_and_closed_off(tmp_path):
    path = tmp_path / "w.json.suggestions.jsonl"
    book = SuggestionBook(path)
    book.add([Suggestion("q1", "a", 2, "fine")])
    with open(path, "ab") as f:
        f.write(b'{"kind": "suggestion", "query": "q1", "doc": "b", "gra')  # the crash
    again = SuggestionBook(path)
    assert set(again.latest()) == {("q1", "a")} and again.damaged == 1
    again.add([Suggestion("q1", "c", 1, "later")])
    third = SuggestionBook(path)
    assert set(third.latest()) == {("q1", "a"), ("q1", "c")} and third.damaged == 1
    rec = third.accept("q1", "c", "ana")
    assert rec["grade"] == 1 and SuggestionBook(path).accepted()[("q1", "c")]["reviewer"] == "ana"
    assert [r["kind"] for r in SuggestionBook(path).history("q1", "c")] == ["suggestion", "accepted"]


@pytest.mark.slow
def test_with_suggestions_counts_them_for_unjudged_pairs_and_the_receipt_records_it(tmp_path, capsys, bench):
    code, _, err = run(capsys, "gate", bench, "--with-suggestions")
    assert code == 2 and "no suggestions yet" in err
    code, out, _ = run(capsys, "labels", "suggest", bench, "--queue", "30", "--json", "--trust-judge")
    stored = json.loads(out)["suggestions"]
    code, out, _ = run(capsys, "labels", "suggest", bench, "--judged", "--limit", "5", "--json")
    assert json.loads(out)["stored"] == 5  # judged pairs: their suggestions never replace a label
    _, plain, _ = run(capsys, "gate", bench, "--as-of", "2026-06-01")
    receipt = tmp_path / "receipt.json"
    code, out, _ = run(capsys, "gate", bench, "--as-of", "2026-06-01", "--with-suggestions", "--receipt", receipt)
    res = json.loads(out)
    # the judge has not earned its vote (no blind overlap checked by experts: tests/cli/test_judge_vote.py
    # has one that has): its 30 suggestions are not counted, and the receipt says why
    assert res["suggestions"]["counted"] == 0 and res["suggestions"]["file"].endswith(".suggestions.jsonl")
    assert res["judge"]["counted"] is False and res["judge"]["suggested"] == 30
    assert res["candidate_macro"] == json.loads(plain)["candidate_macro"]
    rec = json.loads(receipt.read_text())["predicate"]  # an in-toto statement
    assert "suggestions" in [i["role"] for i in rec["inputs"]] and rec["invocation"]["args"]["with_suggestions"]
    assert rec["label_trust"]["judge"]["line"].startswith("suggested labels not counted")
    assert [j["judge"] for j in rec["label_trust"]["judge"]["judges"]] == ["lexical"]
    code, out, _ = run(capsys, "receipt", "verify", receipt)
    assert code == 0 and json.loads(out)["status"] == "verified"
    book = book_of(capsys, bench)
    book.add([Suggestion(stored[0]["query"], stored[0]["doc"], 3)])
    code, out, _ = run(capsys, "receipt", "verify", receipt)
    assert code == 3 and "suggestions" in out  # a changed suggestion is a changed input


def test_the_queue_orders_by_suggested_relevant_and_lists_disagreements(tmp_path, capsys, bench):
    docs = queue_docs(capsys, bench, 40)
    book = book_of(capsys, bench)
    late = docs[30:33]  # far down the decisive order; suggested relevant, they come first
    book.add([Suggestion(q, d, 3 - i, "judge says so", judge="stub") for i, (q, d) in enumerate(late)])
    book.add([Suggestion(*docs[0], 0, "no", judge="stub")])
    code, out, _ = run(capsys, "labels", "queue", bench, "--order", "suggested", "--json")
    items = json.loads(out)["items"]
    assert [(x["query"], x["doc"]) for x in items[:3]] == late  # 3, 2, 1
    assert [x["suggested"]["grade"] for x in items[:3]] == [3, 2, 1]
    rest = [(x["query"], x["doc"]) for x in items[3:]]
    assert rest == [p for p in queue_docs(capsys, bench, 10_000) if p not in late]  # then the queue's order
    # disagreement: judged pairs whose suggestion differs from the label, relevant-or-not first
    code, out, _ = run(capsys, "labels", "list", "-b", bench, "--json")
    judged = [json.loads(x) for x in out.splitlines() if x.strip()]  # one label a line
    pairs = [(j["query"], j["doc"], j["grade"]) for j in judged][:3]
    flip = {0: 3, 1: 0, 2: 0, 3: 0}
    book.add([Suggestion(q, d, flip[g], "", judge="stub") for q, d, g in pairs[:2]] +
             [Suggestion(pairs[2][0], pairs[2][1], pairs[2][2], "", judge="stub")])  # agrees: not listed
    code, out, _ = run(capsys, "labels", "queue", bench, "--order", "disagreement", "--json")
    found = json.loads(out)
    assert found["total"] == 2
    assert {(x["query"], x["doc"]) for x in found["items"]} == {(q, d) for q, d, _ in pairs[:2]}
    assert all(x["suggested"] != x["label"] for x in found["items"])


def test_an_endpoint_whose_key_variable_is_unset_is_refused_before_any_call(capsys, bench, stub, monkeypatch):
    monkeypatch.delenv("RG_UNSET_KEY", raising=False)
    code, _, err = run(capsys, "labels", "suggest", bench, "--judge-url", stub, "--judge-model", "m",
                       "--judge-key-env", "RG_UNSET_KEY")
    assert code == 2 and "RG_UNSET_KEY" in err and "not set" in err and Stub.seen == []
    code, _, err = run(capsys, "labels", "suggest", bench, "--judge-url", stub, "--judge-model", "m",
                       "--judge-key-env", "sk-abc123 oops")
    assert code == 2 and "NAME of an environment variable" in err and "sk-abc123" not in err


@pytest.mark.slow
def test_ctrl_c_stops_the_run_keeps_what_was_stored_and_stops_the_judge(tmp_path, bench):
    import os
    import signal
    import subprocess
    import time

    slow = write(tmp_path / "slow.py", "import json, sys, time, os\n"
                 "open(sys.argv[1], 'w').write(str(os.getpid()))\n"
                 "for line in sys.stdin:\n"
                 "    time.sleep(0.3)\n"
                 "    print(json.dumps({'id': json.loads(line)['id'], 'grade': 1, 'reason': 'slow'}), flush=True)\n")
    pidfile = tmp_path / "judge.pid"
    env = dict(os.environ, PYTHONPATH=str(SAMPLES.parent / "src"))
    proc = subprocess.Popen([sys.executable, "-m", "rankgate", "labels", "suggest", str(bench), "--queue", "40",
                             "--judge-command", f"{sys.executable} {slow} {pidfile}"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            # a suite started in the background ignores SIGINT, and so would the child
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = proc.stderr.readline()
            if line.startswith("[2/"):  # two answers stored
                break
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130 and out.startswith("cancelled: asked slow about ")
    judge_pid = int(pidfile.read_text())
    time.sleep(0.2)
    with pytest.raises(ProcessLookupError):
        os.kill(judge_pid, 0)  # the judge process is gone
    files = list(Path(os.environ["RANKGATE_HOME"]).rglob("*.suggestions.jsonl"))
    assert len(files) == 1
    book = SuggestionBook(files[0])
    assert 2 <= len(book) < 40 and book.damaged == 0  # every stored line whole


def test_query_asks_about_one_querys_unjudged_pool_and_score_counts_suggestions_when_asked(tmp_path, capsys, bench):
    code, out, _ = run(capsys, "labels", "queue", bench, "--json")
    pool = [(x["query"], x["doc"]) for x in json.loads(out)["items"] if x["query"] == "q-leaked-key"]
    assert pool
    code, out, _ = run(capsys, "labels", "suggest", bench, "--query", "q-leaked-key", "--judge-command",
                       judge_cmd(tmp_path, {}), "--json")
    rep = json.loads(out)
    assert code == 0 and [(s["query"], s["doc"]) for s in rep["suggestions"]] == pool
    code, _, err = run(capsys, "labels", "suggest", bench, "--query", "q-nope", "--judge-command",
                       judge_cmd(tmp_path, {}))
    assert code == 2 and "q-nope" in err
    _, plain, _ = run(capsys, "score", bench)
    _, counted, _ = run(capsys, "score", bench, "--with-suggestions")
    assert plain != counted  # the stub suggests grade 2 for each: the runs that rank them gain
