"""Benchmarks for the distillation scaling law (issue 3).

1. The full App. F.2 grid fit (216,000 starts) on 697 simulated runs: ours (separable grid
   scoring + L-BFGS-B polish of the best starts) vs the paper's naive procedure, L-BFGS-B from
   every start (timed on a random sample of starts and extrapolated), same best objective.
2. 1,000 compute-optimal plans (4 scenarios x 5 student sizes x 50 budgets): ours (vectorised
   elimination + zoom) vs the paper's SLSQP loop (timed on a sample and extrapolated).

Run: PYTHONPATH=src python benchmarks/bench_distill.py [--naive-starts 100] [--slsqp-plans 8]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy.optimize import minimize

from lmforecast.distill import DistillationScalingLaw, simulate_distillation_runs
from lmforecast.distill.planning import SCENARIOS, plan_distillation
from lmforecast.distill.reference import plan_slsqp
from lmforecast.fitting import huber
from lmforecast.fitting.engine import Objective, clip_to_bounds, grid_to_array
from lmforecast.fitting.threads import single_blas_thread


def bench_fit(n_naive: int, seed: int = 0) -> None:
    runs = simulate_distillation_runs(seed=seed)
    t0 = time.perf_counter()
    model = DistillationScalingLaw("busbridge2025", bootstrap=0).fit(runs)
    t_ours = time.perf_counter() - t0
    law = model.result_.law_
    X = model._inputs(runs.N_S, runs.D_S, runs.L_T)
    obj = Objective(law, X, np.log(runs.L_S.to_numpy()), huber(1e-4))
    G = clip_to_bounds(law, grid_to_array(law, law.default_grid()))
    idx = np.random.default_rng(seed).choice(len(G), n_naive, replace=False)
    best = np.inf
    t0 = time.perf_counter()
    with single_blas_thread():
        for th0 in G[idx]:
            r = minimize(obj.value_and_grad, th0, jac=True, method="L-BFGS-B", bounds=law.bounds)
            best = min(best, float(r.fun))
    t_sample = time.perf_counter() - t0
    t_naive = t_sample / n_naive * len(G)
    print(f"[fit] {len(runs)} runs, {len(G)} starts")
    print(f"  ours : {t_ours:8.2f} s   objective {model.result_.objective:.9e}")
    print(
        f"  naive: {t_naive:8.0f} s (extrapolated from {n_naive} starts in {t_sample:.1f} s)"
        f"   best objective in the sample {best:.9e}"
    )
    print(f"  ratio naive/ours: {t_naive / t_ours:.0f}x")


def bench_plans(n_slsqp: int) -> None:
    model = DistillationScalingLaw.from_preset()
    NS = np.array([3e8, 1e9, 3e9, 1e10, 3e10])
    C = np.logspace(20, 26, 50)
    t0 = time.perf_counter()
    plans = {s: plan_distillation(model, NS[:, None], C[None, :], s) for s in SCENARIOS}
    t_ours = time.perf_counter() - t0
    rng = np.random.default_rng(0)
    picks = [
        (list(SCENARIOS)[rng.integers(4)], int(rng.integers(5)), int(rng.integers(50)))
        for _ in range(n_slsqp)
    ]
    t0 = time.perf_counter()
    worst = 0.0
    for s, i, j in picks:
        ref = plan_slsqp(model, NS[i], C[j], s)
        worst = max(worst, float(plans[s].student_loss[i, j]) - ref["student_loss"])
    t_s = time.perf_counter() - t0
    t_naive = t_s / n_slsqp * 1000
    print("[plans] 1000 plans (4 scenarios x 5 student sizes x 50 budgets)")
    print(f"  ours : {t_ours:8.2f} s")
    print(f"  SLSQP: {t_naive:8.1f} s (extrapolated from {n_slsqp} plans in {t_s:.1f} s)")
    print(f"  ratio SLSQP/ours: {t_naive / t_ours:.0f}x;  worst (ours - SLSQP) loss {worst:.2e}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--naive-starts", type=int, default=100)
    ap.add_argument("--slsqp-plans", type=int, default=8)
    a = ap.parse_args()
    bench_plans(a.slsqp_plans)
    bench_fit(a.naive_starts)
