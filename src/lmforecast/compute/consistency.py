"""Derived answers that contradict themselves are refused, not printed.

A percentile-bootstrap interval (Efron & Tibshirani 1993, ch. 13) of a parameter, of N*, D* or
L* (Hoffmann et al. 2022, Eq. 4) can exclude its own estimate when the refits split between
two optima, and can span many decades when the runs do not pin the quantity. Either way the
runs do not identify it: `interval_problem` names why, and callers show "not identified by these
runs" (null in JSON) with that reason instead of the interval. `split_problem` says when the runs
cannot identify the compute-optimal N/D split at all: their tokens per parameter barely vary, so
nothing separates the N term from the D term along an isoFLOP (docs/supervised.md).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

MAX_DECADES = 3.0  # an interval of a positive quantity wider than 10^3 says nothing usable
MIN_RATIO_DECADES = 0.5  # runs whose D/N spans less (about 3x) do not identify the N/D split
NOT_IDENTIFIED = "not identified by these runs"


def interval_problem(
    point: float,
    lo: float,
    hi: float,
    *,
    positive: bool = True,
    valid: tuple[float, float] | None = None,
) -> str | None:
    """Why [lo, hi] cannot stand as the interval of `point`, or None when it can: not finite,
    excluding the point, spanning more than `MAX_DECADES` decades (positive quantities), or
    leaving the `valid` range (an exponent's meaningful range)."""
    point, lo, hi = float(point), float(lo), float(hi)
    shown = f"[{lo:.4g}, {hi:.4g}]"
    if not (math.isfinite(point) and math.isfinite(lo) and math.isfinite(hi)):
        return f"its interval {shown} is not finite"
    tol = 1e-9 * max(abs(point), 1e-300)
    if not lo - tol <= point <= hi + tol:
        return f"its interval {shown} excludes the estimate {point:.4g}"
    if positive and lo > 0 and math.log10(hi / lo) > MAX_DECADES:
        return f"its interval {shown} spans {math.log10(hi / lo):.1f} decades"
    if positive and lo <= 0:
        return f"its interval {shown} reaches zero"
    if valid is not None and (lo < valid[0] or hi > valid[1]):
        return f"its interval {shown} leaves the meaningful range {valid[0]:g} to {valid[1]:g}"
    return None


def parameter_problems(params: Mapping, ci: Mapping, exp_names=()) -> dict[str, str]:
    """{name: why} for the parameters whose interval in `ci` cannot stand (`interval_problem`);
    `exp_names` are the positive (log-fitted) coefficients, judged also by their span."""
    out = {}
    for name, pair in (ci or {}).items():
        if name not in params or pair is None:
            continue
        why = interval_problem(params[name], pair[0], pair[1], positive=name in exp_names)
        if why:
            out[name] = why
    return out


def checked_rows(point, lo, hi, label: str) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Budget by budget: lo, hi with NaN where `interval_problem` refuses the interval, and the
    reasons (each naming `label` and its budget's index where there are several)."""
    p, lo, hi = (np.atleast_1d(np.asarray(v, float)).astype(float) for v in (point, lo, hi))
    lo, hi, notes = lo.copy(), hi.copy(), []
    for i in range(p.size):
        why = interval_problem(p[i], lo[i], hi[i])
        if why:
            lo[i] = hi[i] = np.nan
            where = f" at budget {i + 1}" if p.size > 1 else ""
            notes.append(f"{label}{where}: {NOT_IDENTIFIED}: {why}")
    return lo, hi, notes


def ratio_range(N, D) -> list[float]:
    """[smallest, largest] tokens per parameter D/N of the runs."""
    r = np.asarray(D, float) / np.asarray(N, float)
    return [float(np.min(r)), float(np.max(r))]


def split_problem(meta: Mapping) -> str | None:
    """Why the fit's runs cannot identify the compute-optimal N/D split, or None: their D/N
    (stored at fit time in the interval calibration, or the stack's) spans less than
    `MIN_RATIO_DECADES` decades. None when the fit does not record it (presets)."""
    cal = meta.get("intervals") or {}
    rr = cal.get("ratio_range") or (meta.get("stack") or {}).get("ratio_range")
    if not rr:
        return None
    lo, hi = float(rr[0]), float(rr[1])
    if math.log10(hi / lo) >= MIN_RATIO_DECADES:
        return None
    at = f"D/N = {lo:.3g}" if hi / lo < 1.01 else f"D/N from {lo:.3g} to {hi:.3g}"
    return (
        f"the compute-optimal N/D split is {NOT_IDENTIFIED}: they all train at {at} (less than "
        f"{10**MIN_RATIO_DECADES:.1f}x apart), so nothing separates the N term from the D term "
        "along an isoFLOP; add runs at other tokens per parameter, or forecast a chosen N at "
        "this budget with `supervised predict --params N --flops C`"
    )


def mark_summary(text: str, not_identified: Mapping) -> str:
    """A fit summary's parameter table with the refused intervals shown as not identified (the
    reasons follow in its "not identified" warning line)."""
    out = []
    for line in text.splitlines():
        name = line[:12].strip()
        if name in not_identified and len(line) > 28 and line[:12] == f"{name:<12}":
            line = line[:28] + f"{NOT_IDENTIFIED:>32}"
        out.append(line)
    return "\n".join(out)
