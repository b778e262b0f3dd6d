"""Packaging: what a package index shows and what `python -m build` prints (issue #37, item 5)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def test_license_is_an_spdx_expression_with_its_file():
    assert PROJECT["license"] == "MIT"  # the table form ({text = ...}) is deprecated by setuptools
    assert PROJECT["license-files"] == ["LICENSE"]
    assert (ROOT / "LICENSE").read_text(encoding="utf-8").startswith("MIT License")


def test_the_package_page_has_links_and_classifiers():
    assert {"Homepage", "Documentation", "Issues", "Changelog"} <= set(PROJECT["urls"])
    assert (ROOT / "CHANGELOG.md").is_file()
    classifiers = set(PROJECT["classifiers"])
    for needed in ("Programming Language :: Python :: 3.11", "Environment :: Console",
                   "Operating System :: OS Independent", "Topic :: Software Development :: Testing"):
        assert needed in classifiers
    # pip refuses an unknown classifier only at upload; keep them in the trove's shape at least
    assert all(" :: " in c for c in classifiers)


def test_the_version_has_one_source_and_the_core_names_it():
    from rankgate import __version__
    from rankgate.core.version import __version__ as core_version

    assert __version__ == core_version
    assert PROJECT["dynamic"] == ["version"] and "version" not in PROJECT


def test_no_placeholders_left_in_the_ci_docs():
    for path in (ROOT / "docs" / "ci.md", ROOT / "action.yml", ROOT / "README.md"):
        assert "OWNER" not in path.read_text(encoding="utf-8"), path


@pytest.mark.slow
def test_building_the_wheel_prints_no_warning(built_wheel):
    """The run's one `python -m build --wheel` (tests/wheel.py; the docs and samples tests use its wheel)."""
    out = built_wheel.build_output.lower()
    assert "successfully built rankgate-" in out, out[-3000:]
    assert "warning" not in out and "deprecat" not in out, out[-3000:]
    assert any(name.startswith("rankgate/") for name in built_wheel.names)
