"""What `osl fit` and `osl predict` print, built by the library (Ruan et al. 2024): the fit's
held-out forecasts with their intervals and the held-out check (MAE, coverage), forecasts of
models without the target, forecasts of a saved fit on new models scored against the table's
own target where it has one, a preregistered Table C.1 law's point forecasts (App. C.9), the
capability space alone (Sec. 3.2) and a V-optimal model subset (Sec. 5, Eq. 9). Forecasts,
intervals and errors are in points (0-100, `lmforecast.scores`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import InputError
from ..forecast import Answer
from .capability import CapabilitySpace, family_fits
from .data import (
    FAMILY,
    MODEL,
    check_metrics,
    column_scale,
    default_metrics,
    scale_target,
    to_fractions,
)
from .newmodels import forecast_saved_fit, forecast_without_target, heldout_check

SHOWN = 20  # forecast lines printed before "... (--json for all)"
PRESET_NOTE = (
    "Table C.1 publishes point coefficients without their uncertainty, so a preset forecast has "
    "no interval; fit your own table (`osl fit --out`) and use `osl predict --fit` for intervals"
)


def forecast_lines(rows: list[dict], target: str, level: float, shown: int = SHOWN) -> list[str]:
    """`model: target 61.23  90% interval [55.10, 67.02]; actual 64.00, error 2.77` (points)."""
    out = []
    for r in rows[:shown]:
        if r.get("y_pred") is None:
            out.append(f"  {r['model']}: no forecast (missing scores)")
            continue
        line = f"  {r['model']}: {target} {r['y_pred']:.2f}"
        if r.get("interval"):
            lo, hi = r["interval"]
            line += f"  {100 * level:g}% interval [{lo:.2f}, {hi:.2f}]"
        if r.get("y") is not None:
            line += f"; actual {r['y']:.2f}, error {r['abs_error']:.2f}" + (
                "" if r.get("covered") else " (outside)"
            )
        out.append(line)
    if len(rows) > shown:
        out.append(f"  ... {len(rows) - shown} more (--json for every forecast)")
    return out


def check_line(check: dict | None, label: str = "held-out check") -> list[str]:
    """The held-out check (`newmodels.heldout_check`) in one line, or none without one."""
    if not check:
        return []
    return [
        f"{label}: {check['n']} model(s) with the truth; MAE {check['mae']:.2f} points; "
        f"{100 * check['coverage']:.0f}% inside their {100 * check['level']:g}% "
        f"interval (median width {check['median_width']:.2f} points)"
    ]


def fit_answer(est, table: pd.DataFrame, level: float, new_models=()) -> Answer:
    """A fitted `ObservationalScalingLaw`: its result's contract and summary, the held-out
    models' forecasts scored against their truth, and forecasts of `new_models` (rows of
    `table` without the target)."""
    res = est.result_
    contract, text = res.contract(level), res.summary()
    shown = contract.get("forecasts") or []
    check = heldout_check(shown, {r["model"]: r["y"] for r in shown}, level)
    contract["heldout_check"] = check
    if shown and est.holdout == "list":
        lines = forecast_lines(shown, res.target, level)
        text += "\nforecasts of the held-out models:\n" + "\n".join(lines)
    text += "".join("\n" + t for t in check_line(check))
    if new_models:
        rows = forecast_without_target(est, table[table[MODEL].isin(new_models)], level)
        contract["new_models"] = rows
        text += "\nforecasts of models without the target:\n" + "\n".join(
            f"  {r['model']}: {r['y_pred']:.2f}  {100 * level:g}% interval "
            f"[{r['interval'][0]:.2f}, {r['interval'][1]:.2f}]"
            for r in rows
        )
    return Answer(contract, text)


def saved_fit_answer(
    res, table: pd.DataFrame, level: float, scale: float = 1.0, score_unit: str = "auto"
) -> Answer:
    """A saved `OSLResult` forecasting the models of `table` (scores fractions or points per
    `score_unit`), each with its interval, scored in points against the table's own target
    (divided by `scale`, then read in its unit) where it has one."""
    rows = forecast_saved_fit(res, table, level, score_unit)
    truth = {}
    if res.target in table.columns:
        t = table[[MODEL]].copy()
        y = table[res.target]
        t[res.target] = scale_target(y, scale, res.target) if scale != 1.0 else y
        s = column_scale(t, res.target, score_unit, "new models")
        y = pd.to_numeric(t[res.target], errors="coerce").to_numpy(float) * s
        truth = dict(zip(table[MODEL].astype(str), y))
    check = heldout_check(rows, truth, level)
    fields = {"target": res.target, "x": res.x, "level": level, "predictions": rows}
    fields["heldout_check"] = check
    text = "\n".join(
        [s[2:] for s in forecast_lines(rows, res.target, level, len(rows))]
        + check_line(check, f"against the table's {res.target}")
    )
    return Answer(fields, text)


def predictions_file_text(rows: list[dict], suffix: str) -> str:
    """Forecast rows (`saved_fit_answer`'s "predictions") as a file: one row per model, the
    interval as `lower` and `upper` columns; CSV for ".csv", else JSON records."""
    flat = pd.DataFrame(
        [
            {
                **{k: v for k, v in r.items() if k != "interval"},
                "lower": (r.get("interval") or [None, None])[0],
                "upper": (r.get("interval") or [None, None])[1],
            }
            for r in rows
        ]
    )
    if suffix.lower() == ".csv":
        return flat.to_csv(index=False)
    return flat.to_json(orient="records")


def preset_answer(law, table: pd.DataFrame, level: float = 0.9, score_unit: str = "auto") -> Answer:
    """A Table C.1 law's point forecasts (points) of the models of `table` (scores fractions or
    points per `score_unit`; no interval: the table publishes none, so a `level` other than the
    default is refused)."""
    if level != 0.9:
        raise InputError(
            "--level applies to --fit; a --preset (Table C.1) publishes no "
            "uncertainty, so its forecasts have no interval"
        )
    df = law.predictions(table, score_unit)
    fields = {"preset": law.name, "task": law.task, "source": law.source, "h": law.h}
    fields["predictions"] = [
        {
            "model": m,
            "logit": float(x) if np.isfinite(x) else None,
            "y_pred": float(y) if np.isfinite(y) else None,
            "interval": None,
        }
        for m, x, y in zip(df[MODEL], df["logit"], df["y_pred"])
    ]
    fields["interval_note"] = PRESET_NOTE
    text = law.summary() + "\n" + df.to_string(index=False, float_format=lambda v: f"{v:.4f}")
    return Answer(fields, text, (PRESET_NOTE,))


def pca_answer(
    table: pd.DataFrame, n_components: int, metrics=None, score_unit: str = "auto"
) -> Answer:
    """The capability space of `table` (Sec. 3.2): explained variance, loadings, each model's
    PC scores and, per family with 3+ models, the R^2 of PC-1 against log10 FLOPs. The PCA
    runs on fractions (scores read per `score_unit`), so loadings and PC scores are the
    paper's; the benchmark means are reported in points."""
    metrics = metrics or default_metrics(table)
    table = to_fractions(table, metrics, score_unit)[0]
    check_metrics(table, metrics)
    space = CapabilitySpace(n_components).fit(table, metrics)
    S = space.transform(table)
    fits = family_fits(table, S)
    pc1 = fits[fits["pc"] == "PC-1"] if len(fits) else fits
    r2 = {r[FAMILY]: r["r2"] for _, r in pc1.iterrows()} if len(pc1) else {}
    fields = {
        "metrics": metrics,
        "explained_variance": space.explained_variance_ratio_,
        "loadings": space.components_,
        "mean": 100.0 * np.asarray(space.mean_, float),
        "pc1_flops_r2": r2,
        "scores": {m: row for m, row in zip(table[MODEL], S.tolist())},
    }
    ev = space.explained_variance_ratio_
    lines = [
        f"Capability space (Ruan et al. 2024, Sec. 3.2): {len(table)} models, {len(metrics)} "
        "benchmarks",
        "explained variance: "
        + ", ".join(f"PC-{i + 1} {v:.3f}" for i, v in enumerate(ev))
        + f" (top-{len(ev)} {ev.sum():.3f})",
        space.loadings().round(3).to_string(),
    ]
    if r2:
        lines.append("PC-1 vs log10 FLOPs R^2 per family (3+ models):")
        lines += [f"  {fam:<20}{v:.3f}" for fam, v in r2.items()]
    return Answer(fields, "\n".join(lines))


def selection_answer(selector, budget: int, n_random: int = 0, seed: int = 0) -> Answer:
    """The V-optimal subset of model families within `budget` models (Eq. 9) of a fitted
    `SubsetSelector`, beside the objective of `n_random` random subsets (the baseline)."""
    best = selector.search(budget)
    randoms = selector.random_baseline(budget, n_random, seed) if n_random else []
    fields = {"families": best.families, "models": best.models, "objective": best.objective}
    if randoms:
        fields["random"] = [
            {"families": r.families, "models": r.models, "objective": r.objective} for r in randoms
        ]
    tab = selector.table_
    lines = [
        f"V-optimal selection (Eq. 9), budget {budget} models, K={selector.n_components}",
        f"objective Tr(S^T S (S_M^T S_M)^-1): {best.objective:.4f}",
        f"subsets searched: {best.n_candidates}",
    ]
    lines += [
        f"  {fam}: {', '.join(tab.loc[tab[FAMILY] == fam, MODEL].tolist())}"
        for fam in best.families
    ]
    if randoms:
        objs = np.array([r.objective for r in randoms])
        lines.append(
            f"random baseline ({len(randoms)} subsets): median objective {np.median(objs):.4f}"
        )
    return Answer(fields, "\n".join(lines))
