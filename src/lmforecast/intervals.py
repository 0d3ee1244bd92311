"""Scoring forecast intervals on held-out data: coverage, width and calibration tables.

A *forecasts table* has one row per forecast and nominal level, with columns `level`, `y` (the
observed value), `y_pred`, `lower`, `upper` plus any grouping columns (method, target, ...).
The backtests of the downstream methods (`osl.holdout.holdout_forecasts`,
`flp.calibration.*_forecasts`, `salience.calibration.zoo_forecasts`) return such tables.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

DEFAULT_LEVELS = (0.5, 0.8, 0.9, 0.95)
FORECAST_COLUMNS = ("level", "y", "y_pred", "lower", "upper")


def _inside(f: pd.DataFrame) -> pd.Series:
    """y inside a FINITE [lower, upper]: a non-finite interval is a failed forecast (a miss)."""
    lo, hi = f["lower"].to_numpy(float), f["upper"].to_numpy(float)
    fin = np.isfinite(lo) & np.isfinite(hi)
    return pd.Series(
        fin & (f["y"].to_numpy(float) >= lo) & (f["y"].to_numpy(float) <= hi), index=f.index
    )


def summarise_intervals(forecasts: pd.DataFrame, by: Sequence[str], level: float) -> pd.DataFrame:
    """Per group of `by`: n, coverage (share of y inside a finite [lower, upper]; a non-finite
    interval is a miss), non-finite count, median finite width and mean absolute error of the
    forecasts at nominal `level`."""
    f = forecasts[np.isclose(forecasts["level"].to_numpy(float), level)].copy()
    f["inside"] = _inside(f)
    f["nonfinite"] = ~(np.isfinite(f["lower"]) & np.isfinite(f["upper"]))
    f["width"] = (f["upper"] - f["lower"]).where(~f["nonfinite"])
    f["abs_error"] = (f["y_pred"] - f["y"]).abs()
    g = f.groupby(list(by), sort=False)
    out = pd.DataFrame(
        {
            "n": g.size(),
            "coverage": g["inside"].mean(),
            "nonfinite": g["nonfinite"].sum(),
            "median_width": g["width"].median(),
            "mae": g["abs_error"].mean(),
        }
    )
    return out.reset_index()


def calibration_curve(forecasts: pd.DataFrame, by: Sequence[str] = ("method",)) -> pd.DataFrame:
    """Empirical coverage at every nominal level of a forecasts table (for a calibration plot)."""
    inside = _inside(forecasts)
    g = forecasts.assign(inside=inside).groupby([*by, "level"], sort=False)
    return pd.DataFrame({"n": g.size(), "coverage": g["inside"].mean()}).reset_index()


__all__ = ["DEFAULT_LEVELS", "FORECAST_COLUMNS", "calibration_curve", "summarise_intervals"]
