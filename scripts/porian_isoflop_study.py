"""Hoffmann et al.'s three approaches on the Porian et al. (2024) isoFLOP suite, per configuration.

    python scripts/porian_isoflop_study.py [../shared/data/suites/porian/isoflops.csv]

For every configuration (recipe) of the suite: the exponent a of N*(C) ~ C^a by Approach 1
(best run per budget), Approach 2 (parabola in log N per budget; 90% within-budget bootstrap
interval) and Approach 3 (the Chinchilla law fitted to all points, a = beta/(alpha+beta)).
Budgets with fewer than 3 sizes are dropped. Quoted in docs/isoflop.md.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import pandas as pd

from lmforecast.errors import InputError
from lmforecast.isoflop import approach3, fit_isoflop, isoflop_table

DEFAULT = Path(__file__).resolve().parents[2] / "shared/data/suites/porian/isoflops.csv"


def main(path=DEFAULT) -> None:
    warnings.simplefilter("ignore")
    d = pd.read_csv(path)
    print("config | budgets | runs | a (Approach 1) | a (Approach 2) [90%] | a (Approach 3)")
    for cfg, g in d.groupby("config", sort=True):
        g = g.rename(columns={"budget": "C"})
        k = g.groupby("C")["N"].transform("nunique")
        g = g[k >= 3]
        try:
            t = isoflop_table(g[["C", "N", "D", "loss"]])
            r1 = fit_isoflop(t, 1, n_boot=200)
            r2 = fit_isoflop(t, 2, n_boot=200)
            a3 = approach3(t)["a"]
        except InputError as exc:
            print(f"{cfg} | skipped: {exc}")
            continue
        print(
            f"{cfg} | {len(r2.budgets)} | {len(t)} | {r1.a:.3f} | {r2.a:.3f} "
            f"[{r2.a_interval[0]:.3f}, {r2.a_interval[1]:.3f}] | {a3:.3f}"
        )


if __name__ == "__main__":
    main(*sys.argv[1:])
