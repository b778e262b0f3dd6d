"""A command's words read without argparse when they are plain (`rankgate gate FOLDER --receipt r.json`).

argparse is a fifth of what `rankgate gate` adds to `import numpy` on a small benchmark: its import (with
gettext and, for gettext's look-ups of the words argparse would translate, locale) and the gate's parser
with its thirty flags. A command's flags are still defined once, by its module's `register(sub)`: `plain_args`
runs it on a `_Recording` that keeps what it adds to the one command given (`_Command`), and reads the words
as argparse reads them when every word is plain: the command's positional word first (when it has one), then
flags spelt out in full, each followed by its value where it takes one (a value that does not start with
"-"), every value of the type and among the choices the flag asks for. Anything else gives None and argparse
reads the words as before, with its help and its error lines: `-h`, a shortened flag, `--flag=value`, `--`,
a value starting with "-", a word after the flags, a value argparse would refuse, a required flag missing,
and a command whose flags are not all plain (subcommands, groups, other actions). The namespace is the one
argparse gives: the same names in the same order, the same values (tests/cli/test_fastargs.py compares them
for every command and many words).
"""

from __future__ import annotations

from types import SimpleNamespace

_SUPPRESS = "==SUPPRESS=="  # argparse.SUPPRESS
_ACTIONS = ("store", "store_true", "store_false", "store_const", "append")
_TOP = ("-h", "--help", "--version")  # the top parser's flags: a flag that starts one of them is left to argparse
_KNOWN = frozenset(("action", "nargs", "const", "default", "type", "choices", "required", "help", "metavar", "dest"))


class Namespace(SimpleNamespace):
    """What argparse.Namespace does for a command: attributes, vars(), `name in args`."""

    def __contains__(self, key: str) -> bool:
        return key in self.__dict__


class _Flag:
    __slots__ = ("strings", "dest", "kind", "const", "default", "type", "choices", "nargs")

    def __init__(self, strings, dest, kind, const, default, type_, choices, nargs):
        self.strings, self.dest, self.kind, self.const, self.default = strings, dest, kind, const, default
        self.type, self.choices, self.nargs = type_, choices, nargs


class _Command:
    """What `register` adds to one command's parser (add_argument, set_defaults), as argparse would keep it;
    `plain` is False once it asks for anything else."""

    def __init__(self):
        self.flags: list[_Flag] = []
        self.defaults: dict = {}
        self.plain = True

    def add_argument(self, *strings, **kw):
        kind = kw.get("action", "store")
        nargs = kw.get("nargs")
        if kind not in _ACTIONS or not strings or kw.keys() - _KNOWN or kw.get("required") \
                or not all(s.__class__ is str and s for s in strings):
            self.plain = False
            return None
        positional = not strings[0].startswith("-")
        if positional:
            if len(strings) > 1 or "dest" in kw or kind != "store" or nargs not in (None, "?"):
                self.plain = False
                return None
            dest = strings[0]
        else:
            if nargs is not None or not all(s.startswith("-") for s in strings):
                self.plain = False
                return None
            dest = kw.get("dest")
            if dest is None:  # argparse: the first long flag's name, else the first flag's
                first = next((s for s in strings if len(s) > 1 and s[1] == "-"), strings[0])
                dest = first.lstrip("-").replace("-", "_")
        if dest == _SUPPRESS or kw.get("default") == _SUPPRESS:
            self.plain = False
            return None
        if "default" in kw:
            default = kw["default"]
        elif dest in self.defaults:  # set_defaults before the flag: argparse gives it that default
            default = self.defaults[dest]
        else:
            default = {"store_true": False, "store_false": True}.get(kind)
        const = {"store_true": True, "store_false": False}.get(kind, kw.get("const"))
        self.flags.append(_Flag(() if positional else strings, dest, kind, const, default, kw.get("type"),
                                kw.get("choices"), nargs))
        return None

    def set_defaults(self, **kw) -> None:
        if _SUPPRESS in [v for v in kw.values() if isinstance(v, str)]:
            self.plain = False
        self.defaults.update(kw)
        for flag in self.flags:
            if flag.dest in kw:
                flag.default = kw[flag.dest]

    def __getattr__(self, name: str):  # add_subparsers, add_argument_group, ...: argparse reads this command
        self.plain = False
        return _skip


class _Skipped:
    """Whatever `register` does with what is not recorded does nothing (a group's subcommands: none)."""

    def add_argument(self, *args, **kwargs):  # (the usual calls, without __getattr__: the other commands' flags)
        return self

    set_defaults = add_parser = add_subparsers = add_argument

    def __getattr__(self, name: str):
        return _Skipped()

    def __call__(self, *args, **kwargs):
        return _Skipped()

    def __iter__(self):
        return iter(())


_skip = _Skipped()


class _Recording:
    """What a module's `register(sub)` gets: the command given is recorded, the others skipped."""

    def __init__(self, command: str):
        self.command, self.found = command, None

    def add_parser(self, name: str, **kwargs):
        if name != self.command:
            return _skip
        self.found = _Command()
        return self.found

    def __getattr__(self, name: str):
        return _skip


class _NotPlain(Exception):
    pass


def _value(flag: _Flag, text: str, check: bool = True):
    """A word as argparse converts and checks it (its type, then its choices)."""
    try:
        value = text if flag.type is None else flag.type(text)
    except Exception:  # argparse says why (or raises it itself)
        raise _NotPlain from None
    if check and flag.choices is not None and value not in flag.choices:
        raise _NotPlain
    return value


def plain_args(argv: list[str], module: str) -> Namespace | None:
    """The namespace argparse gives for `argv` (a command of `module`, then its words), or None when the words
    are not plain (then argparse reads them)."""
    from importlib import import_module

    if not argv or argv[0].startswith("-"):
        return None
    recording = _Recording(argv[0])
    try:
        import_module(f"rankgate.cli.{module}").register(recording)
    except Exception:  # a module that reads back what it built (a group's subcommands): argparse builds it
        return None
    command = recording.found
    if command is None or not command.plain or not callable(command.defaults.get("func")):
        return None
    try:
        return _read(argv[0], command, argv[1:])
    except _NotPlain:
        return None


def _read(name: str, command: _Command, words: list[str]) -> Namespace:
    flags = {s: f for f in command.flags for s in f.strings}
    positionals = [f for f in command.flags if not f.strings]
    if len(positionals) > 1:
        raise _NotPlain
    given: dict[str, object] = {}
    seen: set[int] = set()
    i = 0
    if positionals:
        pos = positionals[0]
        if words and not words[0].startswith("-"):
            given[pos.dest] = _value(pos, words[0])
            i = 1
        elif pos.nargs is None:  # a required word missing, or after the flags: argparse says which
            raise _NotPlain
        else:  # nargs "?": its default, converted and checked as argparse does
            given[pos.dest] = _value(pos, pos.default) if isinstance(pos.default, str) else pos.default
        seen.add(id(pos))
    while i < len(words):
        word = words[i]
        flag = flags.get(word)
        if flag is None or any(top.startswith(word) for top in _TOP):
            raise _NotPlain
        seen.add(id(flag))
        if flag.kind in ("store", "append"):
            if i + 1 >= len(words) or words[i + 1].startswith("-"):
                raise _NotPlain
            value = _value(flag, words[i + 1])
            i += 2
        else:
            value = flag.const
            i += 1
        if flag.kind == "append":
            items = given[flag.dest] if flag.dest in given else _current(command, flag.dest)
            items = [] if items is None else items[:] if type(items) is list else _copy(items)  # (argparse's)
            items.append(value)
            value = items
        given[flag.dest] = value
    # the namespace as argparse fills it: every flag's default (the first flag of a name), the command's other
    # defaults, the values given; a default that is text converted when its flag was not given
    ns: dict[str, object] = {"command": name}
    sub: dict[str, object] = {}
    for flag in command.flags:
        if flag.dest not in sub:
            sub[flag.dest] = flag.default
    for key, value in command.defaults.items():
        sub.setdefault(key, value)
    sub.update(given)
    for flag in command.flags:
        if id(flag) not in seen and isinstance(flag.default, str) and sub.get(flag.dest) is flag.default:
            sub[flag.dest] = _value(flag, flag.default, check=False)
    ns.update(sub)
    return Namespace(**ns)


def _current(command: _Command, dest: str):
    for flag in command.flags:
        if flag.dest == dest:
            return flag.default
    return command.defaults.get(dest)


def _copy(items):
    import copy

    return copy.copy(items)
