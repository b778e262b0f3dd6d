"""The GitHub Action's logic: run the gate, write the step summary, annotate lost must-pass queries.

`python -m rankgate.ci BENCHMARK [gate flags]` is what `action.yml` runs. It runs `rankgate gate` with the
given flags (and those in RANKGATE_ARGS, split as a shell splits quoted words, with no globbing or
expansion) and, from the environment GitHub sets:
- appends the gate's Markdown to the file named by GITHUB_STEP_SUMMARY;
- prints one `::error::` workflow command per failed check, naming each lost must-pass query and the
  relevant documents the candidate no longer has in its top k (escaped: core.text.visible, then GitHub's
  own `%`, CR, LF and, in properties, `:` and `,` encoding);
- when the gate cannot run (exit 2), puts its `error: ...` line itself in the annotation, and a NO DECISION
  summary with its error lines (no receipt is written then, so no `receipt` output);
- writes `decision`, `exit-code` and `receipt` to the file named by GITHUB_OUTPUT;
- exits as the gate does (0 accept, 3 reject, 2 invalid input).
Without those variables it still gates and prints the annotations, so it can be tried locally.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import shlex
import sys
import tempfile
from pathlib import Path

from rankgate.core.text import visible

ARGS_ENV = "RANKGATE_ARGS"  # action.yml's `args` input: more gate flags, split with shlex (quotes kept)
LIMIT = 10  # annotations and documents named, at most (GitHub shows 10 error annotations per step)


def escape_data(text: str) -> str:
    """A workflow command's message: visible, then GitHub's escapes."""
    return visible(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A workflow command's property value (title=...): as a message, and `:` `,` too."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotations(data: dict, limit: int = LIMIT) -> list[str]:
    """One `::error` line per lost must-pass query and per other failed check."""
    k = data.get("k")
    rows = {q.get("query"): q for q in data.get("failed_queries", [])}
    out = []
    for check in data.get("check_details", []):
        if check.get("passed"):
            continue
        if check.get("kind") == "must_pass" and check.get("failed"):
            for q in check["failed"]:
                missing = list(rows.get(q, {}).get("missing") or [])
                docs = ", ".join(missing[:limit]) + (f" and {len(missing) - limit} more" if len(missing) > limit
                                                       else "")
                msg = f"must-pass query {q} lost: no relevant document in the top {k}" + (
                    f"; missing {docs}" if docs else "")
                out.append(f"::error title={escape_property('rankgate: must-pass query lost')}::{escape_data(msg)}")
        else:
            out.append(f"::error title={escape_property('rankgate: check failed')}::"
                       f"{escape_data(str(check.get('name')) + ': ' + str(check.get('why', '')))}")
    if len(out) > limit:
        out = out[:limit] + [f"::error title={escape_property('rankgate')}::"
                             f"{escape_data(f'and {len(out) - limit} more failures: see the step summary')}"]
    return out


class _Tee(io.TextIOBase):
    """stderr as it was, and a copy kept: the gate's `error: ...` lines go into the annotation too."""

    def __init__(self, stream):
        self.stream, self.seen = stream, io.StringIO()

    def write(self, text: str) -> int:
        self.seen.write(text)
        return self.stream.write(text)

    def flush(self) -> None:
        self.stream.flush()

    def errors_seen(self) -> list[str]:
        return [line.removeprefix("error: ") for line in self.seen.getvalue().splitlines()
                if line.startswith("error: ")]


def could_not_run(code: int, errors: list[str]) -> str:
    """The annotation when the gate could not run: its first error line (and how many more there are)."""
    if not errors:
        return f"the gate could not run (exit {code}): the lines above say why"
    more = f" (and {len(errors) - 1} more: see the log)" if len(errors) > 1 else ""
    return f"the gate could not run (exit {code}): {errors[0]}{more}"


def no_decision_summary(code: int, errors: list[str], limit: int = LIMIT) -> str:
    """The step summary when the gate could not run: that it decided nothing, and why (its error lines)."""
    from rankgate.core.outputs import md

    out = ["## rankgate gate: ⚠️ NO DECISION", "",
           f"The gate could not run (exit {code}), so it neither accepts nor rejects the candidate and wrote no "
           "receipt. Fix what it names, then run it again:", ""]
    out += [f"- {md(e)}" for e in errors[:limit]] or ["- (no error line was printed: see the job's log)"]
    if len(errors) > limit:
        out.append(f"- and {len(errors) - limit} more: see the job's log")
    return "\n".join(out) + "\n\n"


def _append(path: str | None, text: str) -> None:
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(text)


def run(argv: list[str] | None = None, env: dict | None = None) -> int:
    from rankgate.cli import main as rankgate

    env = os.environ if env is None else env
    parser = argparse.ArgumentParser(prog="python -m rankgate.ci", description="rankgate gate for GitHub Actions: "
                                     "step summary, annotations, outputs; every other flag goes to rankgate gate")
    parser.add_argument("--receipt", default="rankgate-receipt.json", help="where to write the receipt")
    ours, gate_args = parser.parse_known_args(argv)
    try:  # action.yml's `args`: split as a shell would split quoted words, never globbed or expanded
        gate_args += shlex.split(env.get(ARGS_ENV, ""))
    except ValueError as e:
        print(f"::error title={escape_property('rankgate')}::"
              f"{escape_data(f'the action input args cannot be split ({e}): close its quotes')}", flush=True)
        _append(env.get("GITHUB_OUTPUT"), "exit-code=2\ndecision=invalid\n")
        return 2
    with tempfile.TemporaryDirectory(prefix="rankgate-ci-") as tmp:
        md, result = Path(tmp) / "summary.md", Path(tmp) / "result.json"
        tee = _Tee(sys.stderr)
        with contextlib.redirect_stderr(tee):
            code = rankgate(["gate", *gate_args, "--receipt", ours.receipt, "--markdown", str(md), "-o",
                             str(result)])
        outputs = {"exit-code": str(code)}
        if code in (0, 3) and result.exists():
            data = json.loads(result.read_text(encoding="utf-8"))
            _append(env.get("GITHUB_STEP_SUMMARY"), md.read_text(encoding="utf-8") + "\n")
            for line in annotations(data):
                print(line, flush=True)
            outputs |= {"decision": data["decision"], "receipt": ours.receipt}
        else:
            errors = tee.errors_seen()
            print(f"::error title={escape_property('rankgate')}::"
                  f"{escape_data(could_not_run(code, errors))}", flush=True)
            _append(env.get("GITHUB_STEP_SUMMARY"), no_decision_summary(code, errors))
            outputs["decision"] = "invalid"
    _append(env.get("GITHUB_OUTPUT"), "".join(f"{key}={visible(value)}\n" for key, value in outputs.items()))
    return code


if __name__ == "__main__":
    sys.exit(run())
