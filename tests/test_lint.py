"""ruff (lint and format) is part of the contract: the tree stays clean."""

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(shutil.which("ruff") is None, reason="ruff not installed (pip install .[test])")
def test_ruff_lint_and_format_clean():
    paths = [p for p in ("src", "tests", "benchmarks") if (ROOT / p).exists()]
    lint = subprocess.run(["ruff", "check", *paths], cwd=ROOT, capture_output=True, text=True)
    assert lint.returncode == 0, lint.stdout[-3000:]
    fmt = subprocess.run(
        ["ruff", "format", "--check", *paths], cwd=ROOT, capture_output=True, text=True
    )
    assert fmt.returncode == 0, fmt.stdout[-3000:]
