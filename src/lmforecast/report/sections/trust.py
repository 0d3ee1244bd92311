"""Report section: how far to trust the supervised forecasts (rolling-origin backtests on the
bundled zoo runs, calibrated intervals against naive baselines; docs/trust.md)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...errors import InputError
from ..builder import ReportContext, Section

# a 12-start grid (all polished) keeps the quick section to seconds (it runs in CI); the full
# report uses the default 4,500-start grid
_QUICK_GRID = {
    "log_A": np.array([0.0, 5.0, 10.0]),
    "log_B": np.array([0.0, 5.0]),
    "log_E": np.array([-1.0, 0.5]),
    "alpha": np.array([0.3]),
    "beta": np.array([0.3]),
}


def build_section(ctx: ReportContext) -> Section:
    from ...backtest import PersistenceBaseline, PowerLawBaseline, rolling_origin
    from ...fitting.threads import single_blas_thread
    from ...plots import backtest as plots
    from ...supervised.adapter import SupervisedAdapter
    from ...zoo import load_zoo

    sec = Section("trust", "How far to trust these forecasts")
    try:
        runs = load_zoo().runs
    except InputError as exc:
        sec.text(f"No zoo tables are bundled with this installation ({exc}).")
        return sec
    runs = runs[runs["kind"] == "supervised"][["N", "D", "C", "loss"]].reset_index(drop=True)
    form = "chinchilla"
    if ctx.quick:
        kw = {"grid": _QUICK_GRID, "n_polish": 12, "bootstrap": 10}
    else:
        kw = {}
    adapters = [
        SupervisedAdapter(form, seed=ctx.seed, **kw),
        PersistenceBaseline(),
        PowerLawBaseline(),
    ]
    import warnings

    with single_blas_thread(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bt = rolling_origin(runs, adapters, n_cutoffs=2 if ctx.quick else 3, min_train=8)
    sec.text(
        f"Rolling-origin backtest on the zoo's {len(runs)} really trained supervised runs: fit "
        f"the {form} law (with its default calibrated 90% intervals) on every run at or below a "
        f"compute cutoff, forecast every run above it, for {len(bt.cutoffs)} cutoffs; beside it, "
        "two naive baselines (persistence: the loss of the largest fitted run; a 1-D power law "
        "L = E + A C^-a). Relative error is (forecast - truth)/truth; the extrapolation ratio is "
        "the forecast's compute over the largest fitted compute. Each interval is calibrated by "
        "an inner backtest within that cutoff's runs only."
        + (" (Quick mode: a 12-start grid, 10 resamples, 2 inner cutoffs.)" if ctx.quick else "")
    )
    table = bt.summary_table()
    sec.table(table, "Backtest by method and extrapolation ratio", "{:.3g}")
    sec.figure(plots.calibration(bt), "Forecast errors with their 90% intervals; coverage by bin.")
    f = bt.forecasts
    m = f[f["method"] == adapters[0].name]
    sec.numbers = {
        "form": form,
        "n_runs": len(runs),
        "cutoffs": bt.cutoffs,
        "level": bt.level,
        "summary": table.to_dict(orient="records"),
        "coverage": float(m["covered"].mean()),  # non-finite intervals count as misses
        "non_finite": int((~m["finite"]).sum()),
        "median_rel_halfwidth": float(np.nanmedian(m["rel_halfwidth"])),
        "median_abs_rel_error": {
            name: float(np.median(np.abs(f[f["method"] == name]["rel_error"])))
            for name in bt.methods
        },
    }
    sec.text(
        f"Coverage of the {form} 90% intervals: {100 * sec.numbers['coverage']:.0f}% of "
        f"{len(m)} forecasts, median relative half-width "
        f"{100 * sec.numbers['median_rel_halfwidth']:.1f}%. With so few runs (13, 5 parameters) "
        "every number here is noisy; the Pythia backtest below is larger."
    )
    _suites_table(sec)
    if not ctx.quick:
        _pythia_split(sec, ctx)
    return sec


def _suites_table(sec: Section) -> None:
    """The real-suite leave-one-suite-out table, as stored in the package by
    benchmarks/trust_suites.py (the suites themselves are not bundled)."""
    from ...supervised.trust_table import COLS, load_summary

    summ = load_summary()
    t = pd.DataFrame(summ["table"]).rename(columns=COLS)
    sec.text(
        "Five real suites, leave-one-suite-out (STORED numbers, computed by "
        "benchmarks/trust_suites.py from Pythia, datablations, Gemstones, Porian and the zoo; "
        "this report does not recompute them). Each suite is scored with the interval scale k "
        "chosen on the other four; splits: largest size out, two largest sizes out, top 20% "
        "compute out, fitting only rows below the cut. Beside the default: the 1-D compute law, "
        f"chinchilla and the over-training law. Pooled coverage: {summ['pooled']['coverage']:.2f}"
        " of nominal 0.90, each suite weighing equally (within a suite each split equally, "
        "and each forecast within a split; docs/trust.md says what to expect)."
    )
    sec.table(t, "Real suites, leave-one-suite-out (stored)", "{:.3g}", na_rep="-")
    sec.numbers["suites_loso"] = summ


# the default first: with the 3 fitted sizes `auto` is chinchilla (no stack: an inner cut
# needs 3 sizes below it); chinchilla-gamma beside it
PYTHIA_FORMS = ("auto", "chinchilla-gamma")


def pythia_split_table(seed: int = 0) -> pd.DataFrame:
    """Fit on the Pythia models below 1B parameters, forecast 1B, 1.4B and 2.8B at every
    checkpoint from step 13,000 (bundled harness table, loss = ln LAMBADA perplexity), both
    suites: per method the median and worst relative error, and interval coverage and width."""
    import warnings

    from ...backtest import PersistenceBaseline, PowerLawBaseline, forecast_split
    from ...backtest.datasets import pythia_lambada_runs
    from ...fitting.threads import single_blas_thread
    from ...supervised.adapter import SupervisedAdapter

    rows = []
    for deduped in (False, True):
        df = pythia_lambada_runs(deduped=deduped)
        small, big = df[df["N"] < 1e9], df[df["N"] >= 1e9]
        adapters = [SupervisedAdapter(f, seed=seed) for f in PYTHIA_FORMS]
        for ad in adapters + [PowerLawBaseline(), PersistenceBaseline()]:
            with single_blas_thread(), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                f, _ = forecast_split(ad, small, big, 0.9)
            rel = f["rel_error"].to_numpy()
            has_iv = bool(f["finite"].any())  # persistence has no interval
            rows.append(
                {
                    "suite": "deduped" if deduped else "standard",
                    "method": ad.name + (" (default)" if ad.name.endswith(PYTHIA_FORMS[0]) else ""),
                    "forecasts": len(f),
                    "median |rel. error| %": 100 * float(np.median(np.abs(rel))),
                    "worst rel. error %": 100 * float(rel[np.argmax(np.abs(rel))]),
                    "coverage %": 100 * float(f["covered"].mean()) if has_iv else np.nan,
                    "median rel. half-width %": 100 * float(f["rel_halfwidth"].median())
                    if has_iv
                    else np.nan,
                }
            )
    return pd.DataFrame(rows)


def _pythia_split(sec: Section, ctx: ReportContext) -> None:
    table = pythia_split_table(ctx.seed)
    sec.text(
        "Real models beyond the fitted sizes: the bundled Pythia harness outputs (Biderman et "
        "al. 2023), with ln(LAMBADA perplexity) as a proxy for the loss. Each law is fitted on "
        "the 70M, 160M and 410M models (14 checkpoints each, from step 13,000) and forecasts "
        "the 1B, 1.4B and 2.8B models at the same checkpoints, with default calibrated 90% "
        "intervals. The naive baselines are a 1-D power law in compute and persistence. "
        + _pythia_verdict(table)
        + " Compare forms with `lmforecast backtest` on your own runs before trusting one "
        "(docs/trust.md)."
    )
    sec.table(
        table,
        "Pythia: fit < 1B, forecast 1B-2.8B (42 forecasts per suite)",
        "{:.3g}",
        na_rep="no interval",
    )
    sec.numbers["pythia_split"] = table.to_dict(orient="records")


def _pythia_verdict(table: pd.DataFrame) -> str:
    """One sentence per suite: the default's median error and coverage, and the most accurate
    method (which may be a baseline)."""
    err, out = "median |rel. error| %", []
    for suite, g in table.groupby("suite", sort=False):
        d = g[g["method"].str.endswith("(default)")].iloc[0]
        best = g.loc[g[err].idxmin()]
        s = (
            f"{suite}: the default form's median error is {d[err]:.1f}% with "
            f"{d['coverage %']:.0f}% of its 90% intervals covering"
        )
        if best["method"] != d["method"]:
            s += f"; the most accurate is {best['method']} ({best[err]:.1f}%)"
        out.append(s)
    return "; ".join(out) + "."
