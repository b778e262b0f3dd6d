"""docs/api.md's examples run: every ```python block, in order, in one namespace, in an empty folder."""

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "api.md"
BLOCKS = re.findall(r"^```python\n(.*?)^```", DOC.read_text(encoding="utf-8"), re.S | re.M)
HAS_PANDAS = importlib.util.find_spec("pandas") is not None


def test_the_page_has_examples():
    assert len(BLOCKS) >= 5


def test_api_examples_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "api_docs"}
    ran = 0
    for i, block in enumerate(BLOCKS):
        if "import pandas" in block and not HAS_PANDAS:
            continue
        exec(compile(block, f"{DOC}:block{i + 1}", "exec"), namespace)
        ran += 1
    assert ran >= len(BLOCKS) - 1


@pytest.mark.slow
@pytest.mark.skipif(not HAS_PANDAS, reason="pandas is not installed")
def test_import_rankgate_does_not_import_pandas_until_a_frame_is_asked_for():
    code = ("import sys, rankgate\n"
            "s = rankgate.evaluate({'q': {'d': 1}}, {'q': {'d': 1.0}}, 'RR@10')\n"
            "assert 'pandas' not in sys.modules\n"
            "rankgate.to_frame(s)\n"
            "assert 'pandas' in sys.modules\n")
    subprocess.run([sys.executable, "-c", code], check=True)
