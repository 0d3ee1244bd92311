"""Benchmark: the supervised cluster bootstrap (issue 21) with variable-projection starts
against the same bootstrap scoring a quarter of the initialisation grid (the previous path),
in the same run, on the 250-run simulated table of `bench_varpro.py`.

Each resample draws model sizes with replacement and is fitted from scratch (no warm start);
only how its BOOT_STARTS starts are found differs. Prints the time per resample of each path,
their ratio, and how far the resampled optima differ (relative objective; theta).

    python benchmarks/bench_cluster_bootstrap.py [--boot 20] [--form chinchilla-gamma]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from bench_varpro import simulated
from lmforecast.fitting import huber
from lmforecast.fitting.engine import Objective
from lmforecast.laws import get_law
from lmforecast.uncertainty import cluster as ucl


def run(form: str, n_boot: int, varpro: bool):
    _, X, y = simulated(form, 250)
    law = get_law(form)
    ucl.BOOT_VARPRO = varpro
    try:
        t0 = time.process_time()
        th = ucl.cluster_bootstrap(law, X, y, huber(1e-3), n_boot=n_boot, seed=0, n_jobs=1)
        dt = time.process_time() - t0
    finally:
        ucl.BOOT_VARPRO = True
    return law, X, y, th, dt


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--boot", type=int, default=20)
    ap.add_argument("--form", default="chinchilla-gamma")
    a = ap.parse_args(argv)
    warnings.filterwarnings("ignore")
    law, X, y, th_grid, t_grid = run(a.form, a.boot, varpro=False)
    _, _, _, th_vp, t_vp = run(a.form, a.boot, varpro=True)
    # the objective of each resample's optimum, on the full table (a common yardstick)
    obj = Objective(law, X, law.target_of(y), huber(1e-3))
    f_grid, f_vp = obj.batch(th_grid), obj.batch(th_vp)
    print(f"cluster bootstrap, {a.form}, 250 runs, {a.boot} resamples, one process (CPU time)")
    print(f"  grid starts (before)      {t_grid / a.boot:.3f} s per resample")
    print(f"  projected starts (now)    {t_vp / a.boot:.3f} s per resample   "
          f"ratio {t_grid / t_vp:.1f}x")  # fmt: skip
    print(f"  largest |theta difference| {np.abs(th_vp - th_grid).max():.2e}; largest relative "
          f"difference of the resample optima on the full table "
          f"{np.max(np.abs(f_vp - f_grid) / f_grid):.2e}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
