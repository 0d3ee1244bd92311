"""Report section "Your data": forecasts of the user's own runs, checked on runs held out.

Built only when the report is given the user's files (`lmforecast report --runs my_runs.csv`,
`--fit fit.json`; `report.builder.USER_INPUTS`):

- ``--runs``: the default supervised fit of `lmforecast supervised fit` (Eq. 1 family, its
  calibrated 90% forecast interval, docs/trust.md) on every run, and a held-out check: the runs
  above the 80th percentile of compute C = 6ND are held out, the same law fitted on the others
  forecasts each with its interval, beside the backtest's naive baselines (persistence: the
  largest fitted run's loss; a 1-D power law in compute). Errors are (forecast - truth)/truth.
- ``--fit``: the saved fit's summary (the planner section then plans with it).
- ``--evals``: the largest model's downstream scores forecast from the others
  (`report.sections.yours_evals`).

The section only lays the numbers out; the fits are `SupervisedScalingLaw` and the backtest
adapters (`supervised.adapter`).
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from ...errors import InputError
from ..builder import ReportContext, Section

HELD_OUT_SHARE = 0.2  # the largest-compute fifth of the runs
MIN_FIT = 8  # runs left to fit on (5 parameters and room for the interval's inner backtest)
LEVEL = 0.9


def read_runs(path: str) -> pd.DataFrame:
    """The user's runs with N, D (D from C = 6ND where only C is given), C and loss."""
    from ...data.io import read_table
    from ...supervised.point_adapter import _n_d

    if not Path(path).exists():
        raise InputError(f"--runs {path}: no such file")
    df = read_table(path)
    if "loss" not in df.columns:
        raise InputError(f"--runs {path}: missing column 'loss' (found {', '.join(df.columns)})")
    try:
        N, D = _n_d(df)
    except InputError as exc:
        raise InputError(f"--runs {path}: {exc}") from None
    out = pd.DataFrame({"N": N, "D": D, "loss": pd.to_numeric(df["loss"], errors="coerce")})
    bad = ~(np.isfinite(out.to_numpy(float)).all(axis=1) & (out.to_numpy(float) > 0).all(axis=1))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(
            f"--runs {path}: row {i + 1} has a missing, non-numeric or non-positive N, D or loss"
        )
    out["C"] = 6.0 * out["N"] * out["D"]
    return out


def held_out_mask(C: np.ndarray) -> np.ndarray:
    """The runs held out: the largest compute, at least `HELD_OUT_SHARE` of them (and one); runs
    at one compute (seed replicates) fall on one side of the cut together."""
    want = max(1, int(round(HELD_OUT_SHARE * len(C))))
    for c in np.unique(C)[::-1]:
        held = C >= c
        if held.sum() >= want:
            return held
    return np.ones(len(C), bool)


def held_out_check(runs: pd.DataFrame, seed: int, quick: bool) -> dict | None:
    """Fit below the compute cut, forecast the runs above it: per-run table and summary."""
    from ...backtest import PersistenceBaseline, PowerLawBaseline, forecast_split
    from ...fitting.threads import single_blas_thread
    from ...supervised.adapter import SupervisedAdapter

    held = held_out_mask(runs["C"].to_numpy(float))
    n_out = int(held.sum())
    if len(runs) - n_out < MIN_FIT:
        return None
    test = runs[held].reset_index(drop=True)
    train = runs[~held].reset_index(drop=True)
    cut = float(train["C"].max())
    kw = {"bootstrap": 10} if quick else {}
    table = test[["N", "D", "C", "loss"]].copy()
    errors = {}
    summary = {}
    for ad in (
        SupervisedAdapter("auto", seed=seed, **kw),
        PowerLawBaseline(),
        PersistenceBaseline(),
    ):
        with single_blas_thread(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            f, fitted = forecast_split(ad, train, test, LEVEL)
        rel = f["rel_error"].to_numpy()
        errors[ad.name] = float(np.mean(np.abs(rel)))
        if ad.name.startswith("supervised"):
            table["forecast"], table["lower"], table["upper"] = (
                f["forecast"],
                f["lower"],
                f["upper"],
            )
            table["rel. error %"] = 100 * rel
            table["covered"] = f["covered"]
            model = fitted.est
            summary = {
                "method": ad.name,
                "mean_abs_rel_error": errors[ad.name],
                "max_abs_rel_error": float(np.max(np.abs(rel))),
                "coverage": float(np.mean(table["covered"])),
            }
    base = min((k for k in errors if k.startswith("baseline")), key=errors.get)
    return {
        "n_fit": len(train),
        "n_heldout": n_out,
        "cut": cut,
        "level": LEVEL,
        **summary,
        "baseline": base,
        "baseline_error": errors[base],
        "errors": errors,
        "table": table,
        "model": model,
    }


def build_section(ctx: ReportContext) -> Section | None:
    runs_path, fit_path, evals_path = ctx.input("runs"), ctx.input("fit"), ctx.input("evals")
    if runs_path is None and fit_path is None and evals_path is None:
        return None  # nothing of the user's to show
    sec = Section("yours", "Your data: forecasts checked against your own results")
    if evals_path is not None:
        from .yours_evals import evals_part

        evals_part(sec, evals_path, ctx)
        if runs_path is None and fit_path is None:
            return sec
    if fit_path is not None:
        from ...supervised import SupervisedScalingLaw

        law = SupervisedScalingLaw.load(fit_path)
        sec.text(f"Your saved fit ({fit_path}); the planner below plans with it.")
        sec.pre(law.summary())
        sec.numbers["fit"] = {"path": fit_path, "params": law.params_}
    if runs_path is None:
        sec.text("No runs given (--runs), so no held-out check of this fit.")
        return sec
    runs = read_runs(runs_path)
    sec.numbers["runs"] = {"path": runs_path, "n_runs": len(runs)}
    chk = held_out_check(runs, ctx.seed, ctx.quick)
    if chk is None:
        sec.text(
            f"{len(runs)} runs in {runs_path}: too few for a held-out check (holding out the "
            f"largest {100 * HELD_OUT_SHARE:.0f}% by compute must leave {MIN_FIT} to fit)."
        )
    else:
        t, model = chk.pop("table"), chk.pop("model")
        sec.text(
            f"Held-out check on your {len(runs)} runs ({runs_path}): the default supervised law "
            f"(`lmforecast supervised fit`) fitted on the {chk['n_fit']} runs up to C = "
            f"{chk['cut']:.3g} FLOPs forecasts the {chk['n_heldout']} largest-compute runs. "
            f"Mean |error| {100 * chk['mean_abs_rel_error']:.2f}% (worst "
            f"{100 * chk['max_abs_rel_error']:.2f}%); {100 * chk['coverage']:.0f}% of the "
            f"truths inside their {100 * LEVEL:g}% intervals. The best naive baseline, "
            f"{chk['baseline']}, is off by {100 * chk['baseline_error']:.2f}% on average."
        )
        sec.table(t, f"Your held-out runs: forecasts with {100 * LEVEL:g}% intervals")
        sec.numbers["held_out"] = {**chk, "runs": t.to_dict(orient="records")}
        sec.verdict(
            f"supervised law ({chk['method'].split(':', 1)[1]})",
            f"your runs ({Path(runs_path).name}): fitted on {chk['n_fit']}, "
            f"the {chk['n_heldout']} largest held out",
            "mean |rel error| of held-out loss",
            chk["mean_abs_rel_error"],
            chk["baseline"].split(":", 1)[1],
            chk["baseline_error"],
            chk["coverage"],
            n=chk["n_heldout"],
        )
        from ...plots import supervised as plots

        held = held_out_mask(runs["C"].to_numpy(float))
        sec.figure(
            plots.parity(model, runs, held),
            "Your runs: forecast of the law fitted below the cut against the observed "
            "loss; squares are the held-out runs it never saw.",
        )
    if fit_path is None:
        from ...supervised import SupervisedScalingLaw

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            law = SupervisedScalingLaw(  # seed replicates averaged, as in the held-out check
                bootstrap=10 if ctx.quick else None, seed=ctx.seed, n_jobs=1, replicates="mean"
            ).fit(runs)
        sec.text(
            f"The default fit on all {len(runs)} runs (what `lmforecast supervised fit "
            f"--runs {runs_path} --replicates mean` prints):"
        )
        sec.pre(law.summary())
        sec.numbers["fit"] = {"form": law.result_.meta.get("form"), "params": law.params_}
    return sec
