"""Peak memory of `lmforecast distill choose-teacher` on a large teachers table (issue 27).

Runs the real command in a child process on N synthetic teachers (distinct N_T, D_T) and prints
its peak resident memory (ru_maxrss) and wall time, beside the same command on 1,000 teachers
(the baseline: the fixed cost of Python, numpy, pandas and the model) in the same run. The
bound stated in docs/reliability.md is 2 GB at 1,000,000 teachers.

    python benchmarks/bench_choose_teacher_memory.py [N]     # default 1,000,000
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

SRC = Path(__file__).resolve().parents[1] / "src"


def run(n: int, folder: Path) -> tuple[float, float, int]:
    rng = np.random.default_rng(0)
    t = pd.DataFrame(
        {"N_T": np.round(10 ** rng.uniform(8, 11, n)), "D_T": 10 ** rng.uniform(10, 13, n)}
    )
    t = t.drop_duplicates(["N_T", "D_T"])
    path = folder / f"teachers_{n}.csv"
    t.to_csv(path, index=False)
    cmd = [sys.executable, "-m", "lmforecast", "distill", "choose-teacher"]
    cmd += ["--student-params", "1e9", "--student-tokens", "2e10", "--teachers", str(path)]
    env = dict(os.environ, PYTHONPATH=str(SRC))
    code = (
        "import resource, subprocess, sys\n"
        "p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, p.returncode)\n"
        "sys.stderr.write(p.stderr.decode()[-300:])\n"
    )
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-c", code, *cmd], env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    kb, rc = p.stdout.split()
    if rc != "0":
        print(p.stderr, file=sys.stderr)
    return int(kb) / 1024**2, wall, int(rc)


def main() -> None:
    n = int(float(sys.argv[1])) if len(sys.argv) > 1 else 1_000_000
    resource.setrlimit(resource.RLIMIT_AS, (8 * 1024**3, 8 * 1024**3))  # never take the machine
    with tempfile.TemporaryDirectory() as d:
        base_gb, base_s, _ = run(1_000, Path(d))
        gb, s, rc = run(n, Path(d))
    print(f"choose-teacher, 1,000 teachers:   peak {base_gb:.2f} GB, {base_s:.1f} s (baseline)")
    print(f"choose-teacher, {n:,} teachers: peak {gb:.2f} GB, {s:.1f} s, exit {rc}")
    print(
        f"peak-memory ratio: {gb / base_gb:.1f}x the baseline; bound 2 GB: "
        f"{'met' if rc == 0 and gb < 2.0 else 'NOT met'}"
    )


if __name__ == "__main__":
    main()
