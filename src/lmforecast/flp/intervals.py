"""Prediction intervals that never claim certainty (docs/flp.md, "Intervals at the bounds"):
a two-sided interval whose ends both clip to the same score bound (every central bootstrap
quantile beyond 0 or 100 points) is undefined, NaN (printed as null with a note): the fit cannot
say how far inside the range the score falls. (A one-sided interval from the bound cannot help:
if the (1 - level)/2 quantile lies beyond the bound, so does the 1 - level one.)"""

from __future__ import annotations

import numpy as np

BOUNDS = (0.0, 100.0)  # the score range in points (flp.model.SCORE_RANGE)
NOT_EMERGED_NOTE = (
    "forecast below random + threshold (not emerged): FLP does not model that phase, so the "
    "interval is [0, max(upper, random + threshold)] points, not a bootstrap interval"
)
AT_BOUND_NOTE = (
    "the interval reaches a score bound (0 or 100 points); where the central bootstrap "
    "interval lies entirely beyond it the interval is null: the fit cannot say how far inside "
    "the range the score falls"
)


def null_at_bounds(lo, hi, bounds=BOUNDS):
    """Two-sided (lo, hi) with zero width at a score bound -> NaN (undefined, not certain)."""
    lo, hi = np.array(lo, float), np.array(hi, float)
    dead = ((lo >= bounds[1]) & (hi >= bounds[1])) | ((lo <= bounds[0]) & (hi <= bounds[0]))
    lo[dead], hi[dead] = np.nan, np.nan
    return lo, hi


def not_emerged_interval(P, lo, hi, floor: float, bounds=BOUNDS):
    """Where the raw forecast P is below random + threshold (`floor`), the model would not
    have emerged and FLP's law says nothing there: the interval is [0, max(hi, floor)]."""
    P = np.atleast_1d(np.asarray(P, float))
    lo, hi = np.array(lo, float), np.array(hi, float)
    low = P < floor
    lo[low] = bounds[0]
    hi[low] = np.maximum(np.nan_to_num(hi[low], nan=floor), floor)
    return lo, hi


def interval_or_none(lo: float, hi: float) -> list | None:
    """[lo, hi] for JSON, None where the interval is undefined (NaN)."""
    return None if not (np.isfinite(lo) and np.isfinite(hi)) else [float(lo), float(hi)]
