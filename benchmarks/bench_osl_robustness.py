"""App. C.4 robustness sweep: `robustness_sweep` vs a naive loop of estimator fits.

Baseline: what a user would write with the existing estimator, one
`ObservationalScalingLaw(K, x=..., holdout="list", heldout=...)` fit per predictor x test
fraction (each fit redoes imputation + PCA for its K, the f-equivalent-FLOPs regression and the
per-model records). Ours: one imputation + PCA per split shared by K = 1..4, and the same
sigmoid fit: `n_polish=16` is exactly the estimator's multi-start fit (same AUEs), the default
`n_polish=4` polishes only the 4 best-scoring starts; the script prints how far its training
objectives and AUEs move from the full multi-start fit.

Run: PYTHONPATH=src python benchmarks/bench_osl_robustness.py [--shared ../shared] [--targets ..]
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from lmforecast.osl import ObservationalScalingLaw, paper_base_models, read_benchmarks
from lmforecast.osl.data import FLOPS, MODEL
from lmforecast.osl.robustness import DEFAULT_PREDICTORS, aue, robustness_sweep, sweep_fractions


def naive_sweep(pool: pd.DataFrame, target: str, fractions: np.ndarray) -> dict[str, float]:
    """AUE per predictor from one estimator fit per (predictor, fraction)."""
    data = pool[pool[target].notna()].reset_index(drop=True)
    flops = data[FLOPS].to_numpy(float)
    order = np.sort(flops)
    mse: dict[str, list[float]] = {p: [] for p in DEFAULT_PREDICTORS}
    for f in fractions:
        # same split rule as the sweep: the cutoff whose test count is closest to f * n
        values = np.unique(flops)[:-1]
        n_test = len(flops) - np.searchsorted(order, values, side="right")
        dist = np.round(np.abs(n_test - f * len(flops)), 9)
        c = values[np.lexsort((-n_test, dist))[0]]
        held = data.loc[flops > c, MODEL].tolist()
        for p in DEFAULT_PREDICTORS:
            x, k = ("pcs", int(p[4:])) if p.startswith("pcs:") else (p, 1)
            est = ObservationalScalingLaw(k, x=x, holdout="list", heldout=held)
            mse[p].append(est.fit(data, target).result_.test_mse)
    return {p: aue(fractions, np.array(v)) for p, v in mse.items()}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shared", default=str(Path(__file__).resolve().parents[1].parent / "shared"))
    ap.add_argument("--targets", default="GSM8K,HumanEval")
    args = ap.parse_args()
    table = read_benchmarks(Path(args.shared) / "data/obsscaling/base_llm_benchmark_eval.csv")
    pool = paper_base_models(table)
    pool = pool[pool[FLOPS].notna()].reset_index(drop=True)  # the sweep's pool
    targets = args.targets.split(",")
    fractions = sweep_fractions()
    warnings.simplefilter("ignore")

    t0 = time.perf_counter()
    naive = {t: naive_sweep(pool, t, fractions) for t in targets}
    t_naive = time.perf_counter() - t0

    t0 = time.perf_counter()
    ours = robustness_sweep(pool, targets, n_polish=16)
    t_ours = time.perf_counter() - t0

    t0 = time.perf_counter()
    fast = robustness_sweep(pool, targets)  # default n_polish=4
    t_fast = time.perf_counter() - t0

    n_fits = len(ours.points)
    gap_naive = max(abs(naive[t][p] - ours.aue[t][p]) for t in targets for p in naive[t])
    a, b = ours.curves, fast.curves
    rel = (b["train_mse"] - a["train_mse"]) / a["train_mse"]
    gap_fast = max(abs(fast.aue[t][p] - ours.aue[t][p]) for t in targets for p in ours.aue[t])
    print(f"targets {targets}: {len(fractions)} fractions x {len(DEFAULT_PREDICTORS)} predictors")
    print(f"naive estimator loop      {t_naive:7.2f} s  ({1e3 * t_naive / n_fits:.0f} ms/fit)")
    print(f"sweep, n_polish=16        {t_ours:7.2f} s  ({1e3 * t_ours / n_fits:.0f} ms/fit)")
    print(f"sweep, default n_polish=4 {t_fast:7.2f} s  ({1e3 * t_fast / n_fits:.0f} ms/fit)")
    print(
        f"speed-up vs naive: {t_naive / t_ours:.2f}x (n_polish=16), "
        f"{t_naive / t_fast:.2f}x (default)"
    )
    print(f"max |AUE(naive) - AUE(sweep)|: {gap_naive:.3g} points^2")
    print(
        f"n_polish=4 vs 16: training objective worse by at most {rel.max():.3g} (relative), "
        f"better by at most {-rel.min():.3g}; max |AUE diff| {gap_fast:.3g} points^2"
    )


if __name__ == "__main__":
    main()
