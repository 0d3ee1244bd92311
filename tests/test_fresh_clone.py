"""On a clone without the shared data folder the data-backed tests skip with their reason
instead of failing: a copy of tests/ and benchmarks/ with no `../shared` beside it runs the
tests that drive the shared-suite benchmark scripts and must report skips, not failures."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import test_benchmarks_run as tbr

REPO = Path(__file__).resolve().parents[1]

# tests that run benchmark scripts reading ../shared/data (the scripts find it beside their own
# folder, so a test must hand them the folder from `shared_dir` or skip): every shared case of
# test_benchmarks_run, and a test that runs a trust script on the suites in-process
SELECTION = [
    *(f"tests/test_benchmarks_run.py::test_benchmark_script_runs[{name}]"
      for name in sorted(tbr.SHARED_CASES)),
    "tests/test_trust_shapes.py::test_on_gemstones_the_default_covers_thin_ladders_and_records_its_terms",
]  # fmt: skip


def _fresh_copy(root: Path) -> Path:
    repo = root / "repo"  # root/shared does not exist: ../shared is absent, as on a fresh clone
    for folder in ("tests", "benchmarks"):
        shutil.copytree(REPO / folder, repo / folder,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))  # fmt: skip
    shutil.copy(REPO / "pyproject.toml", repo / "pyproject.toml")
    return repo


def test_unconditional_benchmark_cases_read_no_shared_data():
    for script in tbr.CASES:  # the unconditional cases read no shared data by default
        text = (REPO / "benchmarks" / f"{script}.py").read_text()
        reads_shared = re.search(r"""["']shared["'/]|/shared/""", text) is not None
        handles_absence = ".exists()" in text
        assert not reads_shared or handles_absence, f"{script} reads ../shared unconditionally"


def test_shared_data_tests_skip_without_the_shared_folder(tmp_path):
    repo = _fresh_copy(tmp_path)
    env = {k: v for k, v in os.environ.items() if k != "LMFORECAST_SHARED"}
    env["PYTHONPATH"] = str(REPO / "src")
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "-n", "0", "-q", "-p", "no:cacheprovider",
         "-p", "no:randomly", *SELECTION],
        cwd=repo, env=env, capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    tail = r.stdout[-3000:]
    assert r.returncode == 0, tail
    assert f"{len(SELECTION)} skipped" in tail and "failed" not in tail, tail
    assert "shared data folder" in tail, tail
