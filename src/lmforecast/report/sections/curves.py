"""Report section: loss curves under learning-rate schedules (`lmforecast.curves`,
docs/curves.md). The multi-power law (Luo et al. 2025 Eq. 7) is fitted to the bundled example
curves (simulated from known parameters; `scripts/make_curves_examples.py`), or to the user's
curves table (``report --curves PATH``); the logged losses are drawn with the forecast curves and
their bands (a running run continued along its planned schedule, a schedule never run forecast
from the model's shared parameters), the schedules are compared for the example's step budget,
and the MPL protocol and mid-run backtest tables are shown where `docs/` holds them (they are
produced by `benchmarks/curves_mpl_protocol.py` and the core's backtest script, never here)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ...curves import CurveLaw, plan_schedules, read_curves, read_schedule, simulate_curves
from ...examples import path
from ...plots.curves import plot_curves, plot_schedules
from ..builder import ReportContext, Section

DOCS = Path(__file__).resolve().parents[4] / "docs"
#: the multi-power-law parameters the bundled example curves are simulated from (the law fitted
#: to the MPL authors' 25M-parameter curves, rounded; scripts/make_curves_examples.py)
EXAMPLE_TRUTH = {
    "L0": 3.15,
    "A": 0.52,
    "alpha": 0.5,
    "B": 450.0,
    "C": 3.4e-4,
    "beta": 0.36,
    "gamma": 1.6,
}
CALIBRATED_ON = "25M"  # the size the backtest script chooses the interval factor on
TABLES = {
    "curves_protocol.csv": "The MPL authors' protocol on their shared curves: fit cosine_24000, "
    "constant_24000 and wsdcon_9 of one size, forecast the other six schedules (mean and worst "
    "relative error over every logged point, beside the paper's)",
    "curves_backtests.csv": "Mid-run backtests on the shared curves: fit the first 10%, 25%, 50% "
    "of a run (with and without the model's other complete runs), forecast its final loss; "
    "persistence and a finals-only law beside it",
}


def _schedule(table: pd.DataFrame, extra: pd.DataFrame | None) -> pd.DataFrame:
    """Every row of the fitted table as a schedule (each run continued along its own rows),
    plus the runs of `extra` that the table does not hold."""
    cols = ["run", "step", "lr"] + [c for c in ("N",) if c in table.columns]
    sched = table[cols]
    if extra is not None:
        new = extra[~extra["run"].isin(set(table["run"]))]
        sched = pd.concat([sched, new[[c for c in cols if c in new.columns]]], ignore_index=True)
    return read_schedule(sched)


def _finals(table: pd.DataFrame, fc) -> pd.DataFrame:
    """One row per run: last logged step and loss, forecast final step, loss and interval."""
    rows = []
    ft = fc.table
    for run, g in ft.groupby("run", sort=False):
        logged = table[(table["run"] == run) & table["loss"].notna()]
        end = g.iloc[-1]
        rows.append(
            {
                "run": run,
                "logged to step": int(logged["step"].max()) if len(logged) else np.nan,
                "last logged loss": float(logged["loss"].iloc[-1]) if len(logged) else np.nan,
                "final step": int(end["step"]),
                "forecast": float(end["loss"]),
                "lo": float(end["lo"]),
                "hi": float(end["hi"]),
                "kind": "continued" if len(logged) else "new schedule (shared parameters)",
            }
        )
    return pd.DataFrame(rows)


def _true_final(sched: pd.DataFrame, run: str) -> float:
    """The noise-free loss of the example's law at the last step of `run`'s schedule."""
    rows = sched[sched["run"] == run]
    return float(simulate_curves(rows, EXAMPLE_TRUTH)["loss"].iloc[-1])


def _verdict(sec: Section, finals: pd.DataFrame) -> None:
    """The summary row: the running WSD run's final loss, forecast mid-run, against the truth
    the example was simulated from, beside persistence (its last logged loss)."""
    r = finals.set_index("run").loc["wsd_16k"]
    t = r["true final"]
    sec.verdict(
        "multi-power law, a running curve continued along its planned schedule",
        "bundled simulated curves (a 16,000-step WSD run logged to step 6,000)",
        "|forecast / true - 1| of the final loss",
        abs(r["forecast"] / t - 1),
        "persistence (last logged loss)",
        abs(r["last logged loss"] / t - 1),
        float(r["lo"] <= t <= r["hi"]) if np.isfinite([r["lo"], r["hi"]]).all() else None,
        n=1,
        simulated=True,
    )


def _backtests(sec: Section, df: pd.DataFrame) -> list[dict]:
    """The mid-run backtest table of docs/curves_backtests.csv summarised per size, with or
    without the model's other runs, and prefix fraction (intervals scaled by the calibration
    factor stored beside them), and the summary row on the sizes the factor was not chosen on."""
    k = df["calibration"].to_numpy(float) if "calibration" in df else 1.0
    ok = df["lo"].notna() & df["hi"].notna()
    lo = df["forecast"] * (df["lo"] / df["forecast"]) ** k
    hi = df["forecast"] * (df["hi"] / df["forecast"]) ** k
    df = df.assign(
        covered=((lo <= df["actual"]) & (df["actual"] <= hi)).where(ok),
        half=((hi - lo) / 2 / df["actual"]).where(ok),
    )
    t = (
        df.groupby(["size", "with_others", "fraction"], sort=False)
        .agg(
            forecasts=("run", "size"),
            identified=("covered", "count"),
            err_ours=("err_forecast", "mean"),
            err_persistence=("err_persistence", "mean"),
            err_finals_only=("err_finals_only", "mean"),
            coverage=("covered", "mean"),
            median_half_width=("half", "median"),
        )
        .reset_index()
    )
    sec.table(
        t,
        TABLES["curves_backtests.csv"] + " (mean relative errors of the final loss; "
        "coverage of the 90% intervals; from docs/curves_backtests.csv, written by "
        "benchmarks/curves_midrun_backtest.py)",
    )
    rep = df[(df["size"] != CALIBRATED_ON) & df["with_others"].astype(bool)]
    if len(rep):
        sec.verdict(
            "multi-power law, mid-run forecast of the final loss (with the model's other runs)",
            f"the MPL authors' shared curves, sizes other than {CALIBRATED_ON} "
            "(10%, 25%, 50% of each run logged)",
            "mean |forecast / actual - 1|",
            float(rep["err_forecast"].mean()),
            "persistence (last logged loss)",
            float(rep["err_persistence"].mean()),
            float(rep["covered"].mean()) if rep["covered"].notna().any() else None,
            n=len(rep),
        )
    return t.to_dict("records")


def build_section(ctx: ReportContext) -> Section:
    sec = Section("curves", "Loss curves under learning-rate schedules")
    user = ctx.input("curves") if hasattr(ctx, "input") else None
    source = user or "the bundled example curves"
    table = read_curves(user if user else path("curves/curves.csv"))
    extra = None if user else read_schedule(path("curves/schedule.csv"))
    est = CurveLaw("mpl", n_boot=50 if ctx.quick else 200, seed=ctx.seed).fit(table)
    sched = _schedule(table, extra)
    fc = est.forecast(sched, level=0.9)
    sec.text(
        f"The multi-power law (Luo et al. 2025, Eq. 7) fitted to every logged loss of {source} "
        f"({table['run'].nunique()} runs, {int(table['loss'].notna().sum())} logged losses); "
        "a run with logged losses is continued along its planned schedule with its own offset, "
        "a schedule never run is forecast from the parameters its model's runs share. Bands "
        "are 90% intervals from resampling whole runs and blocks within a run "
        "(docs/curves.md)."
        + (
            ""
            if user
            else " The example is simulated from known parameters with 0.2% AR(1) "
            "noise: constant, cosine and WSD runs of 8,000 steps, a WSD run of 16,000 steps "
            "logged to step 6,000, and a 16,000-step cosine schedule never run."
        )
    )
    sec.pre(est.summary())
    finals = _finals(table, fc)
    if not user:
        finals["true final"] = [_true_final(sched, r) for r in finals["run"]]
    sec.table(finals, "Final-step forecasts with their 90% intervals", na_rep="not identified")
    sec.figure(
        plot_curves(table, fc, schedule=sched, level=0.9),
        "Logged losses (dots) and forecast curves with 90% bands",
    )
    for note in fc.notes:
        sec.text(f"Note: {note}")
    numbers = {
        "source": str(source),
        "params": est.params_,
        "finals": finals.to_dict("records"),
        "notes": list(fc.notes),
    }
    if not user:
        _verdict(sec, finals)
    if "N" not in table.columns or table["N"].nunique() <= 1:  # one model: plan its schedules
        steps = int(fc.table["step"].max())
        plan = plan_schedules(est, steps, level=0.9)
        t = plan.table.assign(
            **{"within the interval of the best": plan.table["indistinguishable_from_best"]}
        )
        sec.table(
            t.drop(columns=["indistinguishable_from_best"]),
            f"Schedules of {steps:,} steps under the fitted law (final loss, 90% "
            "interval); the best WSD cooldown is scanned, the best monotone schedule "
            "optimised (`lmforecast curves plan`)",
            na_rep="—",
        )
        sec.text(plan.summary().splitlines()[-2] + "; " + plan.summary().splitlines()[-1])
        numbers["plan"] = plan.to_dict()
        lr = pd.concat([t.assign(run=k) for k, t in plan.lr_tables.items()], ignore_index=True)
        sec.figure(plot_schedules(lr), "The compared schedules (learning rate against step)")
    protocol = DOCS / "curves_protocol.csv"
    if protocol.is_file():
        sec.table(pd.read_csv(protocol), TABLES["curves_protocol.csv"])
        numbers["protocol"] = pd.read_csv(protocol).to_dict("records")
    backtests = DOCS / "curves_backtests.csv"
    if backtests.is_file():
        numbers["backtests"] = _backtests(sec, pd.read_csv(backtests))
    else:
        sec.text(
            "The protocol and mid-run backtest tables are in docs/curves.md "
            "(benchmarks/curves_mpl_protocol.py, benchmarks/curves_midrun_backtest.py)."
        )
    sec.numbers = numbers
    return sec
