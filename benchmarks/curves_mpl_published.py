"""The multi-power-law authors' own fitted parameters on their shared curves: how close can any
fit get to the protocol's published errors on these CSVs?

The authors report, per size, PredE 0.110% / 0.142% / 0.168% (the mean over the six held-out
curves of each curve's mean relative error) with fitted parameters
(``lmforecast.curves.mpl_data.PUBLISHED_PARAMS``). Evaluated on the shared CSVs with the same
equation, schedules and error definition, those parameters are several percent off: the curves
sit about 0.1 above them in loss, so the published numbers were computed on curves that differ
from the shared ones by an offset. This script prints, per size, the published parameters as
published, the same parameters with only L0 re-estimated on the three fitted curves (Huber on
log loss, delta 1e-3, as the fit), and our fit (``CurveLaw``), each with PredE and WorstE on the
six held-out curves, so the protocol's target can be read against the best the authors' own
solution reaches on these data.

    python benchmarks/curves_mpl_published.py [--shared ../shared] [--sizes 25M 100M 400M]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from scipy.optimize import minimize_scalar

from lmforecast.curves import CurveLaw, read_curves
from lmforecast.curves.fit import RunPoints, design, run_schedule
from lmforecast.curves.laws import to_fit, value
from lmforecast.curves.mpl_data import PROTOCOL_FIT, PUBLISHED_PARAMS, WARMUP_STEPS, read_mpl_size

PAPER = {"25M": 0.110, "100M": 0.142, "400M": 0.168}  # PredE (%), the authors' repository


def published_forecast(table, size):
    """Per logged point after warmup: (run, forecast, loss) with the published parameters."""
    z = to_fit("mpl", np.array(PUBLISHED_PARAMS[size], float))
    out = []
    for run, rows in table.groupby("run", sort=False):
        pts = RunPoints(run, run_schedule(rows, run), rows["step"].to_numpy(float))
        pred = value("mpl", z, design("mpl", [pts]))
        ok = rows["loss"].notna().to_numpy() & (rows["step"].to_numpy() > WARMUP_STEPS)
        out.append((run, pred[ok], rows["loss"].to_numpy()[ok]))
    return out


def l0_shift(curves, fit_runs, delta=1e-3):
    """The additive L0 change minimising the Huber loss on log loss over the fitted curves."""
    q = np.concatenate([p for r, p, _ in curves if r in fit_runs])
    y = np.concatenate([t for r, _, t in curves if r in fit_runs])

    def obj(s):
        d = np.abs(np.log(y) - np.log(np.maximum(q + s, 1e-9)))
        return float(np.sum(np.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta))))

    return float(minimize_scalar(obj, bounds=(-1.0, 1.0), method="bounded").x)


def pred_e(curves):
    """PredE and WorstE (%) as the authors average them over the held-out curves."""
    e = [np.abs(p / t - 1) for _, p, t in curves]
    return 100 * np.mean([c.mean() for c in e]), 100 * np.mean([c.max() for c in e])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shared", default=str(Path(__file__).resolve().parents[2] / "shared"))
    ap.add_argument("--sizes", nargs="+", default=list(PUBLISHED_PARAMS))
    args = ap.parse_args(argv)
    folder = Path(args.shared) / "data" / "curves" / "mpl"
    head = [
        "size",
        "paper: PredE",
        "published parameters on these curves: PredE",
        "published, L0 re-estimated on the fitted curves: PredE (shift)",
        "ours: PredE",
    ]
    print("| " + " | ".join(head) + " |")
    print("|---|---|---|---|---|")
    for size in args.sizes:
        table = read_curves(read_mpl_size(folder, size))
        fit_runs = {f"{size}/{r}" for r in PROTOCOL_FIT}
        curves = published_forecast(table, size)
        held = [c for c in curves if c[0] not in fit_runs]
        shift = l0_shift(curves, fit_runs)
        shifted = [(r, p + shift, t) for r, p, t in held]
        t0 = time.perf_counter()
        est = CurveLaw(n_boot=0).fit(table[table["run"].isin(fit_runs)])
        test = table[~table["run"].isin(fit_runs)]
        ok = test["loss"].notna().to_numpy() & (test["step"].to_numpy() > WARMUP_STEPS)
        pred, runs = est.predict(test)[ok], test["run"].to_numpy()[ok]
        loss = test["loss"].to_numpy()[ok]
        ours = [(r, pred[runs == r], loss[runs == r]) for r in dict.fromkeys(runs)]
        took = time.perf_counter() - t0
        print(f"| {size} | {PAPER[size]:.3f}% | {pred_e(held)[0]:.3f}% | "
              f"{pred_e(shifted)[0]:.3f}% ({shift:+.3f}) | {pred_e(ours)[0]:.3f}% "
              f"(fit + forecast {took:.2f} s) |")  # fmt: skip


if __name__ == "__main__":
    main()
