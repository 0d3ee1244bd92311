"""Benchmark: the DEFAULT `supervised fit` with intervals on 250 runs (issue 21 target: <= 10 s
on 2 cores), against the previous default (60 multi-start resamples + a 4-cutoff rolling-origin
self-calibration) timed IN THE SAME RUN from a checkout of the previous code.

The previous code is imported in a subprocess from `--baseline-src` (default: ../main/src, the
integration checkout; point it at a checkout of 6829fdd to time exactly the pre-issue-21
default). Both fit the same 250 simulated runs (chinchilla-gamma truth, 0.5% noise) on one
core (n_jobs=1), warm imports excluded. Prints both times and the ratio.

    python benchmarks/bench_trust_default.py [--runs 250] [--baseline-src PATH]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

CODE = r"""
import time, warnings, numpy as np
warnings.simplefilter("ignore")
from lmforecast.laws import get_law
from lmforecast.supervised import PRESETS, SupervisedScalingLaw
rng = np.random.default_rng(0)
n = {n}
N = 10 ** rng.uniform(7.5, 10.5, n); D = N * 10 ** rng.uniform(0.3, 3.0, n)
L = get_law("chinchilla-gamma").predict(PRESETS["busbridge2025"]["params"], N=N, D=D)
L = L * np.exp(rng.normal(0, 0.005, n))
t = time.perf_counter()
m = SupervisedScalingLaw(n_jobs=1).fit(N=N, D=D, loss=L)
lo, hi = m.predict_interval(7e10, 1.4e12)
print(time.perf_counter() - t)
"""


def run(src: Path, n: int) -> float:
    env = dict(os.environ, PYTHONPATH=str(src), OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    out = subprocess.run(
        [sys.executable, "-c", CODE.format(n=n)],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    root = Path(__file__).resolve().parents[1]
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=250)
    ap.add_argument("--baseline-src", type=Path, default=root.parent / "main" / "src")
    args = ap.parse_args()
    new = run(root / "src", args.runs)
    print(f"default fit + interval, {args.runs} runs, this checkout: {new:.2f} s")
    if not args.baseline_src.exists():
        print(f"no baseline checkout at {args.baseline_src}; ratio not measured")
        return
    old = run(args.baseline_src, args.runs)
    print(f"previous default ({args.baseline_src}): {old:.2f} s")
    print(f"ratio previous / this: {old / new:.2f}x")


if __name__ == "__main__":
    main()
