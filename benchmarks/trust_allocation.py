"""How far to trust a fitted law's compute-optimal N*(C): held-out isoFLOP optima on Porian.

For every configuration (recipe) of the Porian et al. (2024) isoFLOP suite: fit a supervised
law (`SupervisedScalingLaw(form=...)`, default: the stacked default) on all budgets but the
largest k (k = 1, 2, 3), read N*(C) and its interval (`allocate`, `allocate_interval`) at each
held-out budget, and compare with that budget's own optimum (the vertex of its parabola in
ln N, Hoffmann et al. Approach 2). Reported: coverage of the 90% interval, median half-width
and median absolute error in ln N*. The law's N* interval is its bootstrap spread plus the
scatter of the fitted budgets' own optima about its N*(C) (`supervised/allocation.py`);
`benchmarks/trust_isoflop.py` is the same check for `isoflop fit`. Quoted in docs/trust.md.

    python benchmarks/trust_allocation.py [--form auto] [--holds 1,2,3]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd

from lmforecast.errors import InputError
from lmforecast.isoflop import isoflop_table
from lmforecast.isoflop.approaches import budget_minima
from lmforecast.supervised import SupervisedScalingLaw
from trust_isoflop import PORIAN


def forecasts(path=PORIAN, form: str = "auto", holds=(1, 2, 3)) -> pd.DataFrame:
    d = pd.read_csv(path).rename(columns={"budget": "C"})
    rows = []
    for cfg, g in d.groupby("config", sort=True):
        g = g[g.groupby("C")["N"].transform("nunique") >= 3]
        t = isoflop_table(g[["C", "N", "D", "loss"]])
        Cs = np.sort(t["C"].unique())
        for k in holds:
            fit = t[t["C"].isin(Cs[:-k])]
            try:
                law = SupervisedScalingLaw(form=form).fit(fit[["N", "D", "loss"]])
                q = law.allocate_interval(Cs[-k:], level=0.9)
            except (InputError, ValueError):
                continue
            for j, C in enumerate(Cs[-k:]):
                truth = budget_minima(t[t["C"] == C], 2)[0, 1]
                if not np.isfinite(truth):
                    continue
                N = float(np.ravel(law.allocate(C).N)[0])
                rows.append({"config": cfg, "k": k, "forecast": N, "truth": truth,
                             "lo": q["N"][0][j], "hi": q["N"][1][j]})  # fmt: skip
    df = pd.DataFrame(rows)
    df["covered"] = (df["lo"] <= df["truth"]) & (df["truth"] <= df["hi"])
    df["ln_half_width"] = np.log(df["hi"] / df["lo"]) / 2
    df["ln_abs_error"] = np.abs(np.log(df["forecast"] / df["truth"]))
    return df


def main(argv=None) -> int:
    from trust_isoflop import table

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--form", default="auto")
    ap.add_argument("--holds", default="1,2,3")
    ap.add_argument("--data", default=str(PORIAN))
    a = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    t0 = time.perf_counter()
    holds = tuple(int(k) for k in a.holds.split(","))
    tab = table(forecasts(a.data, a.form, holds))
    with pd.option_context("display.float_format", "{:.3f}".format):
        print(tab.to_string(index=False))
    print(f"(form {a.form}, {time.perf_counter() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
