"""The main job's wall time: `lmforecast report` whole process, sections in parallel vs serial.

Baseline: the same report built one section after another (``--jobs 1``, the previous behaviour);
ours: the default (``--jobs 2``, sections in two worker processes). Both at the full depth, in one
run, on the same machine; prints both wall times and the ratio. Run from anywhere:
``python benchmarks/bench_report.py``.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path


def wall(*extra: str) -> float:
    with tempfile.TemporaryDirectory() as d:
        t0 = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "lmforecast", "report", "--out", str(Path(d) / "r"), "--quiet",
             *extra],
            check=True,
        )  # fmt: skip
        return time.perf_counter() - t0


if __name__ == "__main__":
    serial = wall("--jobs", "1")
    parallel = wall()
    print(f"report, sections one after another (--jobs 1): {serial:7.1f} s")
    print(f"report, default (--jobs 2):                    {parallel:7.1f} s")
    print(f"speed-up: {serial / parallel:.2f}x")
