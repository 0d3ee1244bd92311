"""Trial (issue 21, not adopted): a model-form disagreement term in the supervised interval.

The default interval is log L +- z (sqrt(noise^2 + s_boot^2) + k r) with one k for every suite.
This script tries, strictly leave-one-suite-out on the forecasts of `benchmarks/trust_suites.py`
(`--cache`, all methods), the half-width

    z (sqrt(noise^2 + s_boot^2) + k1 r + k2 |log(L_default / L_other)|),

L_other the 1-D compute law E + A C^-a (fitted beside every supervised fit) or the over-training
law (least squares), or the larger of the two disagreements. For each held-out suite, k2 is taken
from a grid and k1 is the smallest k covering 90% of the other four suites' forecasts (each suite
weighted equally) given k2; the k2 kept is the one minimising the mean over the four suites of
log(median half-width / median |error|) (rule "width"), optionally only among k2 whose every
training suite is covered at >= FLOOR (rule "width, floor"), or with the floor itself chosen by
an inner leave-one-suite-out on the four training suites (nested; no held-out data). It also
scores moving the point forecast to the log-space midpoint of the default and the other law.
Results: docs/trust_validation.md ("Tried, not adopted").

    python benchmarks/trust_suites.py --cache /tmp/forecasts.csv
    python benchmarks/trust_disagreement.py --cache /tmp/forecasts.csv
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from lmforecast.backtest.suites import score_forecasts
from lmforecast.supervised.calibration import suite_weights
from lmforecast.uncertainty.normal import z_of
from lmforecast.uncertainty.percentile import weighted_quantile

OTHERS = {"compute": "baseline:power-law-C", "overtrain": "overtrain-ls"}
K2_GRID = np.r_[0.0, np.linspace(0.05, 3.0, 60)]
FLOORS = (0.0, 0.75, 0.8, 0.85, 0.9)


def joined(f: pd.DataFrame) -> pd.DataFrame:
    """The default's forecasts with each other law's forecast of the same row beside it."""
    key = ["suite", "sub", "split", "N", "D"]
    d = f[f["method"] == "default"].copy()
    d["_i"] = d.groupby(key).cumcount()
    for name, method in OTHERS.items():
        o = f[f["method"] == method].copy()
        o["_i"] = o.groupby(key).cumcount()
        o = o[[*key, "_i", "forecast"]].rename(columns={"forecast": name})
        d = d.merge(o, on=[*key, "_i"], how="left")
    if d[list(OTHERS)].isna().any().any():
        raise SystemExit("the cache lacks the simple laws' forecasts: run trust_suites.py fully")
    return d.reset_index(drop=True)


def disagreement(d: pd.DataFrame, which: str) -> np.ndarray:
    g = {n: np.abs(np.log(d["forecast"] / d[n])).to_numpy(float) for n in OTHERS}
    return np.maximum(*g.values()) if which == "max" else g[which]


def with_interval(d, k1, k2, dis, level=0.9):
    base = np.hypot(d["noise"], d["s_boot"]).to_numpy(float)
    hw = z_of(level) * (base + k1 * d["r"].to_numpy(float) + k2 * dis)
    t = np.log(d["forecast"].to_numpy(float))
    return d.assign(lower=np.exp(t - hw), upper=np.exp(t + hw))


def k1_given(d, k2, dis, level=0.9) -> float:
    """Smallest k1 covering `level` of d's forecasts (equal suite weights) given k2."""
    e = np.abs(np.log(d["truth"] / d["forecast"]).to_numpy(float)) / z_of(level)
    s = np.hypot(d["noise"], d["s_boot"]).to_numpy(float) + k2 * dis
    r = d["r"].to_numpy(float)
    need = np.where(e <= s, 0.0, np.where(r > 0, (e - s) / np.maximum(r, 1e-12), np.inf))
    k = weighted_quantile(need, suite_weights(d), level)
    return k if np.isfinite(k) else float(np.max(need[np.isfinite(need)], initial=0.0))


def pick(dt, dist, which, floor, grid=K2_GRID):
    """(k1, k2) chosen on the forecasts dt: the narrowest (mean log width/error ratio over dt's
    suites) among the k2 keeping every suite of dt at >= floor (else the best worst suite)."""
    cands = []
    for k2 in [0.0] if which is None else grid:
        k1 = k1_given(dt, k2, dist)
        sc = score_forecasts(with_interval(dt, k1, k2, dist))
        obj = np.mean(np.log(sc["median_halfwidth_pct"] / sc["median_abs_pct"]))
        cands.append((sc["coverage"].min() >= floor, obj, k1, k2, sc["coverage"].min()))
    ok = [c for c in cands if c[0]]
    _, _, k1, k2, _ = min(ok, key=lambda c: c[1]) if ok else max(cands, key=lambda c: c[4])
    return k1, k2


def nested_floor(dt, dist, which, floors=FLOORS) -> float:
    """The floor chosen by an inner leave-one-suite-out on dt alone: among floors whose inner
    held-out coverages are all >= 0.70 with mean in 0.85-0.95, the narrowest (else the first)."""
    best = None
    for fl in floors:
        cov, ratio = [], []
        for s in dt["suite"].unique():
            t2 = (dt["suite"] != s).to_numpy()
            k1, k2 = pick(dt[t2], dist[t2], which, fl, K2_GRID[::2])
            sc = score_forecasts(with_interval(dt[~t2], k1, k2, dist[~t2])).iloc[0]
            cov.append(sc["coverage"])
            ratio.append(np.log(sc["median_halfwidth_pct"] / sc["median_abs_pct"]))
        key = (not (min(cov) >= 0.70 and 0.85 <= np.mean(cov) <= 0.95), np.mean(ratio))
        if best is None or key < best[0]:
            best = (key, fl)
    return best[1]


def loso(d: pd.DataFrame, which: str | None, floor: float | None = 0.0) -> pd.DataFrame:
    """Per held-out suite, (k1, k2) chosen on the other suites (floor None: the floor itself
    chosen by an inner leave-one-suite-out on them) and the suite scored with them."""
    dis_all = np.zeros(len(d)) if which is None else disagreement(d, which)
    parts, knobs = [], {}
    for s in d["suite"].unique():
        tr = (d["suite"] != s).to_numpy()
        dt, dist = d[tr].reset_index(drop=True), dis_all[tr]
        fl = nested_floor(dt, dist, which) if floor is None else floor
        k1, k2 = pick(dt, dist, which, fl, K2_GRID[::2] if floor is None else K2_GRID)
        knobs[s] = (k1, k2)
        parts.append(with_interval(d[~tr], k1, k2, dis_all[~tr]))
    t = score_forecasts(pd.concat(parts, ignore_index=True))
    t["ratio"] = t["median_halfwidth_pct"] / t["median_abs_pct"]
    t["k1"] = t["suite"].map(lambda s: knobs[s][0])
    t["k2"] = t["suite"].map(lambda s: knobs[s][1])
    return t.drop(columns=["method", "nonfinite"])


def midpoint(d: pd.DataFrame) -> pd.DataFrame:
    """Mean |% error| (equal cell weights) of the default, each other law and the midpoints."""
    rows = {"default": d}
    for n in OTHERS:
        rows[n] = d.assign(forecast=d[n])
        rows[f"mid({n})"] = d.assign(forecast=np.sqrt(d["forecast"] * d[n]))
    out = {k: score_forecasts(v).set_index("suite")["mean_abs_pct"] for k, v in rows.items()}
    return pd.DataFrame(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache", type=Path, required=True, help="trust_suites.py --cache CSV")
    ap.add_argument("--floor", type=float, default=0.85)
    args = ap.parse_args(argv)
    d = joined(pd.read_csv(args.cache))
    fmt = {"float_format": lambda v: f"{v:.3g}", "index": False}
    trials = [("current (k r only)", None, 0.0)]
    for which in ("compute", "overtrain", "max"):
        trials += [(f"{which}, rule width", which, 0.0)]
        trials += [(f"{which}, rule width + floor {args.floor}", which, args.floor)]
    trials += [("compute, floor chosen by inner leave-one-suite-out", "compute", None)]
    for name, which, floor in trials:
        t = loso(d, which, floor)
        print(f"\n== {name}: pooled coverage {t['coverage'].mean():.3f}")
        print(t.to_string(**fmt))
    print("\nPoint forecast, mean |% error|:")
    print(midpoint(d).to_string(float_format=lambda v: f"{v:.2f}"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
