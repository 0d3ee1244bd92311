"""Benchmark: our engine vs a naive loop of scipy L-BFGS-B over every start.

Our engine is timed twice: the default (variable projection, fitting/varpro.py: linear
coefficients solved on an exponent grid, then the L-BFGS-B polish) and ``method="grid"`` (score
the published grid, polish the best starts). benchmarks/bench_varpro.py has the full comparison.

The naive loop is the published procedure (Hoffmann et al. 2022 Approach 3; Besiroglu et al.
2024): L-BFGS-B with scipy's default tolerances from every point of the initialisation grid, with
the same analytic gradient we use (a fair baseline). Both minimise the same Huber objective on
log loss. Prints both best objectives and the speed ratio (target: same objective, >= 20x).

    python benchmarks/bench_supervised_fit.py [--form chinchilla|chinchilla-gamma] [--runs 245]
        [--sample 600]   # time the naive loop on a random sample of starts and extrapolate
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy.optimize import minimize

from lmforecast.fitting import fit_law, grid_to_array, huber
from lmforecast.fitting.engine import Objective
from lmforecast.fitting.threads import single_blas_thread
from lmforecast.laws import get_law
from lmforecast.supervised import PRESETS


def data(form: str, n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    N = 10 ** rng.uniform(7.5, 10.5, n)
    D = N * 10 ** rng.uniform(0.3, 3.0, n)
    p = dict(PRESETS["hoffmann2022" if form == "chinchilla" else "busbridge2025"]["params"])
    law = get_law(form)
    L = law.predict(p, N=N, D=D) * np.exp(rng.normal(0, 0.01, n))
    return law, {"N": N, "D": D}, L


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--form", default="chinchilla", choices=["chinchilla", "chinchilla-gamma"])
    ap.add_argument("--runs", type=int, default=245)
    ap.add_argument("--delta", type=float, default=1e-3)
    ap.add_argument("--sample", type=int, default=0, help="naive starts to time (0: all)")
    args = ap.parse_args()
    law, X, y = data(args.form, args.runs)
    loss = huber(args.delta)

    t0 = time.perf_counter()
    res = fit_law(law, X, y, loss=loss)
    t_ours = time.perf_counter() - t0
    t0 = time.perf_counter()
    res_grid = fit_law(law, X, y, loss=loss, method="grid")
    t_grid = time.perf_counter() - t0

    starts = grid_to_array(law, law.default_grid())
    obj = Objective(law, X, law.target_of(y), loss)
    idx = np.arange(len(starts))
    if args.sample and args.sample < len(starts):
        idx = np.random.default_rng(0).choice(len(starts), args.sample, replace=False)
    best = np.inf
    t0 = time.perf_counter()
    with single_blas_thread():
        for i in idx:
            r = minimize(
                obj.value_and_grad, starts[i], jac=True, method="L-BFGS-B", bounds=law.bounds
            )
            best = min(best, r.fun)
    t_naive = (time.perf_counter() - t0) * len(starts) / len(idx)
    print(f"form={args.form} runs={args.runs} starts={len(starts)} huber_delta={args.delta:g}")
    print(
        f"naive L-BFGS-B loop: best objective {best:.10e}  time {t_naive:8.2f} s"
        + (f" (extrapolated from {len(idx)} starts)" if len(idx) < len(starts) else "")
    )
    print(
        f"lmforecast engine  : best objective {res.objective:.10e}  time {t_ours:8.2f} s  "
        f"(converged={res.converged}, starts at best={res.n_at_best}/{res.n_polished})"
    )
    print(f"lmforecast grid    : best objective {res_grid.objective:.10e}  time {t_grid:8.2f} s")
    print(
        f"objective ratio naive/ours = {best / res.objective:.6f}  speed ratio = "
        f"{t_naive / t_ours:.1f}x"
    )


if __name__ == "__main__":
    main()
