"""The command line's parser: argparse's, with one-line errors (exit 2), a hint for a word left over, and
no terminal width asked while flags are built. Loaded only when argparse reads the words (cli/fastargs.py
reads the plain ones without it)."""

from __future__ import annotations

import argparse
import sys

from rankgate.cli.base import BUILD_WIDTH, UsageError


class Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2, as for any bad input
        raise UsageError(f"{self.prog}: {message}")

    # argparse makes a help formatter for each flag it adds (to check the flag's metavar) and for each command
    # group (its subcommands' prog): each asks the terminal its width (importing shutil the first time), which
    # neither uses. While one is built, the formatter gets a width; help and errors still ask the terminal.
    _building = False

    def add_argument(self, *args, **kwargs):
        self._building = True
        try:
            return super().add_argument(*args, **kwargs)
        finally:
            self._building = False

    def add_subparsers(self, **kwargs):
        self._building = True
        try:
            return super().add_subparsers(**kwargs)
        finally:
            self._building = False

    def _get_formatter(self):
        if self._building:
            return self.formatter_class(prog=self.prog, width=BUILD_WIDTH)
        return super()._get_formatter()

    def parse_args(self, args=None, namespace=None):
        """As argparse's, and a word left over gets the command's hint (`set_defaults(extra_words_hint=...)`):
        `rankgate score QRELS RUN` says how runs are given."""
        parsed, extras = self.parse_known_args(args, namespace)
        self._one_value_each(parsed, list(sys.argv[1:] if args is None else args), extras)
        if extras:  # named by the (sub)command given: `rankgate gate: unrecognized arguments: -q (...)`
            command = self._command(parsed)
            raise UsageError(f"{command.prog}: unrecognized arguments: {' '.join(extras)}"
                             + self._hint(parsed, extras))
        return parsed

    def _one_value_each(self, parsed, words: list[str], extras: list[str]) -> None:
        """`--runs a b`: a repeatable flag takes one value; a word after its value, left over or taken as the
        benchmark folder / qrels file although it is neither (a run file, a measure), is said as such, naming
        the flag and how to repeat it (rather than a TOML error about the word)."""
        import os

        command = self._command(parsed)
        positional = {getattr(parsed, d, None) for d in ("benchmark", "path", "bench")} - {None}
        for i, word in enumerate(words):
            flag, _, inline = word.partition("=")
            action = command._option_string_actions.get(flag) if word.startswith("-") else None
            if not isinstance(action, argparse._AppendAction) or action.nargs is not None:
                continue
            at = i + 1 if inline else i + 2
            if at >= len(words) or words[at].startswith("-"):
                continue
            value, after = (inline if inline else words[i + 1]), words[at]
            stray = after in extras or (after in positional and os.path.isfile(after)
                                        and not after.lower().endswith(".toml") and not _holds_judgments(after))
            if stray:
                raise UsageError(f"{command.prog}: {flag} takes one value ({value}); {after} came after it: give "
                                 f"each its own {flag}, as in `{flag} {value} {flag} {after}`")

    def _command(self, parsed) -> argparse.ArgumentParser:
        """The (sub)command that was given."""
        parser = self
        while True:
            sub = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
            name = getattr(parsed, sub.dest, None) if sub else None
            if name not in (sub.choices if sub else {}):
                return parser
            parser = sub.choices[name]

    def _hint(self, parsed, extras: list[str]) -> str:
        """`did you mean --receipt?` for a misspelt option (difflib against the command's own options), or for a
        short option the command lacks, its long options of that letter (`gate -q`: --quiet); the command's
        hint about extra words only when one is an existing file (a misspelt option's value is not)."""
        import difflib
        import os

        parser = self._command(parsed)
        options = [o for o in parser._option_string_actions if o.startswith("--")]
        guesses = []
        for e in extras:
            if e.startswith("--"):
                close = difflib.get_close_matches(e.split("=", 1)[0], options, n=1, cutoff=0.75)
                guesses += [f"did you mean {close[0]}?"] if close else []
            elif len(e) == 2 and e[0] == "-" and e[1].isalpha():
                same = [o for o in options if o[2:3] == e[1] and o != "--help"]
                flags = [o for o in same if parser._option_string_actions[o].nargs == 0]  # (-q alone: a flag)
                same = flags or same
                if 0 < len(same) <= 3:
                    guesses.append(f"{parser.prog} has no {e}; did you mean {' or '.join(same)}?")
        if guesses:
            return f" ({'; '.join(dict.fromkeys(guesses))})"
        hint = getattr(parsed, "extra_words_hint", None)
        files = [e for i, e in enumerate(extras) if not e.startswith("-") and os.path.isfile(e)
                 and not (i and extras[i - 1].startswith("-") and "=" not in extras[i - 1])]
        return f" ({hint})" if hint and files else ""


def _holds_judgments(path: str) -> bool:
    from rankgate.core.formats.sniff import holds_judgments

    try:
        return holds_judgments(path)
    except Exception:  # unreadable: the command says so itself
        return True
