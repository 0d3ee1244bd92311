"""Forecasting models that are not in the fit: the purpose of an observational scaling law.

Two paths, both giving the App. C.8 prediction interval of `OSLResult`:

- `forecast_without_target(est, rows, level)`: models in the fitted table that lack the target
  (``osl fit --heldout MODEL``). Their PCs come from the fitted capability space, which imputes
  missing benchmark cells from the training models exactly as the fit does (App. B.3).
- `forecast_saved_fit(res, table, level)`: new rows against a saved `OSLResult`
  (``osl predict --fit``). PCs are S = gamma (B - mu) from the saved mean and loadings (Eq. 5).
  Missing benchmark cells are imputed with the saved App. B.3 imputation state
  (`OSLResult.imputation`), exactly as the fit imputes.

Benchmark scores may be fractions or points (`data.to_fractions`); forecasts, intervals and
errors are in points.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from ..errors import InputError
from ..laws.sigmoid import ObservationalSigmoid
from ..store import Checker
from ..uncertainty.coverage import truth_summary
from .capability import Imputer
from .checks import range_warning
from .data import (
    FLOPS,
    MODEL,
    SIZE,
    check_metrics,
    check_observed,
    to_fractions,
    warn_imputed,
)


def models_without_target(table: pd.DataFrame, target: str, names: list[str]) -> list[str]:
    """The named models that are in `table` but have no `target` score (to forecast); names
    are matched ignoring case (the table's spelling is returned)."""
    if target not in table.columns:
        return []
    folded = {str(m).casefold(): str(m) for m in table[MODEL]}
    names = [folded.get(str(n).strip().casefold(), n) for n in names]
    y = table.set_index(MODEL)[target]
    return [n for n in names if n in y.index and not np.isfinite(float(y.loc[[n]].iloc[0]))]


def _rows(res, models, X: np.ndarray, level: float) -> list[dict]:
    """Eq. 6 forecasts and prediction intervals (points) at predictors X (warned when
    outside the fit's capability range: `checks.range_warning`)."""
    range_warning(res, models, X, stacklevel=4)
    law = ObservationalSigmoid(X.shape[1])
    cols = {f"x{i + 1}": X[:, i] for i in range(X.shape[1])}
    y = res.to_original(law.predict(np.asarray(res.fit.theta), **cols))
    lo, hi = res.predict_interval(X, level)
    return [
        {"model": m, "y_pred": float(v), "interval": [float(a), float(b)]}
        for m, v, a, b in zip(models, y, lo, hi, strict=True)
    ]


def _log_column(res, rows: pd.DataFrame) -> np.ndarray:
    return np.log10(rows[FLOPS if res.x == "flops" else SIZE].to_numpy(float))[:, None]


def forecast_without_target(est, rows: pd.DataFrame, level: float) -> list[dict]:
    """Forecasts of `rows` (models of the fitted table without the target) by a fitted
    `ObservationalScalingLaw`, missing cells imputed by its capability space; their scores are
    read in the units the fit read its table's columns in (`est.scales_`)."""
    res = est.result_
    if res.x == "pcs":
        rows = rows.copy()
        for c, s in getattr(est, "scales_", {}).items():
            rows[c] = rows[c].astype(float) / (100.0 / s)
    X = est.space_.transform(rows) if res.x == "pcs" else _log_column(res, rows)
    return _rows(res, list(rows[MODEL]), X, level)


def forecast_saved_fit(
    res, table: pd.DataFrame, level: float, score_unit: str = "auto"
) -> list[dict]:
    """Forecasts (points) of every row of `table` by a saved `OSLResult`, its benchmark scores
    fractions or points per `score_unit` (`data.to_fractions`); rows missing a column the fit
    needs get ``y_pred`` and ``interval`` None (warned)."""
    if res.x == "pcs":
        table = to_fractions(table, res.metrics, score_unit, "new models")[0]
        check_metrics(table, res.metrics, "new models", True)
        check_observed(table, res.metrics, "new models")
        warn_imputed(table, res.metrics, stacklevel=3)  # imputed, and said so per model
        imp = Imputer.from_dict(res.imputation, len(res.metrics), Checker("saved OSL fit"))
        B = imp.apply(table[res.metrics].to_numpy(float))
        ok = np.isfinite(B).all(axis=1)
        X = (B[ok] - np.asarray(res.mean, float)) @ np.asarray(res.components, float).T
        what = "a benchmark score the fit uses"
    else:
        raw = table[FLOPS if res.x == "flops" else SIZE].to_numpy(float)
        ok = np.isfinite(raw) & (raw > 0)
        X = np.log10(raw[ok])[:, None]
        what = "a positive " + (FLOPS if res.x == "flops" else SIZE)
    if not ok.any():
        raise InputError(f"new models: no model has every column the fit needs ({what})")
    names = list(table[MODEL])
    if not ok.all():
        miss = [n for n, good in zip(names, ok, strict=True) if not good]
        warnings.warn(
            f"{len(miss)} model(s) lack {what} and get no forecast: {', '.join(miss[:3])}"
            + (" ..." if len(miss) > 3 else ""),
            stacklevel=2,
        )
    done = iter(_rows(res, [n for n, g in zip(names, ok, strict=True) if g], X, level))
    return [
        next(done) if good else {"model": n, "y_pred": None, "interval": None}
        for n, good in zip(names, ok, strict=True)
    ]


def heldout_check(rows: list[dict], truth: dict, level: float) -> dict | None:
    """Forecast rows (`model`, `y_pred`, `interval`) scored against `truth` (model -> observed
    score, in the rows' unit: points; models without one are left out): each scored row gets
    `y`, `abs_error` and `covered`, and the summary (n, MAE, coverage of the `level`
    intervals, median width; `uncertainty.coverage.truth_summary`) is returned, None when no
    row has the truth."""
    if not truth:  # nothing to score: the rows are left as they are
        return None
    for r in rows:
        y = truth.get(r["model"])
        ok = y is not None and np.isfinite(y) and r["y_pred"] is not None
        r["y"] = float(y) if ok else None
        r["abs_error"] = abs(r["y_pred"] - float(y)) if ok else None
        iv = r.get("interval")
        r["covered"] = bool(iv[0] <= y <= iv[1]) if ok and iv else None if not ok else False
    f = pd.DataFrame(
        {
            "y": [np.nan if r["y"] is None else r["y"] for r in rows],
            "y_pred": [np.nan if r["y_pred"] is None else r["y_pred"] for r in rows],
            "lower": [r["interval"][0] if r.get("interval") else np.nan for r in rows],
            "upper": [r["interval"][1] if r.get("interval") else np.nan for r in rows],
        }
    )
    s = truth_summary(f, level) if len(f) else pd.DataFrame()
    if s.empty:
        return None
    d = s.iloc[0]
    return {
        "n": int(d["n"]),
        "mae": float(d["mae"]),
        "coverage": float(d["coverage"]),
        "median_width": float(d["median_width"]),
        "level": float(level),
    }
