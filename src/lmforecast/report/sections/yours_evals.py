"""The "Your data" section's part for ``--evals``: downstream forecasts of the user's largest
model, checked against its own scores.

The user's tidy evaluation table (`data.evals` format: model, task, metric, value, params, and
tokens or flops) is read as `lmforecast downstream backtest --evals` reads it; one family of a
model and its deduplicated twin is kept (`data.evals.views.family_models`, as `downstream fit`
does). The largest model (by parameters) is the target, the others are fitted, and the default
ensemble (docs/downstream.md) forecasts each task's final score beside the FP and persistence
baselines (`downstream.backtest.backtest`), with its 90% intervals. A table the backtest
refuses is shown with the reason, not dropped.
"""

from __future__ import annotations

import warnings
from pathlib import Path

from ...errors import InputError
from ..builder import ReportContext, Section

LEVEL = 0.9


def evals_part(sec: Section, path: str, ctx: ReportContext) -> None:
    from ...data.evals.views import family_models
    from ...data.io import read_table
    from ...downstream.backtest import TASKS7, backtest

    sec.html("<h3>Your evaluations: the largest model's scores forecast from the others</h3>")
    try:
        evals = read_table(path)
        missing = [c for c in ("model", "task", "value", "params") if c not in evals.columns]
        if missing:
            raise InputError(
                f"missing column(s) {', '.join(map(repr, missing))} (found "
                f"{', '.join(map(str, evals.columns))})"
            )
        names, note = family_models(evals["model"].astype(str).unique())
        size = evals.groupby(evals["model"].astype(str))["params"].max()
        order = sorted(names, key=lambda m: float(size[m]))
        if len(order) < 3:
            raise InputError(
                f"{len(order)} model(s); a forecast checked on the largest needs "
                "at least 3 (2 fitted)"
            )
        target, fit = order[-1], order[:-1]
        present = list(dict.fromkeys(evals["task"].astype(str)))
        tasks = [t for t in TASKS7 if t in present] or [
            t for t in present if not t.startswith("lambada")
        ]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            bt = backtest(
                evals,
                fit_models=fit,
                target_model=target,
                tasks=tasks,
                methods=("ensemble",),
                level=LEVEL,
                bootstrap=20 if ctx.quick else 50,
                seed=ctx.seed,
                interval_methods=("ensemble",),
            )
    except InputError as exc:
        sec.text(f"Your evaluations ({path}) could not be forecast: {exc}")
        sec.numbers["evals"] = {"path": path, "refused": str(exc)}
        return
    mae = bt.mae().iloc[0]
    cov = bt.coverage()
    coverage = float(cov["ensemble"]) if "ensemble" in cov.index else None
    err = bt.errors().copy()
    err.loc["MAE"] = mae
    base = "persistence"
    sec.text(
        f"From {path}: the default downstream ensemble fitted on {len(fit)} models "
        f"({', '.join(fit)}) forecasts the final score of {target} on {len(err) - 1} task(s). "
        f"Mean absolute error {mae['ensemble']:.2f} points against persistence's "
        f"{mae[base]:.2f} (the second-largest model's own score) and FP's {mae['fp']:.2f}"
        + (
            f"; {100 * coverage:.0f}% of the scores inside their {100 * LEVEL:g}% intervals"
            if coverage is not None
            else ""
        )
        + "."
        + (f" ({note}.)" if note else "")
    )
    sec.table(
        err.reset_index(),
        f"Your evaluations: absolute error (points) of {target}'s forecast score per task",
        "{:.3g}",
        na_rep="refused",
    )
    sec.numbers["evals"] = {
        "path": path,
        "target": target,
        "fit_models": fit,
        "mae": mae.to_dict(),
        "coverage": coverage,
        "errors": err.reset_index().to_dict(orient="records"),
    }
    sec.verdict(
        "downstream ensemble",
        f"your evaluations ({Path(path).name}): {target} from {len(fit)} smaller models",
        "MAE (score points)",
        mae["ensemble"],
        base,
        mae[base],
        coverage,
        n=len(err) - 1,
    )
