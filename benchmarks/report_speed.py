"""The report's cost: the distillation section's held-out zoo study, and the whole main job.

Part 1 (always): the zoo leave-one-out and strongest-teacher refits of
`distill.studies.zoo_distillation_summary`. Baseline: the previous method, every held-out refit a
full `DistillationScalingLaw` fit (4 best grid starts plus the stratified ones); ours: each refit
polishes its 2 best grid starts (`refit_on_subset`). Prints the CPU time of both, the ratio, and
the largest relative difference between their held-out predictions.

Part 2 (``--full``): `lmforecast report --out DIR` as a user runs it (default ``--jobs``) against
the same report built one section after another (``--jobs 1``, the named baseline): wall time
and CPU time (the process and its workers) of each, and the ratio of wall times.

Run from anywhere: ``python benchmarks/report_speed.py [--full]``. Timings on a shared machine are
noisy: compare runs made back to back.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np


def _cpu_children() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def held_out_study() -> None:
    from lmforecast.distill import DistillationScalingLaw
    from lmforecast.distill.studies import refit_on_subset
    from lmforecast.distill.zoo_data import zoo_distillation_runs, zoo_fixed_coefficients
    from lmforecast.supervised import SupervisedScalingLaw
    from lmforecast.zoo.tables import load_zoo

    zoo = load_zoo()
    runs = zoo_distillation_runs(zoo.distillation)
    fixed = zoo_fixed_coefficients()

    def pred(est, df):
        return est.predict(df["N_S"].to_numpy(), df["D_S"].to_numpy(), df["L_T"].to_numpy())

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the zoo's E -> 0 notes, as in the study
        sup = SupervisedScalingLaw(form="chinchilla", intervals=False).fit(zoo.supervised_runs())
        full = DistillationScalingLaw(sup, fixed=fixed, n_polish=4, bootstrap=0).fit(runs)

        def baseline(df):
            return DistillationScalingLaw(sup, fixed=fixed, n_polish=4, bootstrap=0).fit(df)

        def ours(df):
            return refit_on_subset(full, df, 2)

        out = {}
        for name, refit in (("baseline", baseline), ("ours", ours)):
            t0 = time.process_time()
            loo = [pred(refit(runs.drop(index=i)), runs.iloc[[i]])[0] for i in range(len(runs))]
            out[name] = (time.process_time() - t0, np.array(loo))
    (tb, pb), (to, po) = out["baseline"], out["ours"]
    print(f"zoo leave-one-out ({len(runs)} refits), CPU s")
    print(f"  baseline (full estimator fits, stratified starts): {tb:6.2f}")
    print(f"  ours (2 best grid starts per refit):               {to:6.2f}")
    print(f"  speed-up: {tb / to:.2f}x; max relative difference of the predictions "
          f"{np.max(np.abs(po / pb - 1)):.1e}")  # fmt: skip


def report(*extra: str) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as d:
        c0, t0 = _cpu_children(), time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "lmforecast", "report", "--out", str(Path(d) / "r"), "--quiet",
             *extra],
            check=True,
        )  # fmt: skip
        return time.perf_counter() - t0, _cpu_children() - c0


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true", help="also time the whole report (minutes)")
    args = ap.parse_args()
    held_out_study()
    if args.full:
        serial = report("--jobs", "1")
        default = report()
        print("lmforecast report --out DIR")
        print(f"  baseline, one section after another (--jobs 1): wall {serial[0]:6.1f} s, "
              f"CPU {serial[1]:6.1f} s")  # fmt: skip
        print(f"  default --jobs:                                  wall {default[0]:6.1f} s, "
              f"CPU {default[1]:6.1f} s")  # fmt: skip
        print(f"  speed-up (wall): {serial[0] / default[0]:.2f}x")
