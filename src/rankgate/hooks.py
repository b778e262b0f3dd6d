"""pre-commit's hooks (`.pre-commit-hooks.yaml`): validate the benchmark folders and qrels files a commit touches.

`python -m rankgate.hooks benchmark FILE...`: each benchmark folder holding one of the files (the nearest
folder above it with a benchmark.toml) is checked as `rankgate validate FOLDER` does.
`python -m rankgate.hooks qrels FILE...`: each qrels file is read (its format detected as usual) and its
problems named by file and line. Exit 1 when anything is wrong (pre-commit's convention), else 0.
"""

from __future__ import annotations

import sys
from pathlib import Path

from rankgate.cli.base import say
from rankgate.core.benchmark import MANIFEST
from rankgate.core.errors import InputError, ValidationError


def benchmark_folders(files: list[str]) -> list[Path]:
    """The benchmark folders the files belong to, each once, in order."""
    out: dict[Path, None] = {}
    for name in files:
        p = Path(name).resolve()
        for folder in ([p] if p.is_dir() else []) + list(p.parents):
            if (folder / MANIFEST).is_file():
                out[folder] = None
                break
    return list(out)


def check_benchmarks(files: list[str]) -> int:
    from rankgate.cli import main

    failed = 0
    for folder in benchmark_folders(files):
        if main(["validate", str(folder), "--format", "text"]) != 0:
            failed += 1
    return 1 if failed else 0


def check_qrels(files: list[str]) -> int:
    from rankgate.core.formats import read_qrels

    failed = 0
    for name in files:
        try:
            qrels = read_qrels(name)
        except InputError as e:
            say(f"error: {e}", err=True)
            failed += 1
        except ValidationError as e:
            for p in e.problems:
                say(f"error: {p}", err=True)
            failed += 1
        else:
            if not len(qrels.query_ids):
                say(f"error: {name}: no judgments (expected at least one query with a judged document)", err=True)
                failed += 1
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] not in ("benchmark", "qrels"):
        say("usage: python -m rankgate.hooks {benchmark|qrels} FILE...", err=True)
        return 2
    return (check_benchmarks if argv[0] == "benchmark" else check_qrels)(argv[1:])


if __name__ == "__main__":
    sys.exit(main())
