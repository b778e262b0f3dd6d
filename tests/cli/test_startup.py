"""The command path starts light: `rankgate --help` imports no command module (so no numpy), a
command imports only its own module, and the app's textual only for `review`."""

import subprocess
import sys

from tests.conftest import ROOT


def imported_after(code: str) -> set[str]:
    """The modules in sys.modules after running `code` in a fresh interpreter."""
    script = f"import sys\n{code}\nprint(' '.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    return set(out.stdout.splitlines()[-1].split())


def test_the_command_table_is_what_the_modules_register():
    """COMMANDS names every command each module registers, with the help line it gives there."""
    from rankgate.cli import COMMANDS, MODULES, build_parser

    for module in MODULES:
        sub = next(a for a in build_parser((module,))._actions if a.dest == "command")
        helps = {c.dest: c.help for c in sub._choices_actions}
        assert helps == {name: line for name, (mod, line) in COMMANDS.items() if mod == module}, module


def test_help_imports_no_command_module_and_no_numpy():
    mods = imported_after("import contextlib, io\nfrom rankgate.cli import main\n"
                          "with contextlib.redirect_stdout(io.StringIO()):\n"
                          "    try:\n        main(['--help'])\n    except SystemExit:\n        pass")
    assert "numpy" not in mods
    assert not {m for m in mods if m.startswith("rankgate.cli.") and m != "rankgate.cli.base"}


def test_gate_imports_only_its_own_command_module_and_no_textual():
    mods = imported_after("import contextlib, io\nfrom rankgate.cli import main\n"
                          "with contextlib.redirect_stdout(io.StringIO()):\n"
                          "    code = main(['gate', 'sample_benchmarks/seed-lab'])\nassert code == 3, code")
    assert "rankgate.cli.evaluate" in mods
    assert not {"rankgate.cli.labels", "rankgate.cli.init", "rankgate.cli.review"} & mods
    assert "textual" not in mods and "pandas" not in mods


def test_every_command_still_parses_its_flags():
    from rankgate.cli import main

    assert main(["labels"]) == 2  # the group's help, as before
    assert main(["receipt"]) == 2
