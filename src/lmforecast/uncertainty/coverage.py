"""Scoring forecast intervals on held-out data: coverage, width and calibration tables (the
empirical coverage of nominal central intervals, as in a reliability diagram).

A *forecasts table* has one row per forecast and nominal level, with columns `level`, `y` (the
observed value), `y_pred`, `lower`, `upper` plus any grouping columns (method, target, ...).
The backtests of the downstream methods (`osl.holdout.holdout_forecasts`,
`flp.calibration.*_forecasts`, `salience.calibration.zoo_forecasts`) return such tables.

Optional columns `range_lower` / `range_upper` give the metric's whole range (FLP scores: 0 and
100 points). An interval reaching both ends of that range says nothing (`whole_range`): like a
non-finite interval it is a failed forecast, counted and shown, never a covered one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pandas is loaded by the scoring functions that use it, not at import
    import pandas as pd

DEFAULT_LEVELS = (0.5, 0.8, 0.9, 0.95)


FORECAST_COLUMNS = ("level", "y", "y_pred", "lower", "upper")
RANGE_COLUMNS = ("range_lower", "range_upper")


def whole_range(f: pd.DataFrame) -> np.ndarray:
    """Intervals reaching both ends of the metric's range (`range_lower`/`range_upper` columns;
    all False where the table has none): uninformative, so failed forecasts."""
    if not set(RANGE_COLUMNS) <= set(f.columns):
        return np.zeros(len(f), bool)
    lo, hi = f["lower"].to_numpy(float), f["upper"].to_numpy(float)
    r_lo, r_hi = f["range_lower"].to_numpy(float), f["range_upper"].to_numpy(float)
    return np.isfinite(lo) & np.isfinite(hi) & (lo <= r_lo) & (hi >= r_hi)


def _inside(f: pd.DataFrame) -> pd.Series:
    """y inside a FINITE, informative [lower, upper]: a non-finite interval or one spanning the
    metric's whole range is a failed forecast (a miss)."""
    import pandas as pd

    lo, hi = f["lower"].to_numpy(float), f["upper"].to_numpy(float)
    ok = np.isfinite(lo) & np.isfinite(hi) & ~whole_range(f)
    y = f["y"].to_numpy(float)
    return pd.Series(ok & (y >= lo) & (y <= hi), index=f.index)


def summarise_intervals(forecasts: pd.DataFrame, by: Sequence[str], level: float) -> pd.DataFrame:
    """Per group of `by`: n, coverage (share of y inside a finite, informative [lower, upper]; a
    non-finite interval or one spanning the metric's whole range is a miss), the counts of both
    (`nonfinite`, `whole_range`), median finite width and mean absolute error of the forecasts at
    nominal `level`."""
    import pandas as pd

    f = forecasts[np.isclose(forecasts["level"].to_numpy(float), level)].copy()
    f["inside"] = _inside(f)
    f["nonfinite"] = ~(np.isfinite(f["lower"]) & np.isfinite(f["upper"]))
    f["whole_range"] = whole_range(f)
    f["width"] = (f["upper"] - f["lower"]).where(~f["nonfinite"])
    f["abs_error"] = (f["y_pred"] - f["y"]).abs()
    g = f.groupby(list(by), sort=False)
    out = pd.DataFrame(
        {
            "n": g.size(),
            "coverage": g["inside"].mean(),
            "nonfinite": g["nonfinite"].sum(),
            "whole_range": g["whole_range"].sum(),
            "median_width": g["width"].median(),
            "mae": g["abs_error"].mean(),
        }
    )
    return out.reset_index()


def calibration_curve(forecasts: pd.DataFrame, by: Sequence[str] = ("method",)) -> pd.DataFrame:
    """Empirical coverage at every nominal level of a forecasts table (for a calibration plot);
    non-finite and whole-range intervals count as misses, as in `summarise_intervals`."""
    import pandas as pd

    inside = _inside(forecasts)
    g = forecasts.assign(inside=inside).groupby([*by, "level"], sort=False)
    return pd.DataFrame({"n": g.size(), "coverage": g["inside"].mean()}).reset_index()


def truth_summary(forecasts: pd.DataFrame, level: float, by: Sequence[str] = ()) -> pd.DataFrame:
    """A batch of forecasts scored against the truth where the table gives it: the rows with a
    finite `y` (the others are forecasts only) summarised as `summarise_intervals` does (n,
    coverage of the `level` intervals, a missing interval counted as a miss, median width,
    MAE); one row per group of `by` and a last row over every scored forecast (its `by`
    columns 'all'); empty when no row holds the truth."""
    import pandas as pd

    y = pd.to_numeric(forecasts["y"], errors="coerce").to_numpy(float)
    f = forecasts[np.isfinite(y)].assign(level=float(level), _all="all")
    for c in ("y", "y_pred", "lower", "upper"):
        f[c] = pd.to_numeric(f[c], errors="coerce").astype(float)
    cols = [*by, "n", "coverage", "nonfinite", "whole_range", "median_width", "mae"]
    if f.empty:
        return pd.DataFrame(columns=cols)
    overall = summarise_intervals(f, ["_all"], level).drop(columns="_all")
    if not by:
        return overall[cols].reset_index(drop=True)
    per = summarise_intervals(f, list(by), level)
    overall = overall.assign(**{c: "all" for c in by})
    return pd.concat([per, overall], ignore_index=True)[cols]


__all__ = [
    "DEFAULT_LEVELS",
    "FORECAST_COLUMNS",
    "RANGE_COLUMNS",
    "calibration_curve",
    "summarise_intervals",
    "truth_summary",
    "whole_range",
]
