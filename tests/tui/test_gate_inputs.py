"""The app shows NO DECISION exactly where `rankgate gate` refuses its inputs (exit 2), with the gate's reason:
judged queries against each run's (missing and extra), short rankings, no judgment at all, a judged query with
no relevant document, and the binding of runs to the labels' collection version (newcomer s9, N14 and N1)."""

from __future__ import annotations

import json

import pytest

from rankgate.cli import main
from rankgate.tui.loader import Inputs, load

QRELS = "q1 0 d1 1\nq2 0 d5 1\nq2 0 d2 1\nq3 0 d7 1\n"
RUN = "".join(f"{q} Q0 {d} {r} {10 - r} r\n" for q, docs in (("q1", "d3 d1 d9"), ("q2", "d5 d4 d2"),
                                                            ("q3", "d8 d6 d0")) for r, d in enumerate(docs.split(), 1))


@pytest.fixture
def files(tmp_path):
    (tmp_path / "qrels.trec").write_text(QRELS)
    (tmp_path / "extra.trec").write_text(QRELS + "q-extra 0 d-x 1\n")
    (tmp_path / "r1.trec").write_text(RUN)
    (tmp_path / "r2.trec").write_text(RUN.replace("q3 Q0 d8 1", "q3 Q0 d7 1"))
    (tmp_path / "topics.tsv").write_text("q1\tfirst\nq2\tsecond\nq3\tthird\n")
    return tmp_path


def gate_exit(capsys, qrels, runs, flags) -> tuple[int, str]:
    argv = ["gate", "--qrels", str(qrels)] + [a for r in runs for a in ("--runs", str(r))] + \
        ["--baseline", "r1", "--candidate", "r2", "--quiet", "-o", str(qrels) + ".result.json"] + flags
    code = main(argv)
    return code, capsys.readouterr().err


def agree(capsys, model, runs, flags, tmp_path) -> tuple[list, str]:
    """The app's refusals and `rankgate gate`'s exit on the labels the app exports: refused iff exit 2, and every
    reason the app gives is a line of the gate's."""
    out = tmp_path / "exported.jsonl"
    model.labels.export(out, "jsonl")
    view = model.gate(fresh=True)
    code, err = gate_exit(capsys, out, runs, flags)
    assert code in (0, 3, 2)
    assert bool(view.refused) == (code == 2), (view.refused, err)
    for _, what in view.refused:
        if "no judgments yet" not in what:  # an empty file: the qrels reader's own words
            assert what in err, (what, err)
    return view.refused, err


@pytest.mark.slow
@pytest.mark.parametrize("flags, refused_by", [
    ([], "--short-rankings allow"),
    (["--k", "3"], ""),
    (["--short-rankings", "allow"], ""),
])
def test_short_rankings(files, capsys, flags, refused_by):
    runs = [files / "r1.trec", files / "r2.trec"]
    inputs = Inputs(str(files / "qrels.trec"), [str(r) for r in runs])
    inputs.k = 3 if "--k" in flags else 10  # `rankgate review` on raw files: 10, as the gate's default
    inputs.short_rankings = "allow" if "allow" in flags else None
    m = load(inputs).model
    refused, _ = agree(capsys, m, runs, flags, files)
    assert (refused_by in refused[0][1]) if refused_by else not refused
    if refused:  # one line per run: the short rankings counted, the first named
        assert len(refused) == 2 and "fewer than k=10 documents for 3 queries: 'q1' (3)" in refused[0][1]
    m.labels.close()


@pytest.mark.slow
@pytest.mark.parametrize("flags", [[], ["--missing-queries", "zero"]])
def test_a_judged_query_the_runs_do_not_rank(files, capsys, flags):
    runs = [files / "r1.trec", files / "r2.trec"]
    inputs = Inputs(str(files / "extra.trec"), [str(r) for r in runs], k=3)
    inputs.missing_queries = "zero" if flags else None
    m = load(inputs).model
    refused, _ = agree(capsys, m, runs, ["--k", "3"] + flags, files)
    if flags:
        assert not refused
    else:
        assert "has no ranking for 1 qrels query: 'q-extra' (use --missing-queries zero" in refused[0][1]
    m.labels.close()


def test_labelling_from_scratch_decides_only_when_every_ranked_query_is_judged(files, capsys):
    """No label: no decision; labels on some queries: the runs rank queries absent from them; every ranked query
    judged: a decision, as the gate's on the exported file."""
    runs = [files / "r1.trec", files / "r2.trec"]
    inputs = Inputs(None, [str(r) for r in runs], queries=str(files / "topics.tsv"), k=3)
    m = load(inputs).model
    view = m.gate(fresh=True)
    assert view.refused and "no judgments yet" in view.refused[0][1]
    m.labels.set("q1", "d1", 1)
    m.apply_edit("q1")
    refused, err = agree(capsys, m, runs, ["--k", "3"], files)
    assert "ranks 2 queries absent from the qrels: 'q2', 'q3' (to accept them: --missing-queries zero" \
        in refused[0][1]
    m.labels.set("q2", "d4", 0)  # judged, nothing relevant: the gate refuses it too
    m.apply_edit("q2")
    m.labels.set("q3", "d7", 1)
    m.apply_edit("q3")
    refused, err = agree(capsys, m, runs, ["--k", "3"], files)
    assert "query 'q2' has no relevant document (grade >= 1); declare it a no-answer query" in refused[0][1]
    m.labels.set("q2", "d5", 1)
    m.apply_edit("q2")
    refused, _ = agree(capsys, m, runs, ["--k", "3"], files)
    assert not refused
    m.labels.close()


@pytest.mark.slow
def test_the_top_bar_and_gate_pane_say_no_decision_and_the_flag(files):
    import asyncio

    from rankgate.tui.app import ReviewApp
    from rankgate.tui.widgets.gate_panel import GatePanel

    inputs = Inputs(str(files / "extra.trec"), [str(files / "r1.trec"), str(files / "r2.trec")], k=3)

    async def run():
        app = ReviewApp(inputs)
        async with app.run_test(size=(100, 30)) as pilot:
            for _ in range(200):
                await pilot.pause(0.05)
                if getattr(app.screen, "model", None) is not None:
                    break
            top = str(app.screen.query_one("#top-bar").render())
            body = str(app.screen.query_one(GatePanel).query_one("#gate-body").render())
            assert top.lstrip().startswith("NO DECISION") and "run 'r1' has no ranking for 1 qrels query · " \
                "--missing-queries zero accepts (+1 more)" in top  # short: the IDs are in the gate pane
            assert body.lstrip().startswith("NO DECISION") and "--missing-queries zero" in body
            assert "✔" not in body and "✗" not in body  # no checks while the gate would refuse
            await pilot.press("q")

    asyncio.run(run())


@pytest.mark.slow
def test_a_collection_version_other_than_the_runs_snapshot_stops_the_decision(tmp_path, capsys):
    """N1: `V` with another version than the runs' corpus_snapshot: the app says what the gate says (exit 2),
    and the gate names a judgment that carries that version, with its file and line."""
    from tests.tui.factory import write_benchmark

    bench = write_benchmark(tmp_path / "tiny")
    for run in ("plain", "prf", "stemmed"):
        path = bench / "runs" / f"{run}.jsonl"
        lines = path.read_text().splitlines()
        lines[0] = json.dumps({"meta": {"name": run, "corpus_snapshot": "tiny-1"}})
        path.write_text("\n".join(lines) + "\n")
    m = load(Inputs(str(bench))).model
    assert not m.gate(fresh=True).refused
    m.labels.set_version("q-dns", "d-negcache", "tiny-2")
    m.apply_edit("q-dns")
    view = m.gate(fresh=True)
    assert "run 'plain' has corpus_snapshot 'tiny-1' but 1 judgment carries another collection_version " \
           "('tiny-2': 1), e.g. query 'q-dns', document 'd-negcache'; pass --allow-snapshot-mismatch" \
           in view.refused[0][1]
    m.labels.export(bench / "judgments.jsonl", "jsonl")
    m.labels.close()
    code = main(["gate", str(bench), "--quiet", "-o", str(tmp_path / "r.json")])
    err = capsys.readouterr().err
    line = next(i for i, text in enumerate((bench / "judgments.jsonl").read_text().splitlines(), 1)
                if "tiny-2" in text)
    assert code == 2 and view.refused[0][1].split("; pass")[0] in err
    assert f"e.g. query 'q-dns', document 'd-negcache' ({bench / 'judgments.jsonl'}:{line})" in err
    m = load(Inputs(str(bench), allow_snapshot_mismatch=True)).model  # the gate's flag, in the app too
    assert not m.gate(fresh=True).refused
    m.labels.close()


@pytest.mark.slow
def test_the_version_prompt_warns_when_the_version_is_not_the_runs_snapshot(tmp_path):
    """N1: the V prompt says, while the typed version differs from the runs' corpus_snapshot, what that does
    to the gate; saved, the top bar says NO DECISION with the binding problem."""
    import asyncio

    from tests.tui.conftest import make_app, ready
    from tests.tui.factory import write_benchmark

    bench = write_benchmark(tmp_path / "tiny")
    for run in ("plain", "prf", "stemmed"):
        path = bench / "runs" / f"{run}.jsonl"
        lines = path.read_text().splitlines()
        lines[0] = json.dumps({"meta": {"name": run, "corpus_snapshot": "tiny-1"}})
        path.write_text("\n".join(lines) + "\n")

    async def run():
        app = make_app(bench)
        async with app.run_test(size=(100, 30)) as pilot:
            await ready(pilot)
            await pilot.press("2", "escape")
            await pilot.pause()
            await pilot.press("V")
            await pilot.pause()
            help_ = app.screen.query_one("#prompt-help")
            assert "corpus_snapshot" not in str(help_.render())  # the runs' own version: no warning
            await pilot.press("ctrl+u", *"tiny-2")
            await pilot.pause()
            assert "not the runs' corpus_snapshot tiny-1: the gate stops" in str(help_.render())
            await pilot.press("enter")
            await pilot.pause()
            top = str(app.screen.query_one("#top-bar").render())
            assert top.lstrip().startswith("NO DECISION") and "corpus_snapshot 'tiny-1'" in top

    asyncio.run(run())


def test_a_must_pass_query_nobody_judged_stops_the_decision(files, capsys):
    """The gate refuses a must-pass query the qrels lack (exit 2); so does the app, until it is judged."""
    queries = files / "queries.jsonl"
    queries.write_text("".join(json.dumps({"id": q, "text": q, "must_pass": q == "q3"}) + "\n"
                               for q in ("q1", "q2", "q3")))
    runs = [files / "r1.trec", files / "r2.trec"]
    inputs = Inputs(None, [str(r) for r in runs], queries=str(queries), k=3, missing_queries="zero")
    m = load(inputs).model
    m.labels.set("q1", "d1", 1)
    m.apply_edit("q1")
    flags = ["--k", "3", "--missing-queries", "zero", "--queries", str(queries)]
    refused, err = agree(capsys, m, runs, flags, files)
    assert refused and "query 'q3' is not in the qrels" in refused[0][1]
    m.labels.set("q3", "d7", 1)
    m.apply_edit("q3")
    refused, _ = agree(capsys, m, runs, flags, files)
    assert not refused
    m.labels.close()
