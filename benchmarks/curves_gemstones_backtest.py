"""Mid-run backtests on the Gemstones checkpoints (McLeish et al. 2025; 22 models, constant
learning rate, 35 checkpoints each): keep each model's first 10%, 25% or 50% of checkpoints,
fit the multi-power law to that prefix alone, forecast the last checkpoint's validation loss
with a 90% interval (the default calibration factor, chosen on the 25M curves of the
multi-power-law authors: these curves played no part in choosing it), beside persistence (the
last kept checkpoint) and a power law in steps fitted to the same prefix.

The learning rate is not in the table; it is constant, so it is given as 1 from step 0 (no
warmup: S1 is the step; the law's A absorbs the lr's scale).

    python benchmarks/curves_gemstones_backtest.py [--shared ../shared]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from lmforecast.curves import CurveLaw
from lmforecast.errors import InputError

REPO = Path(__file__).resolve().parents[1]
FRACTIONS = (0.10, 0.25, 0.50)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shared", type=Path, default=REPO.parent / "shared")
    ap.add_argument("--column", default="loss_fineweb_edu")
    ap.add_argument("--models", type=int, default=None, help="only the first N models")
    a = ap.parse_args(argv)
    raw = pd.read_csv(a.shared / "data" / "suites" / "gemstones" / "loss.csv")
    names = list(dict.fromkeys(raw["model"]))[: a.models]
    recs = []
    for name in names:
        g = raw[raw["model"] == name].sort_values("step")
        table = pd.DataFrame({"run": name, "step": np.r_[0.0, g["step"].to_numpy(float)],
                              "lr": 1.0,
                              "loss": np.r_[np.nan, g[a.column].to_numpy(float)]})  # fmt: skip
        actual = table["loss"].iloc[-1]
        for frac in FRACTIONS:
            k = max(5, int(round(frac * len(table))))  # the step-0 row and at least 4 losses
            part = table.assign(loss=np.where(np.arange(len(table)) < k, table["loss"], np.nan))
            rec = {"model": name, "fraction": frac, "actual": actual,
                   "persistence": table["loss"].iloc[k - 1]}  # fmt: skip
            for law in ("mpl", "power"):
                try:
                    est = CurveLaw(law, n_boot=100).fit(part)
                    r = est.forecast(table[["run", "step", "lr"]], final=True).table.iloc[-1]
                    rec.update({f"{law}": r["loss"], f"{law}_lo": r["lo"], f"{law}_hi": r["hi"]})
                except InputError:
                    rec.update({f"{law}": np.nan, f"{law}_lo": np.nan, f"{law}_hi": np.nan})
            recs.append(rec)
    df = pd.DataFrame(recs)
    print(
        f"Gemstones, {len(names)} models, column {a.column!r}: forecast of the last "
        "checkpoint from a prefix of the run alone\n"
    )
    print(
        "| kept | mean err mpl | mean err power | mean err persistence | identified (mpl) | "
        "coverage 90% (mpl) | median half-width / mean err (mpl) |"
    )
    print("|---|---|---|---|---|---|---|")
    for frac, g in df.groupby("fraction"):
        err = (g["mpl"] / g["actual"] - 1).abs()
        ok = g["mpl_lo"].notna()
        cov = ((g["mpl_lo"] <= g["actual"]) & (g["actual"] <= g["mpl_hi"]))[ok].mean()
        half = ((g["mpl_hi"] - g["mpl_lo"]) / 2 / g["actual"])[ok].median()
        print(
            f"| {frac:.0%} | {err.mean():.2%} | {(g['power'] / g['actual'] - 1).abs().mean():.2%} "
            f"| {(g['persistence'] / g['actual'] - 1).abs().mean():.2%} | {int(ok.sum())}/"
            f"{len(g)} | {cov:.0%} | {half / err[ok].mean():.2f} |"
        )


if __name__ == "__main__":
    main()
