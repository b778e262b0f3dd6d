"""Import then export, every format: the same labels, and byte for byte on a second round trip."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rankgate.core.errors import InputError
from rankgate.core.formats import read_qrels
from rankgate.store import EXPORT_FORMATS, Workspace, content_hash

from .conftest import LABELS, labels_of, qrels_files, seed_json, write

INPUTS = ["trec", "trec-header", "trec-gz", "beir", "json-graded", "jsonl", "export"]


def _round_trip(tmp_path, source, fmt, plain, n):
    """Import `source` into a fresh workspace, export it; return the export's bytes."""
    db = tmp_path / f"rt{n}" / "labels.json"
    out = tmp_path / f"rt{n}.{fmt}"
    with Workspace.open(db) as ws:
        ws.import_files([source])
        ws.export(fmt, out, header=not plain)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("plain", [False, True], ids=["header", "plain"])
@pytest.mark.parametrize("fmt", EXPORT_FORMATS)
@pytest.mark.parametrize("source", INPUTS)
def test_round_trip_every_format(tmp_path, monkeypatch, source, fmt, plain):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1764547200")  # the export time is the only thing that moves
    files = qrels_files(tmp_path / "in")
    first = _round_trip(tmp_path, files[source], fmt, plain, 1)
    back = read_qrels(first)
    expected = {k: v for k, v in LABELS.items() if v >= 1} if fmt == "json" else LABELS
    got = {(q, d): (1 if fmt == "json" else g) for q, d, g, _ in back.judgments()}
    assert got == {k: (1 if fmt == "json" else v) for k, v in expected.items()}
    second = _round_trip(tmp_path, first, fmt, plain, 2)
    assert second.read_bytes() == first.read_bytes()
    if not plain:
        assert back.meta["content_hash"].startswith("sha256:")
        assert back.meta["exported_at"] == "2025-12-01T00:00:00Z"
        assert back.meta["version"] == "unfrozen"


def test_reasons_and_collection_versions_survive_jsonl(tmp_path):
    files = qrels_files(tmp_path / "in")
    with Workspace.open(tmp_path / "a.json") as ws:
        ws.import_files([files["jsonl"]])
        text = ws.export("jsonl").text
    lines = [json.loads(line) for line in text.splitlines()]
    assert lines[1] == {"query": "q-backup", "doc": "doc-backup-policy", "grade": 2, "reason": "why doc-backup-policy",
                        "collection_version": "lab-2", "reviewer": "priya"}


def test_header_collection_version_applies_to_every_label(tmp_path):
    files = qrels_files(tmp_path / "in")
    with Workspace.open(tmp_path / "a.json") as ws:
        ws.import_files([files["trec-header"]])
        assert {j.collection_version for j in ws.judgments()} == {"lab-1"}
        assert "# collection_version: lab-1\n" in ws.export("trec", header=True).text
        ws.import_files([files["trec"]], collection_version="lab-1")  # the same labels: no change
        assert len(ws.history()) == 3 + 6


def test_seed_json_keeps_declared_queries_without_labels(tmp_path):
    with Workspace.open(tmp_path / "a.json") as ws:
        ws.import_files([seed_json(tmp_path)])
        assert [q.id for q in ws.queries()] == ["q-backup", "q-dns", "q-empty"]
        body = json.loads(ws.export("json").text)["qrels"]
        assert body == {"q-backup": ["doc-backup-policy", "doc-restore-test"], "q-dns": ["doc-dns-negative-cache"],
                        "q-empty": []}
        assert read_qrels(seed_json(tmp_path)).query_ids == list(body)


def test_binary_json_lists_grade_one_and_above_and_says_what_it_left_out(ws):
    for (q, d), g in LABELS.items():
        ws.set_judgment(q, d, g, create_query=True)
    out = ws.export("json")
    body = json.loads(out.text)["qrels"]
    assert body == {"q-backup": ["doc-backup-policy", "doc-restore-test"], "q-dns": ["doc-dns-negative-cache"],
                    "q-gpu": ["doc-gpu-memory"]}
    assert out.left_out == 2 and out.labels == 4
    assert any("grade >= 1 only" in n for n in out.notes)


def test_export_meta_names_the_frozen_version_and_hash(ws, tmp_path):
    for (q, d), g in LABELS.items():
        ws.set_judgment(q, d, g, create_query=True)
    v = ws.freeze("v1")
    meta = read_qrels(write(tmp_path / "e.trec", ws.export("trec", header=True).text)).meta
    assert (meta["version"], meta["content_hash"]) == ("v1", v.content_hash)
    ws.set_judgment("q-gpu", "doc-gpu-memory", 2)
    assert ws.export("trec").version == "unfrozen"
    old = ws.export("json-graded", version="v1")
    assert json.loads(old.text)["qrels"]["q-gpu"] == {"doc-gpu-memory": 1}
    assert old.content_hash == v.content_hash


def test_removed_labels_are_not_exported(ws):
    for (q, d), g in LABELS.items():
        ws.set_judgment(q, d, g, create_query=True)
    ws.remove_judgment("q-dns", "doc-spam")
    assert "doc-spam" not in ws.export("trec").text
    assert "doc-spam" not in ws.export("jsonl").text


def test_export_writes_atomically_and_only_where_asked(ws, tmp_path):
    ws.set_judgment("q1", "d1", 1, create_query=True)
    target = tmp_path / "out" / "qrels.txt"
    target.parent.mkdir()
    before = set(tmp_path.rglob("*"))
    ws.export("trec", target, plain=True)
    assert target.read_text() == "q1 0 d1 1\n"
    from rankgate.store import paths

    # besides the output, only the store's own record of what its last export holds (store/sync.py)
    assert set(tmp_path.rglob("*")) - before == {target, paths.sidecar(ws.path, paths.EXPORTED)}


def test_trec_export_refuses_ids_with_spaces(ws, tmp_path):
    ws.import_files([write(tmp_path / "g.json", json.dumps({"q 1": {"d 1": 1}}))])
    with pytest.raises(InputError, match="spaces"):
        ws.export("trec")
    assert json.loads(ws.export("json-graded").text)["qrels"] == {"q 1": {"d 1": 1}}


def test_the_gate_reads_the_export(tmp_path, cli, samples):
    """Done when: a reviewer can export qrels that `rankgate gate` accepts."""
    lab = samples / "seed-lab"
    code, out, err = cli("labels", "set", "-b", lab, "q-dns", "doc-dns-ttl", "0", "--reason", "TTL, not caching")
    assert code == 0, err
    for fmt in ("trec", "json", "json-graded"):
        target = tmp_path / f"reviewed.{fmt}"
        assert cli("labels", "export", "-b", lab, "--format", fmt, "-o", target)[0] == 0
        code, out, err = cli("gate", "--qrels", target, "--runs", lab / "runs.json", "--baseline", "baseline",
                             "--candidate", "candidate_bad", "--must-pass", "q-recovery", "--k", "3")
        assert code == 3, (fmt, out, err)  # accepted as input; the bad candidate is rejected as in the sample


ids = st.text(alphabet="abcxyz019-_.:#", min_size=1, max_size=8)


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(labels=st.dictionaries(st.tuples(ids, ids), st.integers(-3, 4), min_size=1, max_size=25),
       fmt=st.sampled_from(["trec", "json-graded", "jsonl"]))
def test_any_labels_round_trip(tmp_path_factory, monkeypatch, labels, fmt):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1764547200")
    tmp = tmp_path_factory.mktemp("prop")
    with Workspace.open(tmp / "a.json") as ws:
        for (q, d), g in labels.items():
            ws.set_judgment(q, d, g, reason=f"r {q}", create_query=True)
        if fmt == "trec" and any(q.startswith("#") for q, _ in labels):
            with pytest.raises(InputError, match="starts with '#'"):  # it would read back as a comment
                ws.export(fmt)
            return
        text = ws.export(fmt, header=True).text
        digest = ws.content_hash()
    path = write(tmp / f"e.{fmt}", text)
    back = read_qrels(path, fmt={"json-graded": "json"}.get(fmt, fmt))
    assert {(q, d): g for q, d, g, _ in back.judgments()} == labels
    assert back.meta["content_hash"] == digest == content_hash((q, d, g) for (q, d), g in labels.items())
    with Workspace.open(tmp / "b.json") as again:
        again.import_files([path])
        assert labels_of(again) == labels
        assert again.export(fmt, header=True).text == text
