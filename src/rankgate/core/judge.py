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

A command gets one JSON line per document, {"id", "query", "query_text", "notes",
"doc", "doc_text"}, and answers each with one line {"id", "grade", "reason",
"confidence"?} carrying the request's id (other output lines are skipped, so a
stray print shifts no answer). Its stderr is drained (the last lines name why it
failed); on a timeout, a cancel or Ctrl-C its whole process group is ended. A
command from a benchmark folder's [judge] table runs only once the user trusts
it (`--trust-judge`, remembered per folder and command: store/trust.py). An
endpoint's whole answer is bounded by `timeout`, its redirects are followed only
to the same host (the key never goes elsewhere), and its reply is at most 1 MiB
and 32 levels of JSON. An answer that is late, not JSON, or whose
grade is not on the benchmark's scale is a failure for that document: it is
reported and never stored. The API key is read from the environment when a
request is sent and is never part of a config's `describe()`, an answer or an
error message, whole or in part (holds_key).
"""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import re
import select
import shlex
import signal
import subprocess
import time
import urllib.parse
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

    def trust_token(self) -> str:
        """What the user agrees to run when trusting a folder's judge (store/trust.py): the command with the
        bytes of every file it names (a changed script is another judge), or the endpoint, its model, the
        variable whose key is sent there and the prompt."""
        h = hashlib.sha256(b"rankgate judge trust v1\0")
        if self.command:
            for part in self.command:
                h.update(part.encode("utf-8", "surrogateescape") + b"\0")
                f = Path(self.folder) / part
                try:
                    if f.is_file() and f.stat().st_size < (16 << 20):
                        h.update(hashlib.sha256(f.read_bytes()).digest())
                except OSError:
                    pass
        else:
            for part in (self.url, self.model, self.api_key_env, self.prompt_text()):
                h.update(part.encode("utf-8", "surrogateescape") + b"\0")
        return h.hexdigest()

    def describe(self) -> dict:
        """What a suggestion and a receipt record about the judge (never the key)."""
        out = {"name": self.label(), "kind": self.kind, "model": self.model or "", "prompt_hash": self.prompt_hash()}
        if self.command:
            out["command"] = " ".join(self.command)
        else:
            out["url"] = self.url
            out["api_key_env"] = self.api_key_env
        return out


def untrusted_why(config: JudgeConfig) -> str:
    """Why a benchmark folder's own judge does not run yet, in one line (the CLI and the app)."""
    what = (f"runs the command {_clip(' '.join(config.command), 60)!r}" if config.command else
            f"sends documents{' and the key in $' + config.api_key_env if config.api_key_env else ''} to "
            f"{_clip(config.url, 60)!r}")
    return (f"[judge] {what}: rankgate runs a benchmark folder's judge only once you trust it (a folder from "
            "elsewhere can name any command). Read it, then run `rankgate labels suggest BENCH --trust-judge` "
            "once (remembered for this folder and judge; docs/reviewers.md)")


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
    if t.get("url") and "@" in urllib.parse.urlsplit(t["url"]).netloc:  # it would be stored with every suggestion
        raise InputError(where, "judge: 'url' holds a user name or key (user:key@host): name the variable holding "
                         "the key in 'api_key_env' instead")
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
        if (depth := json_nesting(text)) > MAX_NESTING:
            return fail(f"the answer is JSON nested {depth} deep (at most {MAX_NESTING})")
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
    """One process for the run, one request line in per document and the answer line carrying the same "id"
    out (any other line is skipped, so a stray print shifts nothing); a process that is late, dies or says
    something unreadable is stopped (its whole process group) and a fresh one takes the next document."""
    proc = None
    try:
        for n, req in enumerate(todo, 1):
            if cancelled():
                raise Cancelled()
            if proc is None or proc.poll() is not None:
                proc = _JudgeProcess(config)
            t0 = time.monotonic()
            try:
                proc.send(dict(req.as_dict(), id=n))
            except (BrokenPipeError, OSError):
                err = proc.tail()
                proc.stop()
                proc = None
                yield JudgeAnswer(req.query, req.doc, error="the judge command stopped reading" + err)
                continue
            line, why = proc.answer(n, t0 + config.timeout, cancelled)
            secs = time.monotonic() - t0
            if line is None:
                if why == "cancelled":
                    raise Cancelled()
                if why == "timeout":
                    why = f"no answer within {config.timeout:g} s" + proc.skipped_note()
                else:
                    why += proc.tail()
                proc.stop()
                proc = None
                yield JudgeAnswer(req.query, req.doc, error=why, seconds=secs)
                continue
            yield parse_answer(req, line, scale, secs)
    finally:  # also on Ctrl-C (KeyboardInterrupt) and a cancel: the judge and its children end
        if proc is not None:
            proc.stop(gently=True)


STDERR_TAIL = 4000  # bytes of the judge's stderr kept (the rest is read and dropped, so it never blocks)


class _JudgeProcess:
    """A judge command in its own process group, both of its output pipes drained."""

    def __init__(self, config: JudgeConfig):
        try:
            self.proc = subprocess.Popen(list(config.command), cwd=config.folder, stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        except OSError as e:
            raise InputError(" ".join(config.command),
                             f"the judge command cannot be started ({e.strerror or e})") from None
        self.buf, self.err, self.skipped, self.last_skipped = b"", b"", 0, b""
        self.open = {self.proc.stdout.fileno(), self.proc.stderr.fileno()}

    def poll(self):
        return self.proc.poll()

    def send(self, request: dict) -> None:
        self.proc.stdin.write((json.dumps(request) + "\n").encode())
        self.proc.stdin.flush()

    def answer(self, n: int, deadline: float, cancelled) -> tuple[bytes | None, str]:
        """The answer line whose "id" is `n` by the deadline: (line, "") or (None, why). A line that starts
        with "{" or "[" and is not a JSON object is taken as the answer (parse_answer says why it fails); an object
        without "id" fails; other lines (a log line, an earlier request's late answer) are skipped."""
        while True:
            got = self._next_answer(n)
            if got is not None:
                return got
            if len(self.buf) > MAX_LINE:
                return None, f"an answer longer than {MAX_LINE} bytes"
            if cancelled():
                return None, "cancelled"
            left = deadline - time.monotonic()
            if left <= 0:
                return None, "timeout"
            if self.proc.stdout.fileno() not in self.open:
                return None, "the judge command ended without an answer"
            self._read(min(left, 0.2))

    def _next_answer(self, n: int) -> tuple[bytes | None, str] | None:
        """Through the buffer's whole lines: the answer to `n` (as `answer` returns it), or None when the buffer
        holds none (the lines read are dropped and counted as skipped). Only lines starting with "{" or "[" are
        looked at, found by one regex scan: 20 MB of blank lines took minutes one line at a time."""
        end = self.buf.rfind(b"\n") + 1
        pos = 0
        for m in _ANSWER_LIKE.finditer(self.buf, 0, end):
            self._skip(pos, m.start())
            line, pos = m.group()[:-1], m.end()
            found = _answer_id(line)
            if found == n or found == "unreadable" or found == "missing":
                self.buf = self.buf[pos:]
                if found == "missing":
                    return None, ('the answer has no "id": a judge copies each request\'s "id" into its answer '
                                  "(docs/reviewers.md)")
                return line, ""
            self.skipped += 1  # an answer to an earlier request
            self.last_skipped = line
        self._skip(pos, end)
        self.buf = self.buf[end:]
        return None

    def _skip(self, start: int, end: int) -> None:
        """Count the buffer's lines in [start, end) (log lines) as skipped."""
        if end > start:
            self.skipped += self.buf.count(b"\n", start, end)
            self.last_skipped = self.buf[self.buf.rfind(b"\n", start, end - 1) + 1:end - 1]

    def _read(self, wait: float) -> None:
        ready, _, _ = select.select(list(self.open), [], [], wait)
        for fd in ready:
            chunk = os.read(fd, 65536)
            if not chunk:
                self.open.discard(fd)
            elif fd == self.proc.stdout.fileno():
                self.buf += chunk
            else:
                self.err = (self.err + chunk)[-STDERR_TAIL:]

    def skipped_note(self) -> str:
        if not self.skipped:
            return ""
        last = _clip(self.last_skipped.decode("utf-8", "replace"), 60)
        return (f" ({self.skipped} output line{'s' if self.skipped > 1 else ''} without this request's \"id\" "
                f"skipped, the last: {last!r})")

    def tail(self) -> str:
        """The judge's exit code and last stderr line, once it has ended."""
        if self.proc.poll() is None:
            return ""
        try:
            while self.proc.stderr.fileno() in self.open:
                self._read(0)
        except (OSError, ValueError):
            pass
        tail = self.err.decode("utf-8", "replace").strip().splitlines()
        return f" (exit {self.proc.returncode}: {_clip(tail[-1])})" if tail else f" (exit {self.proc.returncode})"

    def stop(self, gently: bool = False) -> None:
        """End the judge and every process it started (its process group)."""
        proc = self.proc
        try:
            if gently:
                proc.stdin.close()
                try:
                    proc.wait(timeout=2)
                except subprocess.TimeoutExpired:
                    pass
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # its children too, even after it ended
            except (ProcessLookupError, PermissionError):
                pass
            proc.wait(timeout=5)
        except (OSError, ValueError, subprocess.TimeoutExpired):
            pass
        finally:
            for f in (proc.stdout, proc.stderr, proc.stdin):
                try:
                    f.close()
                except (OSError, ValueError):
                    pass


def _answer_id(line: bytes):
    """What an output line is: the "id" (an int) of the answer it holds; "unreadable" for a line that starts
    like an answer ("{" or "[") but is no readable JSON object (parse_answer says why); "missing" for an answer
    (a JSON object with a grade) without an id; None for any other line (a log line: skipped)."""
    if not line.lstrip().startswith((b"{", b"[")):
        return None
    if json_nesting(line.decode("utf-8", "replace")) > MAX_NESTING:
        return "unreadable"
    try:
        obj = json.loads(line)
    except (ValueError, RecursionError):
        return "unreadable"
    if not isinstance(obj, dict):
        return "unreadable"
    found = obj.get("id")
    if isinstance(found, str) and found.isdigit():
        found = int(found)
    if isinstance(found, int) and not isinstance(found, bool):
        return found
    return "missing" if "grade" in obj and "id" not in obj else None  # an object with no grade: a log line


def render_prompt(template: str, req: JudgeRequest, grades: dict[int, str]) -> str:
    scale = "\n".join(f"{g} = {name}" for g, name in sorted(grades.items()))
    values = dict(req.as_dict(), scale=scale, grades=", ".join(str(g) for g in sorted(grades)))
    try:
        return template.format(**values)
    except (KeyError, IndexError, ValueError) as e:
        raise InputError("prompt", f"the prompt template has an unknown or broken placeholder ({e}); it may use "
                         "{query_text} {notes} {doc} {doc_text} {scale} {grades}, and {{ }} for braces") from None


def _ask_endpoint(config: JudgeConfig, req: JudgeRequest, grades: dict[int, str]) -> JudgeAnswer:
    """One chat completion (temperature 0): the rendered prompt as the user's message. The whole answer
    (connecting, headers, body) is bounded by config.timeout; the key goes only to the configured host."""
    body = {"model": config.model, "temperature": 0,
            "messages": [{"role": "user", "content": render_prompt(config.prompt_text(), req, grades)}]}
    headers = {"Content-Type": "application/json"}
    key = os.environ.get(config.api_key_env, "") if config.api_key_env else ""
    if key:
        headers["Authorization"] = "Bearer " + key
    url = config.url.rstrip("/") + "/chat/completions"
    t0 = time.monotonic()

    def fail(why: str) -> JudgeAnswer:
        return JudgeAnswer(req.query, req.doc, error=_scrub(why, key), seconds=time.monotonic() - t0)

    try:
        status, raw = post_json(url, json.dumps(body).encode(), headers, t0 + config.timeout)
    except TimeoutError:
        return fail(f"no answer within {config.timeout:g} s")
    except EndpointRefused as e:
        return fail(str(e))
    except (OSError, http.client.HTTPException, ValueError) as e:
        return fail(f"cannot reach the endpoint ({getattr(e, 'strerror', None) or e})")
    secs = time.monotonic() - t0
    if status >= 400:
        return fail(f"the endpoint answered HTTP {status}")
    if len(raw) > MAX_LINE:
        return fail(f"the endpoint's reply is longer than {MAX_LINE} bytes")
    text = raw.decode("utf-8", "replace")
    if (depth := json_nesting(text)) > MAX_NESTING:
        return fail(f"the endpoint's reply is JSON nested {depth} deep (at most {MAX_NESTING})")
    try:
        content = json.loads(text)["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError, RecursionError):
        return fail("the endpoint's reply is not a chat completion: " + _clip(_scrub(text, key)))
    if not isinstance(content, str):
        return fail("the chat completion has no text")
    ans = parse_answer(req, content, grades, secs)
    if key and (holds_key(ans.reason, key) or holds_key(ans.error, key)):  # never keep the key, even in part
        return JudgeAnswer(req.query, req.doc, error="the answer contains (part of) the API key: not kept",
                           seconds=secs)
    return ans


_ANSWER_LIKE = re.compile(rb"^[ \t\r\v\f]*[\[{][^\n]*\n", re.M)  # a whole output line that may be an answer
MAX_NESTING = 32  # a chat completion nests 5 deep; deeper JSON is refused before it is parsed
MAX_REDIRECTS = 3
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_BRACKETS = re.compile(r"[\[\]{}]")


def json_nesting(text: str) -> int:
    """How deep the arrays and objects of a JSON text nest (brackets inside strings not counted)."""
    depth = deepest = 0
    for c in _BRACKETS.findall(_JSON_STRING.sub("", text)):
        depth += 1 if c in "[{" else -1
        deepest = max(deepest, depth)
    return deepest


class EndpointRefused(Exception):
    """The endpoint asked for something rankgate does not do (a redirect to another host)."""


def _origin(url: str) -> tuple[str, str, int]:
    u = urllib.parse.urlsplit(url)
    return u.scheme, (u.hostname or "").lower(), u.port or (443 if u.scheme == "https" else 80)


def post_json(url: str, body: bytes, headers: dict, deadline: float) -> tuple[int, bytes]:
    """POST `body` and read the reply (at most MAX_LINE + 1 bytes) by `deadline` (time.monotonic()), however
    slowly the server sends it. A redirect is followed only to the same scheme, host and port, so the
    Authorization header never reaches another host (requests drops it there; we refuse)."""
    for _ in range(MAX_REDIRECTS + 1):
        status, location, raw = _post_once(url, body, headers, deadline)
        if status not in (301, 302, 303, 307, 308):
            return status, raw
        target = urllib.parse.urljoin(url, location or "")
        if _origin(target) != _origin(url):
            host = urllib.parse.urlsplit(target).netloc or "?"
            raise EndpointRefused(f"the endpoint redirected to another host ({_clip(host, 60)}): not followed, so "
                                  "the API key is not sent there (set 'url' to the endpoint itself)")
        url = target
    raise EndpointRefused(f"the endpoint redirected more than {MAX_REDIRECTS} times")


def _post_once(url: str, body: bytes, headers: dict, deadline: float) -> tuple[int, str | None, bytes]:
    import socket
    import threading

    u = urllib.parse.urlsplit(url)
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError()
    if u.scheme == "https":
        import ssl

        conn = http.client.HTTPSConnection(u.hostname, u.port, timeout=left, context=ssl.create_default_context())
    else:
        conn = http.client.HTTPConnection(u.hostname, u.port, timeout=left)
    late = threading.Event()

    def cut() -> None:  # the deadline: a server sending a byte a second is cut off here, not per read
        late.set()
        try:
            if conn.sock is not None:
                conn.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    timer = threading.Timer(left, cut)
    timer.daemon = True
    timer.start()
    try:
        conn.request("POST", (u.path or "/") + (f"?{u.query}" if u.query else ""), body=body, headers=headers)
        r = conn.getresponse()
        chunks, size = [], 0
        while size <= MAX_LINE:
            chunk = r.read(min(65536, MAX_LINE + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if late.is_set():
            raise TimeoutError()
        return r.status, r.getheader("Location"), b"".join(chunks)
    except (OSError, http.client.HTTPException):
        if late.is_set() or time.monotonic() >= deadline:
            raise TimeoutError() from None
        raise
    finally:
        timer.cancel()
        conn.close()


def holds_key(text: str, key: str) -> bool:
    """Whether `text` holds the key or a near-copy of it: any 10 letters or digits of it in a row, ignoring
    case and the punctuation or spaces between them (a cut, a reworded or a spaced-out echo)."""
    if not text or not key:
        return False
    norm = re.sub(r"[^0-9a-z]", "", key.lower())
    hay = re.sub(r"[^0-9a-z]", "", text.lower())
    w = min(len(norm), 10)
    return key in text or (w > 0 and any(norm[i:i + w] in hay for i in range(len(norm) - w + 1)))


def _scrub(text: str, key: str) -> str:
    """The text with the key, and any near-copy of it, withheld (see holds_key)."""
    if not key:
        return text
    text = text.replace(key, "***")
    return "(withheld: it holds part of the API key)" if holds_key(text, key) else text


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
    from rankgate.core.formats.textio import open_regular

    try:
        with open_regular(path) as f:  # a FIFO or a device is refused, never waited on
            data = f.read()
    except OSError as e:
        raise InputError(str(path), f"the suggestions cannot be read ({e.strerror or e})") from None
    records, _ = parse_journal(data)
    return {(r["query"], r["doc"]): int(r["grade"]) for r in records if r["kind"] == "suggestion"}
