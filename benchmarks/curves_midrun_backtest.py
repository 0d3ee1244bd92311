"""Mid-run backtests on every shared curve of the multi-power-law authors (Luo et al. 2025):
for each run, keep its first 10%, 25%, 50% of logged losses (its whole planned schedule stays
in the table, as it would mid-run), fit the law on that prefix alone (without a prior, and with
the decay response held at a prior: `CurvePrior`), and on the prefix plus the model's eight
other complete runs, and forecast the run's final logged loss with a 90% interval. Beside it:
persistence (the last logged loss) and a finals-only power law in steps through the other runs'
final losses (what a final-loss-only fit can say).

The interval's calibration factor and horizon are chosen here on the 25M curves (the narrowest
median interval whose pooled coverage reaches 90%) and reported on 100M and 400M; so are the
prior's spread of log B and its widening (on 25M each run's prior is fitted on the other eight
25M runs; on 100M and 400M the bundled prior, fitted on all nine 25M runs, is used). Writes
docs/curves_backtests.csv and prints markdown tables.

    python benchmarks/curves_midrun_backtest.py [--shared ../shared] [--sizes 25M 100M 400M]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

from lmforecast.curves import CurveLaw, read_curves
from lmforecast.curves.forecast import WIDE
from lmforecast.curves.model import CALIBRATION, HORIZON
from lmforecast.curves.mpl_data import PROTOCOL_FIT, SCHEDULES, read_mpl_size
from lmforecast.curves.prior import BUNDLED, CurvePrior
from lmforecast.errors import InputError

REPO = Path(__file__).resolve().parents[1]
FRACTIONS = (0.10, 0.25, 0.50)
CHOOSE_ON = "25M"
SPREADS = (0.0, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 0.8)  # candidate log-B spreads of the prior
WIDENS = (1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0)  # candidate factors on its forecasts' half-widths
WITH_PRIOR = "alone, with prior"


def finals_only(others: pd.DataFrame, final_step: float) -> float:
    """L0 + A T^-alpha through the other runs' final losses (schedule-unaware)."""
    rows = []
    for _, r in others.groupby("run", sort=False):
        r = r.copy()
        last = r["loss"].last_valid_index()
        r.loc[r.index != last, "loss"] = np.nan
        rows.append(r)
    est = CurveLaw("power", n_boot=0).fit(pd.concat(rows))
    sched = pd.DataFrame({"run": "x", "step": [0.0, final_step], "lr": [0.0, 1.0]})
    return float(est.predict(sched)[-1])


def cut(table, run, frac):
    """The run's rows, its logged rows' index, and the number kept."""
    rows = table[table["run"] == run]
    idx = rows.index[rows["loss"].notna() & (rows["step"] > 2160)]
    return rows, idx, max(3, int(round(frac * len(idx))))


def one(table, run, frac, with_others, n_boot, prior=None):
    """The final-loss forecast of `run` from its first `frac`: with the other runs, alone, or
    alone with `prior` (``with_others`` is then `WITH_PRIOR`)."""
    rows, idx, k = cut(table, run, frac)
    cut_step = rows.loc[idx[k - 1], "step"]
    final_step = rows.loc[idx[-1], "step"]
    part = rows.assign(loss=np.where(rows["step"] <= cut_step, rows["loss"], np.nan))
    fit_table = pd.concat([table[table["run"] != run], part]) if with_others is True else part
    est = CurveLaw(n_boot=n_boot, calibration=1.0, horizon=0.0, prior=prior).fit(fit_table)
    sched = rows[rows["step"] <= final_step][["run", "step", "lr"]]
    r = est.forecast(sched, final=True).table.iloc[-1]
    return {"run": run, "fraction": frac, "with_others": with_others, "cut_step": cut_step,
            "final_step": final_step, "actual": rows.loc[idx[-1], "loss"],
            "forecast": r["loss"], "lo": r["lo"], "hi": r["hi"],
            "persistence": rows.loc[idx[k - 1], "loss"],
            "finals_only": finals_only(table[table["run"] != run], final_step)}  # fmt: skip


def calibrated(df, k, h):
    """lo, hi and the identified mask with factor `k` and horizon `h` applied to the raw
    (k = 1, h = 0) intervals, as `CurveLaw` applies them."""
    far = np.log(np.maximum(df["final_step"] / df["cut_step"], 1.0))
    lo = df["forecast"] * np.exp(k * np.log(df["lo"] / df["forecast"]) - h * far)
    hi = df["forecast"] * np.exp(k * np.log(df["hi"] / df["forecast"]) + h * far)
    return lo, hi, df["lo"].notna() & (hi <= WIDE * lo)


def coverage(df, k, h):
    """Pooled coverage, median half-width (relative) and mean error over identified intervals."""
    lo, hi, ok = calibrated(df, k, h)
    if not ok.any():
        return np.nan, np.nan, np.nan
    cov = ((lo <= df["actual"]) & (df["actual"] <= hi))[ok]
    half = ((hi - lo) / 2 / df["actual"])[ok]
    return float(cov.mean()), float(half.median()), float(df["err_forecast"][ok].mean())


def choose(df):
    """(k, h) on the CHOOSE_ON size: the narrowest median interval with coverage >= 90%."""
    best = None
    for k in np.arange(0.5, 6.01, 0.25):
        for h in np.arange(0.0, 0.0301, 0.001):
            cov, half, _ = coverage(df, k, h)
            if cov >= 0.9 and (best is None or half < best[0]):
                best = (half, round(float(k), 2), round(float(h), 4))
    return best[1:] if best else (6.0, 0.03)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shared", type=Path, default=REPO.parent / "shared")
    ap.add_argument("--sizes", nargs="+", default=["25M", "100M", "400M"])
    ap.add_argument("--runs", nargs="+", default=list(SCHEDULES))
    ap.add_argument("--boot", type=int, default=100)
    ap.add_argument("--out", type=Path, default=REPO / "docs" / "curves_backtests.csv")
    ap.add_argument("--from-csv", type=Path, help="recompute the tables from a written CSV")
    ap.add_argument(
        "--prior-only",
        action="store_true",
        help="recompute only the 'alone, with prior' rows of --from-csv",
    )
    a = ap.parse_args(argv)
    folder = a.shared / "data" / "curves" / "mpl"
    t0 = time.perf_counter()
    if a.from_csv:
        df = pd.read_csv(a.from_csv)
        if a.prior_only:
            df = df[df["with_others"] != WITH_PRIOR]
            df = pd.concat([df, pd.DataFrame(prior_records(folder, a.sizes, a.runs, a.boot))])
    else:
        df = pd.DataFrame(records(folder, a.sizes, a.runs, a.boot)
                          + prior_records(folder, a.sizes, a.runs, a.boot))  # fmt: skip
    order = {s: i for i, s in enumerate(a.sizes)}
    df = df.sort_values("size", key=lambda c: c.map(order), kind="stable")
    for c in ("forecast", "persistence", "finals_only"):
        df[f"err_{c}"] = (df[c] / df["actual"] - 1).abs()
    choose_on = df[(df["size"] == CHOOSE_ON) & (df["with_others"] != WITH_PRIOR)]
    k, h = choose(choose_on)
    print(f"chosen on {CHOOSE_ON}: calibration factor {k:.2f}, horizon {h:.4f} per unit of "
          f"ln(final step / last logged step) (raw coverage there "
          f"{coverage(choose_on, 1.0, 0.0)[0]:.0%})")  # fmt: skip
    prior_rows = df["with_others"] == WITH_PRIOR
    df["calibration"] = np.where(prior_rows, CALIBRATION * df.get("widen", 1.0), k)
    df["horizon"] = np.where(prior_rows, HORIZON, h)
    if not a.from_csv or a.prior_only:
        df.round(6).to_csv(a.out, index=False)
        print(f"wrote {a.out} ({len(df)} rows) in {time.perf_counter() - t0:.0f} s")
    print("\n| size | forecast | kept | forecasts | identified | mean err ours | "
          "mean err persistence | mean err finals-only | coverage 90% | median half-width "
          "/ mean err |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|---|")
    for (size, wo, frac), g in df.groupby(["size", "with_others", "fraction"], sort=False):
        cov, half, err_ok = coverage(g, g["calibration"], g["horizon"])
        n_ok = int(calibrated(g, g["calibration"], g["horizon"])[2].sum())
        what = {"True": "mid-run, with the other runs", "False": "mid-run, alone, no prior",
                WITH_PRIOR: "mid-run, alone, with prior"}.get(str(wo), str(wo))  # fmt: skip
        print(f"| {size} | {what} | {frac:.0%} | {len(g)} | {n_ok} | "
              f"{g['err_forecast'].mean():.3%} | {g['err_persistence'].mean():.3%} | "
              f"{g['err_finals_only'].mean():.3%} | {cov:.0%} | {half / err_ok:.2f} |")  # fmt: skip
    rep = df[df["size"] != CHOOSE_ON]
    for name, sub in (("reported sizes, with the other runs / alone / new schedule",
                       rep[rep["with_others"] != WITH_PRIOR]),
                      ("reported sizes, alone with prior", rep[rep["with_others"] == WITH_PRIOR]),
                      ("every size", df)):  # fmt: skip
        cov, half, err_ok = coverage(sub, sub["calibration"], sub["horizon"])
        n_ok = int(calibrated(sub, sub["calibration"], sub["horizon"])[2].sum())
        print(f"\npooled over the {name}: coverage {cov:.0%} of {n_ok} identified intervals, "
              f"median half-width / mean error {half / err_ok:.2f}")  # fmt: skip


def loo_prior(table, run, spread):
    """The prior from a fit of the model's other runs (the run itself left out): how the
    spread is chosen on the 25M curves without the held-out run's own curve in its prior."""
    est = CurveLaw(n_boot=0, prior=None).fit(table[table["run"] != run])
    return CurvePrior.from_fit(est, {"B": spread}, f"the other runs of {run.split('/')[0]}")


def prior_records(folder, sizes, runs, n_boot):
    """The "alone, with prior" rows: on CHOOSE_ON every candidate spread with a leave-one-out
    prior (each run's prior fitted on the other eight runs of its size), the spread and the
    widening chosen there; on the other sizes the bundled prior (fitted on the 25M curves) with
    that spread. Fitted with widen 1: the widening is applied as the `calibration` column."""
    recs, spread, widen = [], None, None
    for size in sizes:
        table = read_curves(read_mpl_size(folder, size))
        cands = SPREADS if size == CHOOSE_ON else (spread,)
        rows = []
        for sched in runs:
            run = f"{size}/{sched}"
            base = loo_prior(table, run, 0.0) if size == CHOOSE_ON else BUNDLED["mpl-25m"]
            for s in cands:
                pr = CurvePrior(base.values, {"B": s}, base.source)
                for frac in FRACTIONS:
                    rec = one(table, run, frac, WITH_PRIOR, n_boot, pr)
                    rows.append({**rec, "size": size, "spread": s})
        df = pd.DataFrame(rows)
        if size == CHOOSE_ON:
            spread, widen = choose_spread(df)
            df = df[df["spread"] == spread]
        recs += df.assign(widen=widen).to_dict("records")
    return recs


def choose_spread(df):
    """(spread, widen): the narrowest median 90% interval whose pooled coverage reaches 90%
    (with CurveLaw's calibration and horizon, as it applies them)."""
    df = df.assign(err_forecast=(df["forecast"] / df["actual"] - 1).abs())
    print(f"chosen on {CHOOSE_ON}: spread of log B | widen | coverage | median half-width | "
          "mean err")  # fmt: skip
    best = None
    for s, g in df.groupby("spread"):
        for w in WIDENS:
            cov, half, err = coverage(g, CALIBRATION * w, HORIZON)
            print(f"{s:.2f} | {w:.2f} | {cov:.0%} | {half:.3%} | {err:.3%}")
            if cov >= 0.9 and (best is None or half < best[0]):
                best = (half, float(s), w)
    return (max(SPREADS), max(WIDENS)) if best is None else best[1:]


def records(folder, sizes, runs, n_boot):
    recs = []
    for size in sizes:
        table = read_curves(read_mpl_size(folder, size))
        for sched in runs:
            for frac in FRACTIONS:
                for with_others in (True, False):
                    try:
                        rec = one(table, f"{size}/{sched}", frac, with_others, n_boot)
                    except InputError as exc:  # too few points to fit alone
                        rec = {"run": f"{size}/{sched}", "fraction": frac,
                               "with_others": with_others, "error": str(exc)}  # fmt: skip
                    rec["size"] = size
                    recs.append(rec)
        recs += protocol(table, size, n_boot)
    return recs


def protocol(table, size, n_boot):
    """New schedules (the authors' protocol): fit their three runs, forecast the final loss of
    each of the six others as a run never seen."""
    fit_runs = [f"{size}/{r}" for r in PROTOCOL_FIT]
    est = CurveLaw(n_boot=n_boot, calibration=1.0, horizon=0.0)
    est.fit(table[table["run"].isin(fit_runs)])
    max_step = max(table.loc[table["run"] == r, "step"].max() for r in fit_runs)
    out = []
    for run, rows in table[~table["run"].isin(fit_runs)].groupby("run", sort=False):
        last = rows["loss"].last_valid_index()
        sched = rows.loc[:last, ["run", "step", "lr"]].assign(run=f"new {run}")
        r = est.forecast(sched, final=True).table.iloc[-1]
        out.append({"run": run, "fraction": 1.0, "with_others": "new schedule",
                    "cut_step": max_step, "final_step": rows.loc[last, "step"],
                    "actual": rows.loc[last, "loss"], "forecast": r["loss"], "lo": r["lo"],
                    "hi": r["hi"], "persistence": np.nan,
                    "finals_only": finals_only(table[table["run"] != run], rows.loc[last, "step"]),
                    "size": size})  # fmt: skip
    return out


if __name__ == "__main__":
    main()
