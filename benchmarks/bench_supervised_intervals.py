"""Benchmark: the DEFAULT supervised fit with intervals (multi-start bootstrap + backtest
calibration) on 250 runs (target: < 30 s on 2 cores).

Timed in the same run against (1) the old default, a point fit with no intervals, and (2) the
plain baseline for the same intervals: a full-grid fit per bootstrap resample and per backtest
cutoff (timed on a few, extrapolated). Prints the times and the ratios.

    python benchmarks/bench_supervised_intervals.py [--runs 250] [--jobs 2] [--form FORM]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd

from lmforecast.fitting import fit_law, huber
from lmforecast.laws import get_law
from lmforecast.supervised import PRESETS, SupervisedScalingLaw
from lmforecast.supervised.model import DEFAULT_BOOTSTRAP


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=250)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--form", default="chinchilla-gamma")
    ap.add_argument("--naive-samples", type=int, default=2)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    rng = np.random.default_rng(0)
    n = args.runs
    N = 10 ** rng.uniform(7.5, 10.5, n)
    D = N * 10 ** rng.uniform(0.3, 3.0, n)
    law = get_law(args.form)
    truth = PRESETS["busbridge2025" if args.form == "chinchilla-gamma" else "hoffmann2022"]
    L = law.predict(truth["params"], N=N, D=D) * np.exp(rng.normal(0, 0.005, n))
    runs = pd.DataFrame({"N": N, "D": D, "loss": L})

    t0 = time.perf_counter()
    SupervisedScalingLaw(args.form, intervals=False).fit(runs)
    t_point = time.perf_counter() - t0

    t0 = time.perf_counter()
    est = SupervisedScalingLaw(args.form, n_jobs=args.jobs).fit(runs)
    t_ours = time.perf_counter() - t0
    n_cut = len(est.result_.meta["intervals"]["cutoffs"])

    t0 = time.perf_counter()
    X = {"N": N, "D": D}
    for _ in range(args.naive_samples):
        idx = rng.integers(0, n, n)
        fit_law(law, {k: v[idx] for k, v in X.items()}, L[idx], loss=huber(1e-3))
    per_fit = (time.perf_counter() - t0) / args.naive_samples
    t_naive = t_point + per_fit * (DEFAULT_BOOTSTRAP + n_cut) / max(args.jobs, 1)

    print(f"{n} runs ({args.form}), {args.jobs} jobs")
    print(f"old default (point fit, no intervals)          : {t_point:8.1f} s")
    print(
        f"plain full-grid fit per resample and cutoff    : {t_naive:8.1f} s (extrapolated from "
        f"{args.naive_samples} fits x {DEFAULT_BOOTSTRAP} resamples + {n_cut} cutoffs, "
        f"/ {args.jobs} jobs)"
    )
    print(f"lmforecast default fit with intervals          : {t_ours:8.1f} s")
    print(f"ratio ours / point fit: {t_ours / t_point:.2f}x; plain / ours: {t_naive / t_ours:.1f}x")


if __name__ == "__main__":
    main()
