import gc
import os
import sys
from pathlib import Path

import pytest

# Byte code is kept (.pyc in the git-ignored __pycache__ folders), as an installed package keeps it, for
# this process, its xdist workers and every `python -m rankgate` a test starts: with PYTHONDONTWRITEBYTECODE
# set (some shells set it) each of the suite's hundreds of child processes compiled rankgate's modules again.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_benchmarks"
CONFORMANCE = Path(os.environ.get("RANKGATE_CONFORMANCE") or ROOT.parent / "shared" / "conformance")  # (CONTRIBUTING.md)


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory, monkeypatch):
    """Nothing in the suite touches the real data folder."""
    home = tmp_path_factory.mktemp("rankgate-home")
    monkeypatch.setenv("RANKGATE_HOME", str(home))
    monkeypatch.setenv("RANKGATE_REVIEWER", "tester")
    monkeypatch.setenv("RANKGATE_RACY_S", "0")  # files written a moment ago are cached (tui/runcache.py racy)
    yield home


_COLLECT_EVERY = 8  # tests that froze a load, between two full collections of their residue


@pytest.fixture(autouse=True)
def _nothing_frozen_after():
    """Each test's app starts as a new process's would, with nothing frozen. A load of the review app freezes the
    heap out of the collector's view and the next load unfreezes it and collects once (tui/loader.py), a full
    pass over the test process's ~450k objects (0.25 CPU s) at each test's first load. Here the heap is put
    back in view after the test, and its residue collected once every few tests (the worker's memory stays
    bounded: ~450k objects, not growing, over tests/tui)."""
    yield
    loader = sys.modules.get("rankgate.tui.loader")
    if loader is not None and loader._frozen:
        gc.unfreeze()
        loader._frozen = False
        _nothing_frozen_after.unfrozen += 1
        if _nothing_frozen_after.unfrozen % _COLLECT_EVERY == 0:
            gc.collect()


_nothing_frozen_after.unfrozen = 0


def pytest_collection_modifyitems(items):
    """The slow tests first, the browsers' first of all (a stable sort: order within each kept): under
    `-n 2 --dist worksteal` the longest tests then start early, and what is left to share at the end is
    the quick ones, so no worker waits on a single long test that happened to come last."""
    def start(item) -> int:
        if item.get_closest_marker("slow") is None:
            return 2
        return 0 if item.nodeid.startswith("tests/web/") else 1
    items.sort(key=start)


@pytest.fixture(scope="session")
def built_wheel(tmp_path_factory):
    """The wheel `python -m build` makes of a copy of the sources, unpacked (tests/wheel.py): built once per
    run, shared by the xdist workers; skips where no build environment can be made."""
    from tests.wheel import build_wheel, shared_folder

    wheel, why = build_wheel(shared_folder(tmp_path_factory) / "rankgate-wheel")
    if wheel is None:
        pytest.skip(f"cannot build a wheel here: {why}")
    return wheel


@pytest.fixture
def samples() -> Path:
    return SAMPLES


@pytest.fixture
def cli(capsys):
    """Run `rankgate ...` in-process: (exit code, stdout, stderr)."""
    from rankgate.cli import main

    def run(*argv):
        code = main([str(a) for a in argv])
        cap = capsys.readouterr()
        return code, cap.out, cap.err

    return run


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


# RANKGATE_TEST_CPU=1: CPU seconds (user+sys, this process and its children) per test, beside wall
# seconds, and a summary of the top CPU users and the top waiters (wall minus CPU). Works under -n.
if os.environ.get("RANKGATE_TEST_CPU"):
    import resource
    import time

    def _cpu() -> float:
        own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(item, nextitem):
        item.user_properties.append(("cpu-start", (_cpu(), time.perf_counter())))
        yield

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(item, call):
        if call.when == "teardown":
            cpu0, wall0 = dict(item.user_properties)["cpu-start"]
            item.user_properties.append(("cpu", (_cpu() - cpu0, time.perf_counter() - wall0)))
        yield

    _cpu_seen: dict[str, tuple[float, float]] = {}

    def pytest_runtest_logreport(report):
        for key, value in report.user_properties:
            if key == "cpu":
                _cpu_seen[report.nodeid] = tuple(value)

    def pytest_terminal_summary(terminalreporter):
        rows = sorted(_cpu_seen.items(), key=lambda kv: -kv[1][0])
        write = terminalreporter.write_line
        total = sum(cpu for cpu, _ in _cpu_seen.values())
        write(f"CPU per test (RANKGATE_TEST_CPU): {len(rows)} tests, {total:.1f} CPU s, "
              f"load {os.getloadavg()[0]:.1f}")
        for nodeid, (cpu, wall) in rows[:40]:
            write(f"  {cpu:7.2f} cpu {wall:7.2f} wall  {nodeid}")
        write("Waiting (wall minus CPU):")
        for nodeid, (cpu, wall) in sorted(rows, key=lambda kv: kv[1][0] - kv[1][1])[:25]:
            write(f"  {wall - cpu:7.2f} wait {cpu:7.2f} cpu  {nodeid}")
        if os.environ["RANKGATE_TEST_CPU"] not in ("1", "yes"):
            with open(os.environ["RANKGATE_TEST_CPU"], "w", encoding="utf-8") as out:
                for nodeid, (cpu, wall) in rows:
                    out.write(f"{cpu:.3f}\t{wall:.3f}\t{nodeid}\n")
