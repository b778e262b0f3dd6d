"""The command path starts light: `rankgate --help` imports no command module (so no numpy), a
command imports only its own module, and the app's textual only for `review`."""

import subprocess
import sys

import pytest

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
    assert "numpy" not in mods and "typing" not in mods  # (typing: 10M instructions)
    assert not {m for m in mods if m.startswith("rankgate.cli.")} - {"rankgate.cli.base", "rankgate.cli.parser"}


@pytest.mark.slow
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


GATE = ("import contextlib, io\nfrom rankgate.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):\n"
        "    code = main({argv!r})\nassert code == {code}, code")


def test_gate_on_small_files_loads_no_output_writer_and_no_fast_path():
    """What the gate's usual path (small files, JSON on stdout) does not need stays unloaded: the fast
    TREC reader and pyarrow's finder (files under 1 MB), the receipt and JUnit writers (no --receipt,
    no --junit), signing, charts, the store's workspace (only its path is looked up), numpy.ma."""
    mods = imported_after(GATE.format(argv=["gate", "sample_benchmarks/seed-lab"], code=3))
    lazy = {"rankgate.core.formats.trec_fast", "importlib.util", "pyarrow", "rankgate.core.receipt",
            "rankgate.core.signing", "xml.etree.ElementTree", "rankgate.core.charts", "rankgate.core.mermaid",
            "rankgate.core.svgplot", "rankgate.core.funnel", "rankgate.store.workspace", "tinydb",
            "numpy.ma",  # np.unique/np.quantile load numpy.ma: stats.quantiles and model.unique do not
            "numpy.random",  # the resamples come from stats.SplitMix64; numpy's PCG64 only re-checks older receipts
            "secrets", "hmac",  # an output's temporary name takes os.urandom (secrets: 10 ms of imports)
            "statistics",  # core/power.py keeps NormalDist's default quantiles at hand (decimal, fractions, random)
            "hashlib",  # no workspace of the seed lab: its folder's key is not hashed (OpenSSL's start-up)
            "gzip",  # no gzip input (core.infile.bounded_gzip)
            "rankgate.core.formats.trec",  # no TREC input
            "platformdirs", "shutil",  # store.paths finds the data folder itself on Linux; cli.parser.Parser
            "argparse", "gettext", "locale", "rankgate.cli.parser",  # plain words: no argparse (cli/fastargs.py)
            "tomllib", "string",  # a plain benchmark.toml is read without tomllib (core/tomlplain.py)
            "threading",  # the store's lock and the resamples' thread-locals come from _thread
            "rankgate.core.outputs", "rankgate.core.leniency"}  # (the verdict line is core.gate's; no problems)
    assert not lazy & mods


def test_score_loads_neither_numpy_ma_nor_numpy_random():
    """np.unique and np.intersect1d without assume_unique load numpy.ma (a few ms); score needs neither it
    nor numpy.random (nor does the gate: its resamples come from stats.SplitMix64)."""
    mods = imported_after(GATE.format(argv=["score", "sample_benchmarks/seed-lab"], code=0))
    assert "numpy" in mods and not {"numpy.ma", "numpy.random"} & mods


@pytest.mark.slow
def test_the_receipt_and_junit_writers_load_when_asked(tmp_path):
    out = tmp_path / "r.json"
    mods = imported_after(GATE.format(argv=["gate", "sample_benchmarks/seed-lab", "--receipt", str(out),
                                            "--junit", str(tmp_path / "j.xml")], code=3))
    assert {"rankgate.core.receipt", "xml.etree.ElementTree"} <= mods and out.is_file()


def test_the_fast_path_threshold_is_the_one_the_cli_checks_before_loading_it():
    from rankgate.cli.evaluate import FAST_MIN_BYTES
    from rankgate.core.formats.trec_fast import MIN_BYTES

    assert FAST_MIN_BYTES == MIN_BYTES


def test_docs_imports_only_its_own_command_module_and_no_numpy():
    mods = imported_after(GATE.format(argv=["docs"], code=0))
    assert "rankgate.cli.docs" in mods and "numpy" not in mods
    assert not {m for m in mods if m.startswith("rankgate.cli.")} - {"rankgate.cli.docs", "rankgate.cli.base",
                                                                    "rankgate.cli.fastargs", "rankgate.cli.parser"}


def test_gate_on_the_seed_lab_loads_only_what_it_uses():
    """`rankgate gate` on a benchmark folder with no ACL, no queries file and small JSON files builds only the
    gate's flags and leaves unloaded what that folder does not need: the ACL and queries/corpus readers, the
    other commands' modules, and the Unicode escape patterns (its text is ASCII)."""
    script = (GATE.format(argv=["gate", "sample_benchmarks/seed-lab"], code=3) + "\n"
              "from rankgate.core import text\n"
              "from rankgate.core.formats import textio, trec, irds\n"
              "print('unicode patterns compiled:', text._unicode_unsafe.cache_info().currsize,\n"
              "      [n for n, p in [('trec', trec.SCORE), ('space', textio._ODD_SPACE), ('fields', textio._FIELDS),\n"
              "                      ('rel', irds._REL)] if 'match' in vars(p)])")
    out = subprocess.run([sys.executable, "-c", script + "\nimport sys\nprint(' '.join(sorted(sys.modules)))"],
                         capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    mods = set(lines[-1].split())
    assert {"rankgate.core.gate", "rankgate.core.policy", "rankgate.core.queue", "rankgate.core.stats"} <= mods
    assert not {"numpy.random", "rankgate.core.acl", "rankgate.core.formats.corpus", "rankgate.core.judge", "rankgate.cli.tables",
                "rankgate.cli.funnel", "rankgate.core.trec_eval", "difflib", "csv", "pandas"} & mods
    assert lines[-2] == "unicode patterns compiled: 0 []"  # (core.text.LazyPattern: TREC's not compiled for JSON)


def test_a_command_builds_only_its_own_flags():
    """`rankgate gate` builds the gate's parser, not evaluate's four other commands' (a hundred flags); the
    command's own help is unchanged."""
    from rankgate.cli import _parser_for

    sub = next(a for a in _parser_for(["gate", "x"])._actions if a.dest == "command")
    assert set(sub.choices) == {"gate"}
    full = next(a for a in _parser_for(["nonsense"])._actions if a.dest == "command")
    assert full.choices["gate"].format_help() == sub.choices["gate"].format_help()
    assert {"validate", "score", "compare", "receipt", "labels"} <= set(full.choices)


def _threads_after_validate(env_extra: dict) -> list[str]:
    """Run `rankgate validate` on the seed lab as its own process would (main() reading sys.argv), then print the
    process's thread count and what its environment says about OpenBLAS (what a judge command would inherit)."""
    import os

    script = ("import os, sys\nsys.argv = ['rankgate', 'validate', 'sample_benchmarks/seed-lab']\n"
              "from rankgate.cli import main\nimport contextlib, io\n"
              "with contextlib.redirect_stdout(io.StringIO()):\n    assert main() == 0\n"
              "print(len(os.listdir('/proc/self/task')), repr(os.environ.get('OPENBLAS_NUM_THREADS')))")
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS",
                                                            "OMP_NUM_THREADS")}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT,
                         env=env | env_extra)
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


@pytest.mark.slow
def test_the_rankgate_process_loads_openblas_with_one_thread_and_leaves_the_environment_as_it_was():
    import os

    import pytest

    if not os.path.isdir("/proc/self/task") or (os.cpu_count() or 1) < 2:
        pytest.skip("needs Linux's /proc and two cores (OpenBLAS starts one thread per core)")
    assert _threads_after_validate({}) == ["1", "None"]  # no OpenBLAS worker; a child process sees no setting
    assert _threads_after_validate({"OPENBLAS_NUM_THREADS": "2"}) == ["2", "'2'"]  # the user's own setting wins
    assert _threads_after_validate({"OPENBLAS_NUM_THREADS": ""}) == ["1", "''"]  # set but empty: kept as it was
    assert _threads_after_validate({"OMP_NUM_THREADS": "2"})[0] == "2"


def test_main_called_with_arguments_leaves_openblas_alone():
    """rankgate.cli.main(argv) in someone else's process (the pytest plugin, a hook) changes no setting."""
    import os

    import pytest

    if not os.path.isdir("/proc/self/task"):
        pytest.skip("needs Linux's /proc")
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS",
                                                            "OMP_NUM_THREADS")}
    script = ("import sys\nfrom rankgate.cli import main\nimport contextlib, io\n"
              "with contextlib.redirect_stdout(io.StringIO()):\n"
              "    assert main(['validate', 'sample_benchmarks/seed-lab']) == 0\n"
              "import os\nprint(len(os.listdir('/proc/self/task')) > 1 or (os.cpu_count() or 1) < 2)")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True"]


def test_only_the_process_entry_point_freezes_what_start_up_loaded():
    """main() without arguments (the rankgate process) imports with the collector off, then freezes what it
    loaded and turns the collector back on; main(argv) in someone else's process leaves the collector alone."""
    script = ("import gc, sys, contextlib, io\nfrom rankgate.cli import main\n"
              "with contextlib.redirect_stdout(io.StringIO()):\n"
              "    assert main(['validate', 'sample_benchmarks/seed-lab']) == 0\n"
              "print(gc.isenabled(), gc.get_freeze_count())\n"
              "sys.argv = ['rankgate', 'validate', 'sample_benchmarks/seed-lab']\n"
              "with contextlib.redirect_stdout(io.StringIO()):\n    assert main() == 0\n"
              "print(gc.isenabled(), gc.get_freeze_count() > 10000)")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["True 0", "True True"]


@pytest.mark.slow
def test_the_rankgate_process_asks_numpy_for_ordinary_pages_unless_the_user_says():
    """core/pages.py: the process's entry point turns numpy's huge pages off for the commands that compute
    (their system time went to the kernel's compaction); main(argv) in someone else's process leaves numpy's
    setting alone, and NUMPY_MADVISE_HUGEPAGE, when set, decides."""
    import os

    script = ("import sys, contextlib, io\nfrom rankgate.cli import main\n"
              "from numpy._core.multiarray import _get_madvise_hugepage as hp\n"
              "with contextlib.redirect_stdout(io.StringIO()):\n"
              "    assert main(['validate', 'sample_benchmarks/seed-lab']) == 0\n"
              "print(hp())\n"
              "sys.argv = ['rankgate', 'validate', 'sample_benchmarks/seed-lab']\n"
              "with contextlib.redirect_stdout(io.StringIO()):\n    assert main() == 0\n"
              "print(hp())")
    env = {k: v for k, v in os.environ.items() if k != "NUMPY_MADVISE_HUGEPAGE"}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "False"]
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT,
                         env=env | {"NUMPY_MADVISE_HUGEPAGE": "1"})
    assert out.stdout.split() == ["True", "True"], out.stderr


def module_level_imports(path) -> set[str]:
    """The top-level packages a module imports when it is imported (not inside a function, nor under
    `if TYPE_CHECKING:`)."""
    import ast

    found = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Import):
            found |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module.split(".")[0])
    return found


@pytest.mark.slow
def test_no_module_imports_pyarrow_or_textual_or_numpy_where_it_may_not_be_used():
    """pyarrow (the fast readers) and textual (the app) are imported inside what uses them, never when a
    core or CLI module is imported; the gate and its stability report import numpy where they compute,
    not at the top (issue 36)."""
    src = ROOT / "src" / "rankgate"
    for path in [*(src / "core").rglob("*.py"), *(src / "cli").rglob("*.py")]:
        assert not {"pyarrow", "textual", "pandas"} & module_level_imports(path), path
    for name in ("gate.py", "bounds.py"):
        assert "numpy" not in module_level_imports(src / "core" / name), name


@pytest.mark.parametrize("argv", [["init", "--help"], ["receipt"], ["gate", "--help"], ["compare", "--help"],
                                  ["score", "--help"], ["validate", "--help"]])
def test_help_and_usage_load_no_numpy(argv):
    """A command's help or usage lines build its flags only: no reader, engine or numpy behind them."""
    code = ("import contextlib, io\nfrom rankgate.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):\n"
            f"    try:\n        main({argv!r})\n    except SystemExit:\n        pass")
    mods = imported_after(code)
    assert "numpy" not in mods and "pyarrow" not in mods


def test_the_format_choices_are_the_readers_the_formats_package_has():
    from rankgate.cli.evaluate import QRELS_FORMATS, RUN_FORMATS
    from rankgate.core import formats

    assert (QRELS_FORMATS, RUN_FORMATS) == (formats.QRELS_FORMATS, formats.RUN_FORMATS)


HEAVY = ("numpy", "pyarrow", "textual")


def heavy_after_each(commands: list[list[str]], env: dict | None = None) -> list[tuple[int, list[str]]]:
    """Run each command as the `rankgate` process runs it (main() reading sys.argv, in turn, in one fresh
    interpreter) and give its exit code and which of numpy, pyarrow and textual were loaded after it."""
    import json
    import os

    script = ("import contextlib, io, json, sys\nfrom rankgate.cli import main\n"
              f"for argv in {commands!r}:\n"
              "    sys.argv = ['rankgate', *argv]\n"
              "    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):\n"
              "        try:\n            code = main()\n        except SystemExit as e:\n            code = e.code\n"
              f"    print(json.dumps([code, sorted(m for m in {HEAVY!r} if m in sys.modules)]))")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT,
                         env={**os.environ, **(env or {})})
    assert out.returncode == 0, out.stderr
    return [tuple(json.loads(line)) for line in out.stdout.splitlines()]


def test_the_process_loads_no_numpy_for_help_usage_errors_and_labels_that_do_not_compute(tmp_path):
    """Issue 36: nothing imports numpy, pyarrow or textual where it is not used. The process's own entry point
    loads numpy (with one BLAS thread) for a computing command only once its words were checked: `--help`, a
    command's help, a wrong flag and the labels commands that read or write the store load none of them."""
    db = str(tmp_path / "w.json")
    env = {"RANKGATE_HOME": str(tmp_path / "home")}
    words = [["--help"], ["--version"], ["gate", "--help"], ["gate", "sample_benchmarks/seed-lab", "--nonsense"],
             ["score", "--bogus"], ["compare", "--help"], ["validate", "--help"], ["labels"],
             ["labels", "list", "--help"], ["review", "--help"],
             ["labels", "set", "--db", db, "--reviewer", "ann", "--add-query", "q1", "d1", "2", "--reason", "x"],
             ["labels", "list", "--db", db], ["labels", "history", "--db", db], ["labels", "queries", "--db", db],
             ["labels", "freeze", "v1", "--db", db], ["labels", "versions", "--db", db],
             ["labels", "status", "--db", db]]
    found = heavy_after_each(words, env)
    assert [code for code, _ in found] == [0, 0, 0, 2, 2, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0]
    assert [heavy for _, heavy in found] == [[]] * len(words)


@pytest.mark.slow
def test_validate_and_gate_load_numpy_but_neither_pyarrow_nor_textual():
    """validate and gate compute with numpy; on small files neither reads with pyarrow nor opens the app."""
    assert heavy_after_each([["validate", "sample_benchmarks/seed-lab"]]) == [(0, ["numpy"])]
    assert heavy_after_each([["gate", "sample_benchmarks/seed-lab"]]) == [(3, ["numpy"])]


def _every_help(columns: str) -> dict[str, str]:
    """Every command's and subcommand's help text and prog, with the terminal COLUMNS wide."""
    import argparse
    import os
    from unittest import mock

    from rankgate.cli import build_parser

    texts = {}

    def walk(parser, name):
        texts[name] = parser.format_help() + parser.format_usage()
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for word, sub in action.choices.items():
                    texts[f"{name} {word} (prog)"] = sub.prog
                    walk(sub, f"{name} {word}")

    with mock.patch.dict(os.environ, {"COLUMNS": columns}):
        walk(build_parser(), "rankgate")
    return texts


@pytest.mark.parametrize("columns", ["12", "80", "200"])
def test_flags_built_without_asking_the_terminal_give_the_same_help(columns):
    """cli.parser.Parser gives argparse's formatters a width while flags and command groups are built (argparse
    asks the terminal for each flag, and imports shutil); every help text and subcommand prog is what argparse's
    own terminal width gives, at any width."""
    from unittest import mock

    import argparse

    from rankgate.cli.parser import Parser

    ours = _every_help(columns)
    with mock.patch.object(Parser, "_get_formatter", argparse.ArgumentParser._get_formatter):
        plain = _every_help(columns)
    assert len(ours) > 30 and ours == plain


def test_a_command_is_built_without_shutil():
    mods = imported_after("import contextlib, io\nfrom rankgate.cli import main\n"
                          "with contextlib.redirect_stdout(io.StringIO()):\n"
                          "    main(['score', 'sample_benchmarks/seed-lab', '--format', 'nonsense'])")
    assert "rankgate.cli.evaluate" in mods and "shutil" not in mods


def test_a_refused_input_after_arrow_started_ends_with_its_line_its_output_and_its_at_exit_work(tmp_path):
    """With the fast reader's Arrow threads possibly still at work, a refused input ends the process without the
    interpreter's teardown (cli._end_now: it aborted there after the error line, exit 134, 1 run in 40 under
    load): still exit 2, the error line, what was printed before it, and the at-exit work (temporary files)."""
    runs = "".join(f"{q} Q0 d{d} {d + 1} {100 - d} t\n" for q in range(400) for d in range(100))
    (tmp_path / "a.run").write_text(runs)  # 1.3 MB: parsed ahead by the fast reader while the qrels are read
    (tmp_path / "q.txt").write_text("1 0 d1 1\n1 0 d1 2\n")  # a pair judged twice: refused
    code = ("import atexit, sys; from rankgate.cli import main; "
            "print('before', flush=False); atexit.register(lambda: print('at exit ran', file=sys.stderr)); "
            "sys.argv = ['rankgate', 'score', '--qrels', sys.argv[1], '--runs', sys.argv[2]]; sys.exit(main())")
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path / "q.txt"), str(tmp_path / "a.run")],
                          capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 2 and done.stdout == "before\n", (done.returncode, done.stdout, done.stderr)
    assert "duplicate judgment" in done.stderr and done.stderr.rstrip().endswith("at exit ran")
    assert "Traceback" not in done.stderr
