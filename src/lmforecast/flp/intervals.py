"""Prediction intervals that never claim certainty (docs/flp.md, "Intervals at the bounds"):
a two-sided interval whose ends both clip to the same score bound (every central bootstrap
quantile beyond 0 or 100 points) becomes the one-sided `level` interval from that bound, and
NaN (printed as null with a note) when even that has no width."""

from __future__ import annotations

import numpy as np

BOUNDS = (0.0, 100.0)  # the score range in points (flp.model.SCORE_RANGE)
NOT_EMERGED_NOTE = (
    "forecast below random + threshold (not emerged): FLP does not model that phase, so the "
    "interval is [0, max(upper, random + threshold)] points, not a bootstrap interval"
)
AT_BOUND_NOTE = (
    "the interval reaches a score bound (0 or 100 points): where the central interval "
    "collapsed onto it, this is the one-sided level interval from the bound (null where "
    "even that has no width: at least `level` of the bootstrap draws lie beyond the bound)"
)


def widen_at_bounds(lo, hi, lo1, hi1, bounds=BOUNDS):
    """Two-sided (lo, hi) with zero width at a bound -> one-sided: collapsed at the top, the
    lower end is `lo1` (the 1 - level quantile, clipped) and the top the bound; collapsed at
    the bottom, the upper end is `hi1` (the level quantile). Still zero width: NaN."""
    lo, hi = np.array(lo, float), np.array(hi, float)
    lo1, hi1 = np.asarray(lo1, float), np.asarray(hi1, float)
    top = (lo >= bounds[1]) & (hi >= bounds[1])
    bottom = (lo <= bounds[0]) & (hi <= bounds[0])
    lo[top] = np.clip(lo1, *bounds)[top]
    hi[bottom] = np.clip(hi1, *bounds)[bottom]
    dead = (top | bottom) & ~(hi > lo)
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
