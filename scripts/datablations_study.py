"""Refit the data-constrained law on the datablations runs and backtest it against the plain law.

    python scripts/datablations_study.py [../shared/data/suites/datablations/runs.csv]

Prints (1) the coefficients of the joint and two-stage fits on all runs and on runs with at
most 100 / 16 epochs, (2) backtests: fit on runs below a compute (C < 1e20 FLOPs) or size
(N < 1e9) cutoff, forecast the rest; median and mean absolute log error of the data-constrained
law and of the plain Chinchilla law L(N, D) that ignores U. Quoted in docs/datablations.md.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from lmforecast.dataconstrained import DataConstrainedLaw
from lmforecast.fitting import fit_law, huber
from lmforecast.laws import get_law

DEFAULT = Path(__file__).resolve().parents[2] / "shared/data/suites/datablations/runs.csv"
KEYS = ("A", "B", "E", "alpha", "beta", "RD_star", "RN_star")


def backtest(d: pd.DataFrame, col: str = "C", cut: float = 1e20) -> dict:
    tr, te = d[d[col] < cut], d[d[col] >= cut]
    m = DataConstrainedLaw(bootstrap=0).fit(tr)
    e_dc = np.log(te["loss"]) - np.log(m.predict(te["N"], te["D"], te["U"]))
    law = get_law("chinchilla")
    r = fit_law(law, {"N": tr["N"], "D": tr["D"]}, tr["loss"], loss=huber(1e-3))
    e_pl = np.log(te["loss"]) - np.log(r.predict(N=te["N"], D=te["D"]))
    out = {"n_train": len(tr), "n_test": len(te)}
    for name, e in (("data-constrained", e_dc), ("plain", e_pl)):
        out[name] = (float(np.median(np.abs(e))), float(np.mean(np.abs(e))))
    return out


def main(path=DEFAULT) -> None:
    warnings.simplefilter("ignore")
    d = pd.read_csv(path)
    print("max_epochs fit n " + " ".join(f"{k:>8s}" for k in KEYS) + "  rmse_log")
    for me in (None, 100, 16):
        s = d if me is None else d[d["epochs"] <= me]
        for fit in ("joint", "two-stage"):
            m = DataConstrainedLaw(fit=fit, bootstrap=0).fit(s)
            p = m.params_
            print(
                f"{me or 'all'!s:>10} {fit:9s} {len(s):3d} "
                + " ".join(f"{p[k]:8.4g}" for k in KEYS)
                + f"  {m.result_.rmse_target:.4f}"
            )
    for me, col, cut in ((None, "C", 1e20), (None, "N", 1e9), (16, "C", 1e20), (16, "N", 1e9)):
        s = d if me is None else d[d["epochs"] <= me]
        b = backtest(s, col, cut)
        print(
            f"backtest (max epochs {me or 'all'}): fit {col} < {cut:g} ({b['n_train']} runs), "
            f"forecast the rest ({b['n_test']} runs): median/mean |log error| data-constrained "
            f"{b['data-constrained'][0]:.4f}/{b['data-constrained'][1]:.4f}, plain "
            f"{b['plain'][0]:.4f}/{b['plain'][1]:.4f}"
        )


if __name__ == "__main__":
    main(*sys.argv[1:])
