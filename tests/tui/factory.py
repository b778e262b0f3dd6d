"""A small, deterministic benchmark for the app's tests and snapshots (written to a temporary folder).

Six queries, three runs (plain = baseline, prf = candidate, stemmed), graded
labels with reasons, a corpus. The candidate loses the must-pass q-restore:
its top 3 holds d-snap (judged 0), d-rpo (unjudged) and d-price (judged 0).
Grading d-rpo relevant makes the gate accept. q-markup carries Rich markup and
terminal escapes in its text, a document ID, a reason and a document's text.
"""

from __future__ import annotations

import json
from pathlib import Path

MARKUP_TEXT = "[bold red]boom[/] [link=https://evil.example]click[/link] \x1b[31mred\x1b[0m"
MARKUP_DOC = "d-[red]x[/red]"
MARKUP_REASON = "[bold]not bold[/bold] \x1b[2J"
MARKUP_CORPUS = "[blink]doc text[/blink] and [link=file:///etc/passwd]a link[/link] \x1b]8;;http://x\x07osc"

QUERIES = [
    {"id": "q-restore", "text": "restore the postgres database after a dropped table",
     "notes": "Point-in-time recovery from the base backup and WAL.", "tags": ["backups", "critical"],
     "must_pass": True},
    {"id": "q-dns", "text": "new record still returns nxdomain", "tags": ["dns"]},
    {"id": "q-gpu", "text": "gpu out of memory while serving", "tags": ["gpu"]},
    {"id": "q-tls", "text": "certificate renewal fails with caa error", "tags": ["netsec"]},
    {"id": "q-markup", "text": MARKUP_TEXT, "notes": "[i]notes[/i] stay literal", "tags": ["odd"]},
    {"id": "q-new", "text": "how do engineers reach production hosts", "tags": ["netsec"]},
]

JUDGMENTS = [
    ("q-restore", "d-restore", 3, "The full point-in-time recovery procedure."),
    ("q-restore", "d-snap", 0, "Lists snapshots; no restore steps."),
    ("q-restore", "d-price", 0, "Storage prices only."),
    ("q-dns", "d-negcache", 2, "Negative caching explains the stale NXDOMAIN."),
    ("q-dns", "d-ttl", 1, "TTLs in general."),
    ("q-dns", "d-dnssec", 0, "DNSSEC is unrelated."),
    ("q-gpu", "d-gpumem", 3, "GPU memory budget for serving."),
    ("q-gpu", "d-kv", 2, "KV cache size per token."),
    ("q-gpu", "d-format", 0, "Model file formats."),
    ("q-tls", "d-cert", 2, "Certificate renewal with ACME."),
    ("q-tls", "d-caa", 1, "CAA records."),
    ("q-tls", "d-mtls", 0, "Mutual TLS inside the mesh."),
    ("q-markup", MARKUP_DOC, 1, MARKUP_REASON),
    ("q-markup", "d-ansi", 0, "escapes \x1b[1mbold\x1b[0m"),
]

RUNS = {
    "plain": {
        "q-restore": ["d-restore", "d-snap", "d-price", "d-policy", "d-rpo"],
        "q-dns": ["d-negcache", "d-dnssec", "d-anycast", "d-ttl", "d-mail"],
        "q-gpu": ["d-format", "d-gpumem", "d-kv", "d-quant", "d-ecc"],
        "q-tls": ["d-mtls", "d-cert", "d-caa", "d-vpn", "d-ssh"],
        "q-markup": [MARKUP_DOC, "d-ansi", "d-cert"],
        "q-new": ["d-vpn", "d-ssh", "d-mtls"],
    },
    "prf": {
        "q-restore": ["d-snap", "d-rpo", "d-price", "d-restore", "d-policy"],
        "q-dns": ["d-negcache", "d-ttl", "d-dnssec", "d-anycast", "d-mail"],
        "q-gpu": ["d-gpumem", "d-kv", "d-format", "d-quant", "d-ecc"],
        "q-tls": ["d-cert", "d-caa", "d-mtls", "d-ssh", "d-vpn"],
        "q-markup": ["d-ansi", MARKUP_DOC, "d-cert"],
        "q-new": ["d-ssh", "d-vpn", "d-mtls"],
    },
    "stemmed": {
        "q-restore": ["d-restore", "d-rpo", "d-snap", "d-price", "d-policy"],
        "q-dns": ["d-negcache", "d-dnssec", "d-anycast", "d-ttl", "d-mail"],
        "q-gpu": ["d-kv", "d-gpumem", "d-format", "d-ecc", "d-quant"],
        "q-tls": ["d-caa", "d-cert", "d-mtls", "d-vpn", "d-ssh"],
        "q-markup": [MARKUP_DOC, "d-cert", "d-ansi"],
        "q-new": ["d-mtls", "d-vpn", "d-ssh"],
    },
}

CORPUS = {
    "d-restore": ("Restoring PostgreSQL to a point in time",
                  "Restore the newest base backup taken before the mistake onto a new host, then replay the "
                  "archived WAL up to just before the dropped table."),
    "d-rpo": ("Recovery objectives", "The customer database may lose at most 5 minutes of data (RPO) and be "
              "restored within an hour (RTO)."),
    "d-snap": ("Listing snapshots", "restic snapshots lists the backups of a host."),
    "d-negcache": ("Negative caching", "Resolvers cache NXDOMAIN answers for the SOA minimum TTL."),
    MARKUP_DOC: ("[u]Title with markup[/u]", MARKUP_CORPUS),
    "d-ansi": ("ANSI", "before \x1b[2J\x1b[H after"),
}


def write_benchmark(folder: Path, name: str = "tiny-lab") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "benchmark.toml").write_text(
        f'name = "{name}"\nk = 3\ncollection_version = "tiny-1"\nqrels = "judgments.jsonl"\n'
        'queries = "queries.jsonl"\ncorpus = "corpus.jsonl"\n'
        'runs = ["runs/plain.jsonl", "runs/prf.jsonl", "runs/stemmed.jsonl"]\n\n'
        # q-new is ranked and not judged yet: accepted as `rankgate gate` accepts it, with missing_queries = "zero"
        '[gate]\nbaseline = "plain"\ncandidate = "prf"\nmust_pass = ["q-restore"]\nmissing_queries = "zero"\n',
        encoding="utf-8")
    with open(folder / "queries.jsonl", "w", encoding="utf-8") as f:
        for q in QUERIES:
            f.write(json.dumps(q) + "\n")
    with open(folder / "judgments.jsonl", "w", encoding="utf-8") as f:
        for q, d, g, why in JUDGMENTS:
            f.write(json.dumps({"query": q, "doc": d, "grade": g, "reason": why, "collection_version": "tiny-1",
                                "reviewer": "seed"}) + "\n")
    (folder / "runs").mkdir(exist_ok=True)
    for run, per in RUNS.items():
        with open(folder / "runs" / f"{run}.jsonl", "w", encoding="utf-8") as f:
            f.write(json.dumps({"meta": {"name": run}}) + "\n")
            for q, docs in per.items():
                f.write(json.dumps({"query": q, "ranking": docs}) + "\n")
    with open(folder / "corpus.jsonl", "w", encoding="utf-8") as f:
        for d, (title, text) in CORPUS.items():
            f.write(json.dumps({"id": d, "title": title, "text": text}) + "\n")
    return folder
