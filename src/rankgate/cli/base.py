"""What every command shares: exit codes, the one-line parser, the usage helper, output."""

from __future__ import annotations

import argparse
import sys

EXIT_OK, EXIT_INVALID, EXIT_REJECTED = 0, 2, 3


class UsageError(Exception):
    """Wrong words on the command line (exit 2)."""


class Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2, as for any bad input
        raise UsageError(f"{self.prog}: {message}")


def usage(parser: argparse.ArgumentParser) -> int:
    """A command group named without its subcommand: its help, exit 2."""
    parser.print_help()
    return EXIT_INVALID


def policy_overrides(args) -> dict:
    """The policy settings the command line gives, as core.policy.resolve takes them (`-m` is `measure`)."""
    from rankgate.core.policy import OVERRIDES

    overrides = {key: getattr(args, key, None) for key in OVERRIDES if key != "measures"}
    overrides["measures"] = getattr(args, "measure", None)
    return overrides


def emit(text: str) -> None:
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
