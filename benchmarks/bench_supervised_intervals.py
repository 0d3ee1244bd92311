"""Benchmark: the DEFAULT supervised fit with intervals on 250 runs (issue 21 target: 10 s on
2 cores; issue 23: 3 s).

The default (`SupervisedScalingLaw()`, form auto) fits the chosen form, a cluster bootstrap of
model sizes (each resample fitted from scratch by variable projection), the stack's inner
backtest (the form and the over-training law refitted below each inner cut, the 1-D compute law
beside) and the over-training law on all runs. Timed in the same run against (1) a point fit of
the form alone (no intervals, no stack) and (2) the plain baseline for the same work: a
full-grid multi-start fit (`method="grid"`, the published procedure) per bootstrap resample and
per inner-cut refit, timed on a few and extrapolated. Prints the times and the ratios.

    python benchmarks/bench_supervised_intervals.py [--runs 250] [--jobs -1] [--naive-samples 2]
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np
import pandas as pd

from lmforecast.fitting import fit_law, huber
from lmforecast.laws import get_law
from lmforecast.supervised import PRESETS, SupervisedScalingLaw
from lmforecast.supervised import stack as st
from lmforecast.supervised.model import DEFAULT_BOOTSTRAP


def main(argv=None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=250)
    ap.add_argument("--jobs", type=int, default=-1, help="as the CLI's --jobs (default -1)")
    ap.add_argument("--naive-samples", type=int, default=2)
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    rng = np.random.default_rng(0)
    n = args.runs
    N = 10 ** rng.uniform(7.5, 10.5, n)
    D = N * 10 ** rng.uniform(0.3, 3.0, n)
    truth = PRESETS["busbridge2025"]
    L = get_law("chinchilla-gamma").predict(truth["params"], N=N, D=D)
    runs = pd.DataFrame({"N": N, "D": D, "loss": L * np.exp(rng.normal(0, 0.005, n))})

    t0 = time.perf_counter()
    point = SupervisedScalingLaw(intervals=False, stack=False).fit(runs)
    t_point = time.perf_counter() - t0

    t0 = time.perf_counter()
    est = SupervisedScalingLaw(n_jobs=args.jobs).fit(runs)
    t_ours = time.perf_counter() - t0
    n_inner = 2 * len(st.inner_cuts(est.data_)) + 1  # form + over-training law per cut; OT on all

    law = get_law(point.form_)
    X = {"N": runs["N"].to_numpy(), "D": runs["D"].to_numpy()}
    y = runs["loss"].to_numpy()
    t0 = time.perf_counter()
    for _ in range(args.naive_samples):
        idx = rng.integers(0, n, n)
        fit_law(law, {k: v[idx] for k, v in X.items()}, y[idx], loss=huber(1e-3), method="grid")
    per_fit = (time.perf_counter() - t0) / args.naive_samples
    n_fits = DEFAULT_BOOTSTRAP + n_inner
    workers = (os.cpu_count() or 1) if args.jobs < 0 else args.jobs  # the plain loop, parallel
    t_naive = t_point + per_fit * n_fits / workers

    print(f"{n} runs (form {est.form_}), {args.jobs} jobs")
    print(f"point fit of the form (no intervals, no stack)  : {t_point:8.2f} s")
    print(f"plain full-grid fit per resample and inner fit  : {t_naive:8.2f} s (extrapolated from "
          f"{args.naive_samples} fits x ({DEFAULT_BOOTSTRAP} resamples + {n_inner} inner fits) "
          f"/ {workers} workers)")  # fmt: skip
    print(f"lmforecast default fit with intervals and stack : {t_ours:8.2f} s")
    print(f"ratio ours / point fit: {t_ours / t_point:.2f}x; plain / ours: {t_naive / t_ours:.1f}x")


if __name__ == "__main__":
    main()
