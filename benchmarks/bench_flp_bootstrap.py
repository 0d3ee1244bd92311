"""Benchmark: FLP's bootstrap of its two OLS stages, closed form vs the shared engine.

Ours: `flp.fitting.bootstrap_closed_form` (each resample's least-squares optimum by OLS in
target space, vectorised over resamples; the default `FLP(bootstrap=200)` path).
Baseline: `uncertainty.bootstrap.bootstrap_fit` (one warm-started L-BFGS-B polish per resample,
what FLP used before). Same resamples (child seeds), so the thetas must agree; prints both
times, the ratio and the largest difference of the resampled parameters.

    python benchmarks/bench_flp_bootstrap.py [--boot 200] [--repeat 3]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from lmforecast.flp.fitting import bootstrap_closed_form, fit_from_closed_form
from lmforecast.flp.simulate import simulate_flp
from lmforecast.laws import get_law
from lmforecast.uncertainty.bootstrap import bootstrap_fit


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--boot", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    s = simulate_flp(tasks=("ARC",), seed=0)
    stages = {
        "stage 1 (Eq. 1, 12 final models)": ("flp-power", s.runs["C"], s.runs["loss"]),
        "stage 2 (Eq. 2, 360 checkpoints)": ("flp-linear", s.checkpoints["loss"],
                                             s.checkpoints["ARC"]),
    }  # fmt: skip
    for name, (lawname, x, y) in stages.items():
        law = get_law(lawname)
        x, y = np.asarray(x, float), np.asarray(y, float)
        X = {law.inputs[0]: x}
        base = fit_from_closed_form(law, X, y, law.ols_start(x, y))
        t_ours, t_base = [], []
        for _ in range(args.repeat):
            r1 = fit_from_closed_form(law, X, y, law.ols_start(x, y))
            t = time.perf_counter()
            bootstrap_closed_form(law, X, y, r1, n_boot=args.boot, seed=1)
            t_ours.append(time.perf_counter() - t)
            r2 = fit_from_closed_form(law, X, y, base.theta)
            t = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                bootstrap_fit(law, X, y, r2, n_boot=args.boot, seed=1, n_jobs=1)
            t_base.append(time.perf_counter() - t)
        diff = np.abs(np.array(r1.bootstrap) - np.array(r2.bootstrap)).max()
        a, b = min(t_ours), min(t_base)
        print(f"{name}: closed form {a * 1e3:.1f} ms, engine bootstrap_fit {b * 1e3:.1f} ms, "
              f"ratio {b / a:.1f}x; max |theta difference| {diff:.2e}")  # fmt: skip


if __name__ == "__main__":
    main()
