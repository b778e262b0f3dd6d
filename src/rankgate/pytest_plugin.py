"""rankgate's pytest plugin (entry point `pytest11`): the `rankgate_gate` fixture.

    def test_release(rankgate_gate):
        rankgate_gate("benchmarks/support", baseline="production", candidate="candidate")

runs `rankgate gate` on the folder and fails the test when the candidate is rejected, with the verdict
line, the failed checks and every lost query with its missing documents in the message; it returns the
result (the JSON `rankgate gate` prints, as a dict) when the candidate is accepted. Every other
`rankgate gate` flag is a keyword (`k=10`, `must_pass=["q-1"]`, `policy="gate.toml"`, `receipt="r.json"`).
A relative path is taken from the current folder, else from pytest's rootdir. Imports rankgate only
when the fixture is used, so having the plugin installed costs a test run nothing.
"""

from __future__ import annotations

import pytest

LIMIT = 20  # lost queries named in the message, at most


def _flags(kwargs: dict) -> list[str]:
    argv = []
    for key, value in kwargs.items():
        flag = "--" + key.replace("_", "-")
        if value is None or value is False:
            continue
        if value is True:
            argv.append(flag)
        elif isinstance(value, (list, tuple)):
            for item in value:
                argv += [flag, str(item)]
        else:
            argv += [flag, str(value)]
    return argv


def failure_message(data: dict, limit: int = LIMIT) -> str:
    """What a rejected gate tells the test's reader: the verdict, the failed checks, the lost queries."""
    from rankgate.core.outputs import verdict_line
    from rankgate.core.text import visible

    lines = [verdict_line(data)]
    failed = [c for c in data.get("check_details", []) if not c.get("passed")]
    if failed:
        lines.append("failed checks:")
        lines += [f"  {visible(c.get('name'))}: {visible(c.get('why', ''))}" for c in failed]
    rows = {q.get("query"): q for q in data.get("failed_queries", [])}
    lost = list(dict.fromkeys([q for c in failed if c.get("kind") == "must_pass" for q in c.get("failed", [])]
                              + list(data.get("newly_failed", []))))
    if lost:
        lines.append(f"lost queries (no relevant document in the top {data.get('k')}):")
        for q in lost[:limit]:
            missing = rows.get(q, {}).get("missing") or []
            lines.append(f"  {visible(q)}: missing {', '.join(visible(d) for d in missing) or '(none judged)'}")
        if len(lost) > limit:
            lines.append(f"  and {len(lost) - limit} more")
    return "\n".join(lines)


@pytest.fixture
def rankgate_gate(request, tmp_path_factory):
    """Gate a candidate run on a benchmark folder; fail the test, naming the lost queries, unless accepted."""
    import contextlib
    import io
    import json
    from pathlib import Path

    def gate(benchmark, baseline: str | None = None, candidate: str | None = None, **flags) -> dict:
        from rankgate.cli import main

        path = Path(benchmark)
        if not path.is_absolute() and not path.exists():
            path = Path(request.config.rootpath) / path
        out = tmp_path_factory.mktemp("rankgate") / "result.json"
        argv = ["gate", str(path), *_flags({"baseline": baseline, "candidate": candidate, **flags}),
                "-o", str(out), "--quiet"]
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            code = main(argv)
        if code not in (0, 3) or not out.exists():
            pytest.fail(f"rankgate gate could not run (exit {code}):\n{err.getvalue().strip()}", pytrace=False)
        data = json.loads(out.read_text(encoding="utf-8"))
        if code != 0:
            pytest.fail(failure_message(data), pytrace=False)
        return data

    return gate
