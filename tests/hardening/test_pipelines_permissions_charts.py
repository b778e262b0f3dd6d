"""Hostile and careless input to pipelines, permissions, charts and the browser face (issues #20, #22):
one line, exit 2, nothing overwritten; a receipt covers every file the decision read."""

import json
import os
import socket

import pytest

from rankgate.cli import main
from tests.conftest import write

QIDS = ["q1", "q2"]
DOCS = ["d1", "d2", "d3", "d4"]


def bench(tmp_path, acl: str | None = 'acl = "acl.jsonl"', extra: str = ""):
    """A small benchmark with groups, an ACL, two runs and a staged pipeline."""
    write(tmp_path / "qrels.jsonl", "".join(json.dumps({"query": q, "doc": d, "grade": i % 3}) + "\n"
                                            for q in QIDS for i, d in enumerate(DOCS)))
    write(tmp_path / "queries.jsonl", "".join(json.dumps({"id": q, "text": "t", "groups": ["oncall"]}) + "\n"
                                              for q in QIDS))
    write(tmp_path / "acl.jsonl", json.dumps({"doc": "d2", "groups": ["security"]}) + "\n")
    for name, order in (("base", DOCS), ("cand", DOCS[::-1])):
        write(tmp_path / f"{name}.jsonl", "".join(json.dumps({"query": q, "ranking": order}) + "\n" for q in QIDS))
    write(tmp_path / "staged.jsonl", "".join(json.dumps({"query": q, "stage": s, "ranking": DOCS[:n]}) + "\n"
                                             for q in QIDS for s, n in (("retrieve", 4), ("rerank", 2))))
    write(tmp_path / "benchmark.toml", f"""name = "red"
k = 2
qrels = "qrels.jsonl"
queries = "queries.jsonl"
{acl or ""}
runs = ["base.jsonl", "cand.jsonl"]
{extra}
[gate]
baseline = "base"
candidate = "cand"

[[pipeline]]
name = "base"
file = "staged.jsonl"
stages = [{{ name = "retrieve" }}, {{ name = "rerank" }}]
""")
    return tmp_path


def one_error(capsys, *needles) -> str:
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    for n in needles:
        assert n in err, err
    return err


@pytest.mark.parametrize("argv, target", [
    (["compare", "{b}", "--plot", "{b}/qrels.jsonl"], "qrels.jsonl"),
    (["compare", "{b}", "--markdown", "{b}/acl.jsonl"], "acl.jsonl"),
    (["compare", "{b}", "--plot", "{b}/staged.jsonl"], "staged.jsonl"),
    (["gate", "{b}", "--markdown", "{b}/benchmark.toml"], "benchmark.toml"),
    (["gate", "{b}", "--receipt", "{b}/base.jsonl"], "base.jsonl"),
    (["gate", "{b}", "--junit", "{b}/queries.jsonl"], "queries.jsonl"),
    (["compare", "{b}", "--plot", "{b}/link.svg"], "qrels.jsonl"),  # a symlink to the qrels
])
def test_an_output_flag_never_overwrites_an_input(tmp_path, capsys, argv, target):
    b = bench(tmp_path)
    os.symlink(b / "qrels.jsonl", b / "link.svg")
    before = {p.name: p.read_bytes() for p in b.iterdir() if p.is_file()}
    assert main([a.format(b=b) for a in argv]) == 2
    one_error(capsys, "this command reads", target, "nothing was written")
    assert {p.name: p.read_bytes() for p in b.iterdir() if p.is_file()} == before


def test_deep_json_in_an_acl_a_stage_file_or_query_groups_is_one_line(tmp_path, capsys):
    b = bench(tmp_path)
    deep = "[" * 100_000 + "]" * 100_000
    write(tmp_path / "deep_acl.jsonl", '{"doc": "d1", "groups": ' + deep + "}\n")
    assert main(["funnel", str(b), "--acl", str(tmp_path / "deep_acl.jsonl")]) == 2
    one_error(capsys, "deep_acl.jsonl:1", "nested too deeply")
    write(tmp_path / "deep_stage.jsonl", '{"query": "q1", "stage": "a", "ranking": ' + deep + "}\n")
    assert main(["funnel", str(b), "--stages", str(tmp_path / "deep_stage.jsonl")]) == 2
    one_error(capsys, "deep_stage.jsonl:1", "nested too deeply")
    with open(b / "queries.jsonl", "a") as f:
        f.write('{"id": "q9", "groups": ["x"], "x": ' + deep + "}\n")
    assert main(["gate", str(b)]) == 2
    one_error(capsys, "queries.jsonl:3", "nested too deeply")


def test_a_device_as_input_is_refused_not_read_forever(tmp_path, capsys):
    b = bench(tmp_path)
    os.symlink("/dev/zero", tmp_path / "acl-zero")
    assert main(["funnel", str(b), "--acl", str(tmp_path / "acl-zero")]) == 2
    one_error(capsys, "acl-zero", "is a device")


def test_a_document_twice_in_one_stage_ranking_is_an_error(tmp_path, capsys):
    b = bench(tmp_path)
    write(tmp_path / "dup.jsonl", json.dumps({"query": "q1", "stage": "ctx", "ranking": ["d3", "d1", "d3"]}) + "\n")
    assert main(["funnel", str(b), "--stages", str(tmp_path / "dup.jsonl")]) == 2
    one_error(capsys, "dup.jsonl:1", "'d3' appears twice")


def corpus_bench(tmp_path):
    b = bench(tmp_path, acl='acl = "corpus"\ncorpus = "corpus.jsonl"')
    docs = [{"id": d, "text": "x"} | ({"acl": ["security"]} if d == "d2" else {}) for d in DOCS]
    docs.append({"id": "d9", "text": "never retrieved, never judged", "acl": ["security"]})
    write(b / "corpus.jsonl", "".join(json.dumps(d) + "\n" for d in docs))
    return b


def test_acl_in_the_corpus_may_restrict_a_document_no_run_retrieves(tmp_path, capsys):
    b = corpus_bench(tmp_path)
    code = main(["gate", str(b)])
    assert code in (0, 3), capsys.readouterr().err
    assert json.loads(capsys.readouterr().out)["permissions"]["restricted_documents"] == 2


def test_a_receipt_with_the_acl_in_the_corpus_fails_when_the_corpus_acl_changes(tmp_path, capsys):
    b = corpus_bench(tmp_path)
    receipt = tmp_path / "r.json"
    main(["gate", str(b), "--receipt", str(receipt)])
    assert ("acl", str(b / "corpus.jsonl")) in {(i["role"], i["path"]) for i in json.loads(receipt.read_text())["predicate"]["inputs"]}
    assert main(["receipt", "verify", str(receipt)]) == 0
    text = (b / "corpus.jsonl").read_text().replace('"acl": ["security"]}\n', '"acl": ["security", "audit"]}\n')
    (b / "corpus.jsonl").write_text(text)
    capsys.readouterr()
    assert main(["receipt", "verify", str(receipt)]) == 3
    assert "corpus.jsonl: sha256 differs" in capsys.readouterr().err


def _sample():
    return os.path.join(os.path.dirname(__file__), "..", "..", "sample_benchmarks", "ops-handbook")


def test_serve_refuses_an_unknown_host_a_port_in_use_and_a_missing_benchmark(tmp_path, capsys):
    pytest.importorskip("textual_serve")
    assert main(["review", _sample(), "--serve", "--host", "no such host!!", "--port", "8123"]) == 2
    one_error(capsys, "--host", "not an address")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        assert main(["review", _sample(), "--serve", "--port", str(port)]) == 2
        one_error(capsys, "--port", f"127.0.0.1:{port}")
    assert main(["review", str(tmp_path / "nothing"), "--serve", "--port", "8123"]) == 2
    one_error(capsys, "nothing", "no such file or folder")


def test_a_stage_file_lacking_a_query_says_so(tmp_path, capsys):
    """A stage with no ranking for a query is counted as retrieving nothing, and the funnel says which."""
    b = bench(tmp_path)
    write(tmp_path / "gap.jsonl", "".join(json.dumps({"query": q, "stage": s, "ranking": DOCS}) + "\n"
                                          for q, s in (("q1", "retrieve"), ("q2", "retrieve"), ("q1", "rerank"))))
    assert main(["funnel", str(b), "--stages", f"gap={tmp_path / 'gap.jsonl'}"]) == 0
    f = json.loads(capsys.readouterr().out)["pipelines"]["gap"]
    assert f["no_ranking"] == {"rerank": 1} and f["no_ranking_detail"] == {"rerank": ["q2"]}
    assert "no_ranking" not in json.loads(json.dumps(f["per_query"]))  # per stage, not per query
    assert main(["funnel", str(b), "--stages", f"gap={tmp_path / 'gap.jsonl'}", "--format", "table"]) == 0
    assert "no ranking at rerank for 1 queries (counted as retrieving nothing): q2" in capsys.readouterr().out


@pytest.mark.parametrize("measure, said", [("", "no measure named"), ("garbage", "unknown measure"),
                                           ("nDCG@10,P@5", "name one measure")])
def test_plot_measure_garbage_is_one_line(tmp_path, capsys, measure, said):
    b = bench(tmp_path)
    assert main(["compare", str(b), "--plot", str(tmp_path / "c.svg"), "--plot-measure", measure]) == 2
    one_error(capsys, said)
    assert not (tmp_path / "c.svg").exists()


def test_no_stage_loss_on_a_stage_no_pipeline_has_fails_instead_of_passing_empty(tmp_path, capsys):
    b = bench(tmp_path, extra="")
    text = (b / "benchmark.toml").read_text() + """
[[pipeline]]
name = "cand"
file = "staged.jsonl"
stages = [{ name = "retrieve" }, { name = "rerank" }]
"""
    (b / "benchmark.toml").write_text(text)
    write(tmp_path / "typo.toml", '[[rules]]\ncheck = "no_stage_loss"\nstage = "rerannk"\n')
    assert main(["gate", str(b), "--policy", str(tmp_path / "typo.toml")]) == 3
    check = next(c for c in json.loads(capsys.readouterr().out)["check_details"] if c["kind"] == "no_stage_loss")
    assert check["passed"] is False and "no stage 'rerannk' in both pipelines" in check["why"]
    write(tmp_path / "right.toml", '[[rules]]\ncheck = "no_stage_loss"\nstage = "rerank"\n')
    main(["gate", str(b), "--policy", str(tmp_path / "right.toml")])
    check = next(c for c in json.loads(capsys.readouterr().out)["check_details"] if c["kind"] == "no_stage_loss")
    assert check["passed"] is True


@pytest.mark.parametrize("argv", [
    ["compare", "{b}", "--markdown", "{t}/first.md", "--plot", "{t}/a.sock"],
    ["gate", "{b}", "--receipt", "{t}/first.json", "--junit", "{t}"],
    ["gate", "{b}", "--markdown", "{t}/first.md", "--junit", "{t}/no/such/folder/j.xml"],
])
def test_one_bad_output_path_leaves_no_other_output_written(tmp_path, capsys, argv):
    b = bench(tmp_path / "b")
    with socket.socket(socket.AF_UNIX) as sock:
        if "{t}/a.sock" in argv:  # a socket is refused; a device (-o /dev/null) is written into
            try:
                sock.bind(str(tmp_path / "a.sock"))
            except OSError as e:
                pytest.skip(f"cannot make a socket here: {e}")
        assert main([a.format(b=b, t=tmp_path) for a in argv]) == 2
    one_error(capsys, "nothing was written")
    assert not list(tmp_path.glob("first.*"))


def test_a_device_that_cannot_be_written_is_one_line(tmp_path, capsys):
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full here")
    assert main(["compare", str(bench(tmp_path / "b")), "--plot", "/dev/full"]) == 2
    one_error(capsys, "/dev/full: cannot write there: No space left on device")
