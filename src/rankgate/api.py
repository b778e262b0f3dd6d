"""`rankgate gate` called from Python (`rankgate.gate`, docs/api.md): the command itself, run in-process, so a
notebook gets the same input checks and the same decision as CI. It is the command line's layer (it runs
rankgate.cli), not the core's: `rankgate/__init__.py` loads it lazily by name."""

from __future__ import annotations


def gate(benchmark=None, *, baseline: str | None = None, candidate: str | None = None, **flags) -> dict:
    """`rankgate gate` from Python, with the same input checks and the same decision: `benchmark` a folder
    (or None with `qrels=`/`runs=`), every other flag of the command a keyword (`k=10`, `must_pass=["q-1"]`,
    `policy="gate.toml"`, `runs=["a.trec", "b.trec"]`). Returns the result `-o` writes, as a dict
    (`decision` "accept" or "reject", `accepted`, `check_details`, `failed_queries`, ...); input the gate
    refuses raises InputError with the command's error line."""
    import contextlib
    import io
    import json
    import os
    import tempfile

    from rankgate.cli import main
    from rankgate.core.errors import InputError

    argv = ["gate"] + ([os.fspath(benchmark)] if benchmark is not None else [])
    for key, value in dict(baseline=baseline, candidate=candidate, **flags).items():
        flag = "--" + key.replace("_", "-")
        if value is True:
            argv.append(flag)
        elif isinstance(value, (list, tuple)):
            argv += [x for item in value for x in (flag, os.fspath(item) if isinstance(item, os.PathLike)
                                                   else str(item))]
        elif value is not None and value is not False:
            argv += [flag, os.fspath(value) if isinstance(value, os.PathLike) else str(value)]
    with tempfile.TemporaryDirectory(prefix="rankgate-") as tmp:
        out, err = os.path.join(tmp, "result.json"), io.StringIO()
        with contextlib.redirect_stderr(err):
            code = main([*argv, "-o", out, "--quiet"])
        if code not in (0, 3) or not os.path.exists(out):
            said = [line.removeprefix("error: ") for line in err.getvalue().splitlines() if line.startswith("error: ")]
            raise InputError("rankgate.gate", "; ".join(said) or f"the gate could not run (exit {code})")
        with open(out, encoding="utf-8") as f:
            return json.load(f)
