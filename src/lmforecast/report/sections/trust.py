"""Report section: how far to trust the supervised forecasts (rolling-origin backtests on the
bundled zoo runs, calibrated intervals against naive baselines; docs/trust.md)."""

from __future__ import annotations

import numpy as np

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
    from ...backtest import PersistenceBaseline, PowerLawBaseline, SupervisedAdapter, rolling_origin
    from ...fitting.threads import single_blas_thread
    from ...plots import backtest as plots
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
        kw = {"grid": _QUICK_GRID, "n_polish": 12, "bootstrap": 10, "n_cutoffs": 2}
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
        "coverage": float(m["covered"].mean()),
        "median_rel_halfwidth": float(np.median(m["rel_halfwidth"])),
        "median_abs_rel_error": {
            name: float(np.median(np.abs(f[f["method"] == name]["rel_error"])))
            for name in bt.methods
        },
    }
    sec.text(
        f"Coverage of the {form} 90% intervals: {100 * sec.numbers['coverage']:.0f}% of "
        f"{len(m)} forecasts, median relative half-width "
        f"{100 * sec.numbers['median_rel_halfwidth']:.1f}%. With so few runs (13, 5 parameters) "
        "every number here is noisy; docs/trust.md has the larger Pythia backtests."
    )
    return sec
