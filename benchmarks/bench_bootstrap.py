"""Benchmark: 1,000 bootstrap resamples of a 250-run dataset (target: < 30 s on 2 cores).

Baseline: the naive bootstrap that re-runs the full grid fit (grid scoring + polish) for every
resample, timed on a few resamples and extrapolated. Prints both times and the ratio.

    python benchmarks/bench_bootstrap.py [--boot 1000] [--runs 250] [--jobs 2]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from lmforecast.fitting import fit_law, huber
from lmforecast.laws import get_law
from lmforecast.supervised import PRESETS
from lmforecast.uncertainty.bootstrap import bootstrap_fit


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--boot", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=250)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--form", default="chinchilla-gamma")
    ap.add_argument("--naive-samples", type=int, default=3)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    n = args.runs
    N = 10 ** rng.uniform(7.5, 10.5, n)
    D = N * 10 ** rng.uniform(0.3, 3.0, n)
    law = get_law(args.form)
    L = law.predict(
        PRESETS["busbridge2025"]["params"]
        if args.form == "chinchilla-gamma"
        else PRESETS["hoffmann2022"]["params"],
        N=N,
        D=D,
    )
    L = L * np.exp(rng.normal(0, 0.005, n))
    X = {"N": N, "D": D}
    res = fit_law(law, X, L, loss=huber(1e-3))

    t0 = time.perf_counter()
    bootstrap_fit(law, X, L, res, n_boot=args.boot, seed=0, n_jobs=args.jobs)
    t_ours = time.perf_counter() - t0

    t0 = time.perf_counter()
    for _ in range(args.naive_samples):
        idx = rng.integers(0, n, n)
        fit_law(law, {k: v[idx] for k, v in X.items()}, L[idx], loss=huber(1e-3))
    t_naive = (time.perf_counter() - t0) / args.naive_samples * args.boot / max(args.jobs, 1)

    print(f"{args.boot} resamples of {n} runs ({args.form}), {args.jobs} jobs")
    print(
        f"naive full-grid refit per resample: {t_naive:8.1f} s (extrapolated from "
        f"{args.naive_samples} resamples, divided by {args.jobs} jobs)"
    )
    print(f"lmforecast warm-started bootstrap : {t_ours:8.1f} s")
    print(f"speed ratio = {t_naive / t_ours:.1f}x")
    w = {k: v[1] - v[0] for k, v in res.ci.items()}
    print("90% interval widths:", {k: round(v, 4) for k, v in w.items()})


if __name__ == "__main__":
    main()
