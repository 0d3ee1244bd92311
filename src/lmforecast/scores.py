"""Benchmark scores in one unit: percentage points (0-100), in and out of every estimator.

Every estimator that forecasts a benchmark score (`FLP`, `FLPM`, `DownstreamForecaster`,
`ObservationalScalingLaw`, `CapabilitySalience`) takes scores and chance levels in points and
returns forecasts, intervals and errors in points, so forecasts from different methods compare
directly. Tables written in fractions (0-1), as the lm-evaluation-harness and Ruan et al.'s
benchmark tables write them, are converted at the door: `to_points(values, unit)`, with
``unit="auto"`` reading a column whose finite values all lie in [0, 1] as fractions. A method
whose equations are written in fractions (Ruan et al.'s Eq. 6, the salience paper's Eq. 2) runs
them on ``fraction(points)`` inside and converts its answers back with ``points(fraction)``.
"""

from __future__ import annotations

import numpy as np

from .errors import InputError

#: The package's score unit, and the units a table may declare (``auto``: read off the values).
UNIT = "points"
UNITS = ("auto", "points", "fraction")


def check_unit(unit: str, what: str = "score_unit") -> str:
    """`unit` if it is one of `UNITS`; one InputError line naming them otherwise."""
    if unit not in UNITS:
        raise InputError(f"{what} must be one of {', '.join(UNITS)}, got {unit!r}")
    return unit


def scale_of(values, unit: str = "auto", what: str = "scores") -> float:
    """The factor that turns `values` into points: 100 for fractions, 1 for points.

    ``unit="auto"`` reads fractions when every finite value lies in [0, 1] (the harness's
    fraction metrics always do) and points otherwise; a column of points whose values are all
    at most 1 must say ``unit="points"``. Values outside the unit's range ([0, 1] for fractions,
    [0, 100] for points) are refused naming `what` and the value.
    """
    check_unit(unit)
    v = np.asarray(values, dtype=float).ravel()
    v = v[np.isfinite(v)]
    if v.size == 0:
        return 1.0 if unit == "points" else 100.0
    lo, hi = float(v.min()), float(v.max())
    if unit == "auto":
        unit = "fraction" if lo >= 0.0 and hi <= 1.0 else "points"
    top = 1.0 if unit == "fraction" else 100.0
    if lo < 0.0 or hi > top:
        bad = lo if lo < 0.0 else hi
        raise InputError(
            f"{what}: value {bad:g} is outside [0, {top:g}] ({unit}; scores are fractions in "
            "[0, 1] or points in [0, 100])"
        )
    return 100.0 if unit == "fraction" else 1.0


def to_points(values, unit: str = "auto", what: str = "scores") -> np.ndarray:
    """`values` (an array, fractions or points per `unit`) as points: see `scale_of`."""
    return np.asarray(values, dtype=float) * scale_of(values, unit, what)


def fraction(points):
    """Points -> fraction (a float for a float, an array for an array)."""
    return np.asarray(points, dtype=float) / 100.0 if np.ndim(points) else float(points) / 100.0


def points(fraction_):
    """Fraction -> points (a float for a float, an array for an array)."""
    return (
        np.asarray(fraction_, dtype=float) * 100.0
        if np.ndim(fraction_)
        else float(fraction_) * 100.0
    )
