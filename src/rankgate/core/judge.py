"""A judge that suggests grades: a command, or an OpenAI-compatible chat endpoint.

Configured in benchmark.toml's `[judge]` table or by flags (docs/reviewers.md):

    [judge]
    name = "lexical"                      # shown beside every suggestion
    command = ["python3", "judge.py"]     # reads JSONL on stdin, writes JSONL on stdout, run in the folder
    # or an OpenAI-compatible endpoint:
    url = "http://127.0.0.1:8000/v1"      # base URL (POST {url}/chat/completions)
    model = "my-model"
    api_key_env = "OPENAI_API_KEY"        # the environment variable holding the key (never the key itself)
    prompt = "judge-prompt.txt"           # optional: the prompt template (default: DEFAULT_PROMPT)
    timeout = 30                          # seconds per document
    max_calls = 200                       # documents per run, at most

A command gets one JSON line per document, {"query", "query_text", "notes",
"doc", "doc_text"}, and answers each with one line {"grade", "reason",
"confidence"?} in the same order. An answer that is late, not JSON, or whose
grade is not on the benchmark's scale is a failure for that document: it is
reported and never stored. The API key is read from the environment when a
request is sent and is never part of a config's `describe()`, an answer or an
error message.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import selectors
import shlex
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from rankgate.core.errors import InputError
from rankgate.core.model import grade_problem

JUDGE_KEYS = {"name", "command", "url", "model", "api_key_env", "prompt", "timeout", "max_calls"}
DEFAULT_TIMEOUT = 30.0
DEFAULT_MAX_CALLS = 200
MAX_REASON = 2000  # characters of a reason kept
MAX_LINE = 1 << 20  # bytes of one answer line

# Modelled on public relevance-judging prompts (e.g. UMBRELA's), in our own words.
DEFAULT_PROMPT = """\
You judge search results for an evaluation. Given a question and one passage, say how well the
passage answers the question, on this scale:

{scale}

Question: {query_text}
What a good answer contains (the assessor's notes; may be empty): {notes}

Passage {doc}:
{doc_text}

Think about what the question asks, whether the passage says it, and whether it is only on the same
topic without the answer. Reply with one JSON object and nothing else:
{{"grade": <one of {grades}>, "reason": "<one sentence: why>"}}
"""


@dataclass(frozen=True)
class JudgeConfig:
    name: str = ""
    command: tuple[str, ...] = ()
    url: str = ""
    model: str = ""
    api_key_env: str = ""
    prompt: str = ""  # the prompt template file ("" = DEFAULT_PROMPT)
    timeout: float = DEFAULT_TIMEOUT
    max_calls: int = DEFAULT_MAX_CALLS
    folder: str = "."  # commands run here, and relative files are found here

    @property
    def kind(self) -> str:
        return "command" if self.command else "endpoint"

    def label(self) -> str:
        """The judge's name: its `name`, else its script's (judges/lexical.py: "lexical"), else its model's."""
        if self.name:
            return self.name
        if self.command:
            script = next((c for c in self.command[1:] if Path(c).suffix and not c.startswith("-")), self.command[0])
            return Path(script).stem
        return self.model or "judge"

    def prompt_text(self) -> str:
        if not self.prompt:
            return DEFAULT_PROMPT
        from rankgate.core.formats.textio import MAX_TOML, read_text

        path = Path(self.folder) / self.prompt
        try:  # a regular file of at most 8 MiB: a device or a FIFO is refused, never read or waited on
            return read_text(path, limit=MAX_TOML, what="a prompt template")
        except InputError as e:
            raise InputError(str(path), f"the judge's prompt template cannot be read: {e.what}") from None
        except OSError as e:
            raise InputError(str(path), f"the judge's prompt template cannot be read ({e})") from None

    def prompt_hash(self) -> str:
        """sha256 of what decides the answers: the prompt template, or the command and its files."""
        h = hashlib.sha256()
        if self.command:
            for i, part in enumerate(self.command):
                h.update(part.encode() + b"\0")
                f = Path(self.folder) / part
                if i and f.is_file() and f.stat().st_size < (16 << 20):  # the script, not the interpreter
                    h.update(f.read_bytes())
        else:
            h.update(self.prompt_text().encode())
        return h.hexdigest()[:16]

    def describe(self) -> dict:
        """What a suggestion and a receipt record about the judge (never the key)."""
        out = {"name": self.label(), "kind": self.kind, "model": self.model or "", "prompt_hash": self.prompt_hash()}
        if self.command:
            out["command"] = " ".join(self.command)
        else:
            out["url"] = self.url
            out["api_key_env"] = self.api_key_env
        return out


def judge_config(table: dict | None, where: str, folder: str = ".", **flags) -> JudgeConfig | None:
    """The judge from a `[judge]` table and flags (flags win); None when neither names one."""
    t = dict(table or {})
    unknown = sorted(set(t) - JUDGE_KEYS)
    if unknown:
        raise InputError(where, f"judge: unknown key {unknown[0]!r} (expected one of {', '.join(sorted(JUDGE_KEYS))})")
    if flags.get("command") or flags.get("url"):  # a judge named by flags is that judge, not the table's
        t = {k: v for k, v in t.items() if k in ("timeout", "max_calls")}
    for key, value in flags.items():
        if value is not None:
            t[key] = value
    if not t.get("command") and not t.get("url"):
        return None
    command = t.get("command") or ()
    if isinstance(command, str):
        command = shlex.split(command)
    if not isinstance(command, (list, tuple)) or not all(isinstance(c, str) for c in command):
        raise InputError(where, "judge: 'command' must be a list of strings or one command line")
    for key in ("name", "url", "model", "api_key_env", "prompt"):
        if not isinstance(t.get(key, ""), str):
            raise InputError(where, f"judge: {key!r} must be text")
    if t.get("command") and t.get("url"):
        raise InputError(where, "judge: give either 'command' or 'url', not both")
    if t.get("url") and not t.get("model"):
        raise InputError(where, "judge: an endpoint ('url') needs a 'model'")
    if t.get("url") and not re.match(r"https?://", t["url"]):
        raise InputError(where, f"judge: 'url' must start with http:// or https://, found {t['url']!r}")
    key_env = t.get("api_key_env", "")
    if key_env and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key_env):
        raise InputError(where, "judge: 'api_key_env' is the NAME of an environment variable (e.g. OPENAI_API_KEY), "
                         "not the key")
    timeout, max_calls = t.get("timeout", DEFAULT_TIMEOUT), t.get("max_calls", DEFAULT_MAX_CALLS)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout <= 3600:
        raise InputError(where, "judge: 'timeout' must be seconds between 0 and 3600")
    if isinstance(max_calls, bool) or not isinstance(max_calls, int) or max_calls < 1:
        raise InputError(where, "judge: 'max_calls' must be a whole number of at least 1")
    return JudgeConfig(t.get("name", ""), tuple(command), t.get("url", ""), t.get("model", ""), key_env,
                       t.get("prompt", ""), float(timeout), int(max_calls), str(folder))


# ---- requests and answers ---------------------------------------------------------------------------

@dataclass(frozen=True)
class JudgeRequest:
    query: str
    doc: str
    query_text: str = ""
    notes: str = ""
    doc_text: str = ""

    def as_dict(self) -> dict:
        return {"query": self.query, "query_text": self.query_text, "notes": self.notes, "doc": self.doc,
                "doc_text": self.doc_text}


@dataclass(frozen=True)
class JudgeAnswer:
    query: str
    doc: str
    grade: int | None = None
    reason: str = ""
    confidence: float | None = None
    error: str = ""  # why there is no grade (timed out, not JSON, off the scale ...)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.error and self.grade is not None

    def as_dict(self) -> dict:
        out = {"query": self.query, "doc": self.doc}
        if self.ok:
            out.update(grade=self.grade, reason=self.reason, confidence=self.confidence)
        else:
            out["error"] = self.error
        return out


def parse_answer(req: JudgeRequest, obj, scale: Iterable[int], seconds: float = 0.0) -> JudgeAnswer:
    """A judge's answer checked: a JSON object with an integer grade on the scale, a text reason, and
    an optional confidence between 0 and 1."""
    grades = sorted(scale)

    def fail(why: str) -> JudgeAnswer:
        return JudgeAnswer(req.query, req.doc, error=why, seconds=seconds)

    if isinstance(obj, (str, bytes)):
        text = obj.decode("utf-8", "replace") if isinstance(obj, bytes) else obj
        try:
            obj = json.loads(text)
        except RecursionError:
            return fail("the answer is JSON nested too deeply")
        except ValueError:
            found = re.search(r"\{.*\}", text, re.S)  # a chat model may wrap its JSON in words
            try:
                obj = json.loads(found.group(0)) if found else None
            except RecursionError:
                return fail("the answer is JSON nested too deeply")
            except ValueError:
                obj = None
            if obj is None:
                return fail("the answer is not JSON: " + _clip(text))
    if not isinstance(obj, dict):
        return fail(f"the answer is not a JSON object: {_clip(json.dumps(obj))}")
    grade = obj.get("grade")
    if isinstance(grade, str) and re.fullmatch(r"[+-]?\d+", grade.strip()):
        grade = int(grade)
    if isinstance(grade, float) and grade.is_integer():
        grade = int(grade)
    if isinstance(grade, bool) or not isinstance(grade, int):
        return fail(f"no integer 'grade' in the answer: {_clip(json.dumps(obj))}")
    if grade not in grades:
        return fail(f"grade {grade} is not on the scale ({', '.join(map(str, grades))})")
    reason = obj.get("reason", "")
    if not isinstance(reason, str):
        return fail("'reason' must be text")
    try:
        reason.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate (\ud800) cannot be stored, exported or shown
        return fail("'reason' is not valid Unicode text (a lone UTF-16 surrogate)")
    conf = obj.get("confidence")
    if conf is not None and (isinstance(conf, bool) or not isinstance(conf, (int, float)) or not 0 <= conf <= 1):
        return fail(f"'confidence' must be a number from 0 to 1, found {_clip(json.dumps(conf))}")
    return JudgeAnswer(req.query, req.doc, grade, reason.strip()[:MAX_REASON],
                       None if conf is None else float(conf), seconds=seconds)


def _clip(text: str, n: int = 80) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 1] + "…"


# ---- asking ------------------------------------------------------------------------------------------

class Cancelled(Exception):
    """The run was cancelled (Ctrl-C, or the app's cancel): what was answered so far stands."""


def ask(config: JudgeConfig, requests: list[JudgeRequest], scale: Iterable[int], *,
        cancelled: Callable[[], bool] = lambda: False) -> Iterator[JudgeAnswer]:
    """Ask the judge about each request (at most config.max_calls), yielding one answer per request as it
    comes (the caller stores and reports progress). Every answer is bounded by config.timeout."""
    grades = dict(scale) if isinstance(scale, dict) else {g: str(g) for g in scale}
    todo = requests[: config.max_calls]
    if config.url and config.api_key_env and not os.environ.get(config.api_key_env):
        raise InputError(config.api_key_env, "the judge's API key is not set: export it in this variable "
                         "(api_key_env names the variable, never the key)")
    if config.command:
        yield from _ask_command(config, todo, list(grades), cancelled)
    else:
        for req in todo:
            if cancelled():
                raise Cancelled()
            yield _ask_endpoint(config, req, grades)


def _ask_command(config: JudgeConfig, todo: list[JudgeRequest], scale: list[int], cancelled) -> Iterator[JudgeAnswer]:
    """One process for the run, one line in and one line out per document; a process that is late,
    dies or says something unreadable is stopped and a fresh one takes the next document."""
    proc = None
    buf = b""
    try:
        for req in todo:
            if cancelled():
                raise Cancelled()
            if proc is None or proc.poll() is not None:
                proc, buf = _start(config), b""
            t0 = time.monotonic()
            try:
                proc.stdin.write((json.dumps(req.as_dict()) + "\n").encode())
                proc.stdin.flush()
            except (BrokenPipeError, OSError):
                err = _stderr_tail(proc)
                _stop(proc)
                proc = None
                yield JudgeAnswer(req.query, req.doc, error="the judge command stopped reading" + err)
                continue
            line, buf, why = _read_line(proc, buf, t0 + config.timeout, cancelled)
            secs = time.monotonic() - t0
            if line is None:
                if why == "cancelled":
                    raise Cancelled()
                if why == "timeout":
                    why = f"no answer within {config.timeout:g} s"
                else:
                    why += _stderr_tail(proc)
                _stop(proc)
                proc = None
                yield JudgeAnswer(req.query, req.doc, error=why, seconds=secs)
                continue
            yield parse_answer(req, line, scale, secs)
    finally:
        if proc is not None:
            _stop(proc, gently=True)


def _start(config: JudgeConfig) -> subprocess.Popen:
    try:
        return subprocess.Popen(list(config.command), cwd=config.folder, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    except OSError as e:
        raise InputError(" ".join(config.command), f"the judge command cannot be started ({e.strerror or e})") from None


def _read_line(proc, buf: bytes, deadline: float, cancelled) -> tuple[bytes | None, bytes, str]:
    """One line of the process's output by the deadline: (line, rest, "") or (None, rest, why)."""
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    try:
        while b"\n" not in buf:
            if len(buf) > MAX_LINE:
                return None, b"", f"an answer longer than {MAX_LINE} bytes"
            if cancelled():
                return None, buf, "cancelled"
            left = deadline - time.monotonic()
            if left <= 0:
                return None, buf, "timeout"
            if not sel.select(min(left, 0.2)):
                continue
            chunk = os.read(proc.stdout.fileno(), 65536)
            if not chunk:
                return None, buf, "the judge command ended without an answer"
            buf += chunk
    finally:
        sel.close()
    line, _, rest = buf.partition(b"\n")
    return line, rest, ""


def _stderr_tail(proc) -> str:
    if proc is None or proc.poll() is None:
        return ""
    try:
        tail = proc.stderr.read(4000).decode("utf-8", "replace").strip().splitlines()
    except (OSError, ValueError):
        return ""
    return f" (exit {proc.returncode}: {_clip(tail[-1])})" if tail else f" (exit {proc.returncode})"


def _stop(proc, gently: bool = False) -> None:
    try:
        if gently:
            proc.stdin.close()
            try:
                proc.wait(timeout=2)
                return
            except subprocess.TimeoutExpired:
                pass
        proc.kill()
        proc.wait(timeout=5)
    except (OSError, ValueError, subprocess.TimeoutExpired):
        pass
    finally:
        for f in (proc.stdout, proc.stderr, proc.stdin):
            try:
                f.close()
            except (OSError, ValueError):
                pass


def render_prompt(template: str, req: JudgeRequest, grades: dict[int, str]) -> str:
    scale = "\n".join(f"{g} = {name}" for g, name in sorted(grades.items()))
    values = dict(req.as_dict(), scale=scale, grades=", ".join(str(g) for g in sorted(grades)))
    try:
        return template.format(**values)
    except (KeyError, IndexError, ValueError) as e:
        raise InputError("prompt", f"the prompt template has an unknown or broken placeholder ({e}); it may use "
                         "{query_text} {notes} {doc} {doc_text} {scale} {grades}, and {{ }} for braces") from None


def _ask_endpoint(config: JudgeConfig, req: JudgeRequest, grades: dict[int, str]) -> JudgeAnswer:
    """One chat completion (temperature 0): the rendered prompt as the user's message."""
    body = {"model": config.model, "temperature": 0,
            "messages": [{"role": "user", "content": render_prompt(config.prompt_text(), req, grades)}]}
    headers = {"Content-Type": "application/json"}
    key = os.environ.get(config.api_key_env, "") if config.api_key_env else ""
    if key:
        headers["Authorization"] = "Bearer " + key
    url = config.url.rstrip("/") + "/chat/completions"
    t0 = time.monotonic()
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=config.timeout) as r:  # noqa: S310 - the user's endpoint
            raw = r.read(MAX_LINE + 1)
    except urllib.error.HTTPError as e:
        return JudgeAnswer(req.query, req.doc, error=f"the endpoint answered HTTP {e.code}",
                           seconds=time.monotonic() - t0)
    except (urllib.error.URLError, TimeoutError, OSError) as e:
        why = getattr(e, "reason", e)
        text = (f"no answer within {config.timeout:g} s" if "timed out" in str(why)
                else f"cannot reach the endpoint ({why})")
        return JudgeAnswer(req.query, req.doc, error=_scrub(text, key), seconds=time.monotonic() - t0)
    secs = time.monotonic() - t0
    try:
        content = json.loads(raw)["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError):
        return JudgeAnswer(req.query, req.doc, error="the endpoint's reply is not a chat completion: "
                           + _scrub(_clip(raw.decode("utf-8", "replace")), key), seconds=secs)
    if not isinstance(content, str):
        return JudgeAnswer(req.query, req.doc, error="the chat completion has no text", seconds=secs)
    ans = parse_answer(req, content, grades, secs)
    if key and (key in ans.reason or key in ans.error):  # never keep the key, even if echoed
        return JudgeAnswer(req.query, req.doc, error="the answer contains the API key: not kept", seconds=secs)
    return ans


def _scrub(text: str, key: str) -> str:
    return text.replace(key, "***") if key else text


@dataclass
class RunReport:
    """What a `suggest` run did: answers stored, failures (per document), whether it was cancelled."""

    judge: dict
    asked: int = 0
    stored: list[JudgeAnswer] = field(default_factory=list)
    failed: list[JudgeAnswer] = field(default_factory=list)
    cancelled: bool = False
    left: int = 0  # requests not asked (max_calls, or cancelled)

    def as_dict(self) -> dict:
        return {"judge": self.judge, "asked": self.asked, "stored": len(self.stored), "failed": len(self.failed),
                "cancelled": self.cancelled, "not_asked": self.left,
                "failures": [a.as_dict() for a in self.failed], "suggestions": [a.as_dict() for a in self.stored]}


# ---- the suggestions journal, read (store/suggestions.py writes it) ----------------------------------

def parse_journal(data: bytes) -> tuple[list[dict], int]:
    """The records of a suggestions journal and how many lines could not be read (a line a crash cut
    short at the end, a line edited by hand)."""
    records, damaged = [], 0
    lines = data.split(b"\n")
    if lines.pop():  # the file does not end with a newline: its last line was cut short
        damaged += 1
    for raw in lines:
        if not raw.strip():
            continue
        try:
            rec = json.loads(raw)
        except ValueError:
            damaged += 1
            continue
        if _well_formed(rec):
            records.append(rec)
        else:
            damaged += 1
    return records, damaged


def _well_formed(rec) -> bool:
    if not (isinstance(rec, dict) and rec.get("kind") in ("suggestion", "accepted", "overlap")
            and isinstance(rec.get("query"), str) and isinstance(rec.get("doc"), str)):
        return False
    grade = rec.get("grade")
    return rec["kind"] != "suggestion" or (isinstance(grade, int) and not isinstance(grade, bool)
                                            and grade_problem(grade) is None)  # a hand-edited 10**30 too


def suggested_grades(path: str | os.PathLike) -> dict[tuple[str, str], int]:
    """The newest suggested grade of every pair in a suggestions journal."""
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise InputError(str(path), f"the suggestions cannot be read ({e.strerror or e})") from None
    records, _ = parse_journal(data)
    return {(r["query"], r["doc"]): int(r["grade"]) for r in records if r["kind"] == "suggestion"}
