"""Do the isoFLOP forecasts' intervals hold? N*(C) at budgets above the fitted ones, on Porian.

For every configuration (recipe) of the Porian et al. (2024) isoFLOP suite: drop budgets with
fewer than 3 sizes, fit Approach 1 or 2 (`lmforecast.isoflop.fit_isoflop`) on all budgets but
the largest k (k = 1, 2, 3; at least 4 budgets fitted), and forecast N* at each held-out budget
(`at_flops`, 2-8x above the largest fitted one). The truth is the held-out budget's own optimum
by the same approach (its parabola's vertex, or its best run). Reported: coverage of the 90%
interval, median half-width and median absolute error, both in ln N* (0.2 = about 20%).
The package's interval for Approach 2 is the prediction interval (sampling spread and the
scatter of the budgets' optima about the power law), for Approach 1 the resamples' spread;
`--sampling-only` shows the resamples' spread alone for Approach 2 too (its interval before the
eleventh session), `--scatter` adds the scatter term to Approach 1 (measured, not adopted).
Quoted in docs/isoflop.md.

    python benchmarks/trust_isoflop.py [--approach 2] [--bootstrap 200] [--sampling-only|--scatter]
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from lmforecast.errors import InputError
from lmforecast.isoflop import approaches, fit_isoflop, isoflop_table
from lmforecast.isoflop.approaches import budget_minima

PORIAN = Path(__file__).resolve().parents[2] / "shared/data/suites/porian/isoflops.csv"


def forecasts(path=PORIAN, approach: int = 2, n_boot: int = 200, holds=(1, 2, 3)):
    """One row per (configuration, k, held-out budget): forecast, truth, interval, coverage."""
    d = pd.read_csv(path).rename(columns={"budget": "C"})
    rows = []
    for cfg, g in d.groupby("config", sort=True):
        g = g[g.groupby("C")["N"].transform("nunique") >= 3]
        try:
            t = isoflop_table(g[["C", "N", "D", "loss"]])
            m = budget_minima(t, approach)
        except InputError:
            continue
        Cs = np.sort(t["C"].unique())
        for k in holds:
            if len(Cs) - k < 4:
                continue
            try:
                r = fit_isoflop(t[t["C"].isin(Cs[:-k])], approach, n_boot=n_boot,
                                at_flops=Cs[-k:])  # fmt: skip
            except InputError:  # a fitted budget's profile is concave: no fit to forecast from
                continue
            for at in r.meta["at_flops"]:
                truth = m[np.isclose(m[:, 0], at["C"]), 1][0]
                if not np.isfinite(truth):
                    continue
                # "not identified" (no interval) counts as a missed forecast
                lo, hi = at["N_interval"] or (np.nan, np.nan)
                rows.append({"config": cfg, "k": k, "forecast": at["N_star"], "truth": truth,
                             "lo": lo, "hi": hi})  # fmt: skip
    df = pd.DataFrame(rows)
    df["covered"] = (df["lo"] <= df["truth"]) & (df["truth"] <= df["hi"])
    df["ln_half_width"] = np.log(df["hi"] / df["lo"]) / 2
    df["ln_abs_error"] = np.abs(np.log(df["forecast"] / df["truth"]))
    return df


def table(df: pd.DataFrame) -> pd.DataFrame:
    parts = [(f"k = {k}", g) for k, g in df.groupby("k")] + [("pooled", df)]
    return pd.DataFrame([{"held out": name, "forecasts": len(g), "coverage": g["covered"].mean(),
                          "median ln half-width": g["ln_half_width"].median(),
                          "median ln error": g["ln_abs_error"].median()}
                         for name, g in parts])  # fmt: skip


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--approach", type=int, default=2)
    ap.add_argument("--bootstrap", type=int, default=200)
    ap.add_argument("--data", default=str(PORIAN))
    ap.add_argument("--sampling-only", action="store_true")
    ap.add_argument("--scatter", action="store_true", help="Approach 1 with the scatter term")
    a = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    if a.sampling_only:  # no scatter term: the resamples' percentiles alone
        approaches._prediction_sd = lambda m, C: (0.0, 0)
    if a.scatter:
        approaches.SCATTER_APPROACHES = (1, 2)
    t0 = time.perf_counter()
    tab = table(forecasts(a.data, a.approach, a.bootstrap))
    with pd.option_context("display.float_format", "{:.3f}".format):
        print(tab.to_string(index=False))
    kind = ("sampling spread only" if a.sampling_only else "with the scatter term" if a.scatter
            else "package interval")  # fmt: skip
    print(f"(Approach {a.approach}, {kind}, bootstrap {a.bootstrap}, "
          f"{time.perf_counter() - t0:.0f} s)")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
