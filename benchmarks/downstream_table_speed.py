"""`downstream predict --table` against one forecast call per row, in one run.

The same targets (Pythia models by name, and (N, D) points) forecast from one downstream fit of
piqa on Pythia 70M-1.4B: through `downstream.batch.forecast_table` (one vectorised call per kind
of point) and through the loop a user writes without it (`predict` and `predict_interval` per
row, as a shell loop of `downstream predict` calls does, minus the start-up of each call).
Prints both times, the ratio, and the largest difference between the two sets of forecasts
(they must agree).

    python benchmarks/downstream_table_speed.py [--rows 50] [--bootstrap 200] [--repeat 3]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd

from lmforecast.data.evals import load_pythia, lookup_model
from lmforecast.downstream import DownstreamForecaster
from lmforecast.downstream.batch import forecast_table

SMALL = ["pythia-70m", "pythia-160m", "pythia-410m", "pythia-1b", "pythia-1.4b"]
NAMES = ["pythia-2.8b", "pythia-6.9b", "pythia-12b", "pythia-1b", "pythia-410m"]


def targets(n: int) -> pd.DataFrame:
    half = n // 2
    rows = [{"model": NAMES[i % len(NAMES)]} for i in range(half)]
    rows += [{"params": float(p), "tokens": 3e11} for p in np.geomspace(2e8, 1e10, n - half)]
    return pd.DataFrame(rows)


def per_row(est: DownstreamForecaster, t: pd.DataFrame) -> np.ndarray:
    out = []
    for _, r in t.iterrows():
        if isinstance(r.get("model"), str):
            m = lookup_model(r["model"])
            N, D = m["params"], m["tokens"]
        else:
            N, D = r["params"], r["tokens"]
        p = np.ravel(est.predict(N=N, D=D))[0]
        lo, hi = (np.ravel(v)[0] for v in est.predict_interval(N=N, D=D, level=0.9))
        out.append((p, lo, hi))
    return np.array(out, float)


def best_of(f, repeat: int) -> tuple[float, object]:
    times, res = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        res = f()
        times.append(time.perf_counter() - t0)
    return min(times), res


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=50)
    ap.add_argument("--bootstrap", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args(argv)
    est = DownstreamForecaster(bootstrap=a.bootstrap, seed=0).fit(load_pythia(), task="piqa",
                                                                   models=SMALL)  # fmt: skip
    t = targets(a.rows)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # reach warnings at 6.9B/12B: the same on both sides
        t_loop, loop = best_of(lambda: per_row(est, t), a.repeat)
        t_table, (rows, _) = best_of(lambda: forecast_table(est, t, level=0.9), a.repeat)
    table = rows[["performance", "lower", "upper"]].to_numpy(float)
    diff = float(np.max(np.abs(table - loop)))
    print(f"{a.rows} rows, bootstrap {a.bootstrap}: one call per row {t_loop:.3f} s, "
          f"forecast_table {t_table:.3f} s")  # fmt: skip
    print(f"speed ratio (per row / table): {t_loop / t_table:.1f}x; largest difference "
          f"{diff:.2e} points")  # fmt: skip
    if diff > 1e-9:
        raise SystemExit("the two paths disagree")


if __name__ == "__main__":
    main()
